package claim

import (
	"context"
	"errors"
)

// ErrDiscarded is matched by the error of Discard, whatever it wraps.
var ErrDiscarded = errors.New("claim: discarded")

// DiscardError is the error a handler returns, through Discard, to fail
// its item for good: Work moves the item to the dead letters at once, with
// the reason, without spending its remaining attempts. It is a plain value,
// safe to copy and share.
type DiscardError struct {
	Err error // why; nil for no reason
}

// Error formats as "claim: discarded: " and the reason.
func (e *DiscardError) Error() string {
	if e.Err == nil {
		return ErrDiscarded.Error()
	}
	return ErrDiscarded.Error() + ": " + e.Err.Error()
}

// Unwrap returns ErrDiscarded and the reason, so that errors.Is matches
// both.
func (e *DiscardError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrDiscarded}
	}
	return []error{ErrDiscarded, e.Err}
}

// Discard returns the error a handler returns to dead-letter its item at
// once: for a failure that no retry can mend (a malformed payload, a
// record that no longer exists). The item's history records err's text as
// the reason; err may be nil. Work finds it with errors.As, so it may be
// wrapped.
func Discard(err error) error { return &DiscardError{Err: err} }

// bury moves the claimed item c to the dead letters with reason, whatever
// attempts it has left.
func (b *Broker) bury(ctx context.Context, c Claim, reason string) error {
	err := b.store.Settle(ctx, Settlement{Ref: c.Ref, How: SettleDead, Reason: reason})
	return b.observeSettled(c, EventDeadLettered, err)
}
