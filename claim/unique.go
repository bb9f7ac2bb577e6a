package claim

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// UniqueOpts makes an enqueue unique, in the spirit of River's unique
// jobs: among the items of one queue and kind, at most one exists with the
// same payload (ByPayload) within the same period (ByPeriod). It works
// through the item's Key, which UniqueKey derives: an Enqueue that finds
// the key held returns the existing item with Item.Duplicate set and adds
// nothing. By default the key is held in every state for as long as the
// item exists: while it waits, runs or is dead, and once completed or
// cancelled for as long as the store's retention keeps it (see Retention),
// then it is free. ByState narrows that to some states. It is a plain
// value, safe to copy and share.
type UniqueOpts struct {
	// ByPayload makes items with different payloads distinct.
	ByPayload bool
	// ByPeriod, when positive, makes items enqueued in different periods
	// distinct: periods of this length counted from the Unix epoch, on
	// the Broker's clock. Not negative.
	ByPeriod time.Duration
	// ByState, when not empty, are the states in which an existing item
	// with the key blocks the enqueue (NewItem.KeyStates): an item in any
	// other state gives its key up and stays as it is, without a Key,
	// and the new item is enqueued. Empty means every state. River's
	// default, for instance, is every state but Cancelled and Dead.
	ByState []State
}

// UniqueKey returns the Key that makes an item of kind with payload,
// enqueued at now, unique as o says. Put it in NewItem.Key for
// EnqueueMany; the Unique option does so for Enqueue.
func UniqueKey(kind string, payload []byte, o UniqueOpts, now time.Time) string {
	key := "unique:" + strconv.Quote(kind)
	if o.ByPayload {
		sum := sha256.Sum256(payload)
		key += ":payload=" + hex.EncodeToString(sum[:])
	}
	if o.ByPeriod > 0 {
		start := now.UnixNano() / int64(o.ByPeriod) * int64(o.ByPeriod)
		key += ":period=" + strconv.FormatInt(start, 10)
	}
	return key
}

// Unique makes Enqueue unique as o says (see UniqueOpts), with the key
// UniqueKey derives on the Broker's clock and o.ByState as the item's
// KeyStates. It replaces the Key option; both
// on one call is bad input naming "key".
func Unique(o UniqueOpts) EnqueueOption {
	return enqueueOptionFunc(func(e enqueueOptions) enqueueOptions { e.unique = &o; return e })
}
