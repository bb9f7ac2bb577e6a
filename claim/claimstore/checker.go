package claimstore

import (
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/claimkit"
	"github.com/leasehold/lease/internal/inputcheck"
)

// Checker checks the input of one store. Its zero limits are none, so
// Checker{Package: "mystore"} applies package claim's rules alone, as
// claim.Memory does. A Checker is a plain value, safe to copy and to use
// from several goroutines.
type Checker struct {
	// Package names the store's package ("postgres"): the Package of every
	// error, which its message starts with.
	Package string
	// MaxNameLen is the longest queue, key, kind and owner the store
	// holds, in bytes; 0 is no limit.
	MaxNameLen int
	// TextOnly refuses a name, kind, tag or reason that is not valid UTF-8
	// or holds a NUL byte: what a text column cannot keep as given.
	TextOnly bool
	// MaxAttempts is the largest NewItem.MaxAttempts the store holds (say
	// math.MaxInt32 for a 32-bit column); 0 is no limit.
	MaxAttempts int
	// MaxID is the largest item ID and claim token the store issues (say
	// math.MaxInt64 for a bigint column); 0 is no limit. A Ref or an ID
	// above it is refused as naming nothing.
	MaxID uint64
}

func (c Checker) kit() claimkit.Checker {
	return claimkit.Checker{
		Limits:      claimkit.Limits{MaxPriority: claim.MaxPriority, MaxTimeout: claim.MaxTimeout, MaxTags: claim.MaxTags, MaxTagLen: claim.MaxTagLen, MaxState: int(claim.Cancelled)},
		Names:       inputcheck.Names{Package: c.Package, MaxNameLen: c.MaxNameLen, TextOnly: c.TextOnly},
		MaxAttempts: c.MaxAttempts, MaxID: c.MaxID,
	}
}

// Invalid returns the error for bad input in field of op: a *lease.Error
// with code lease.CodeInvalidArgument and c's Package, for the checks a
// store makes of its own.
func (c Checker) Invalid(op, field, detail string) error {
	return c.kit().Invalid(op, field, detail)
}

// Text refuses s, the value of field, when c.TextOnly and s is not valid
// UTF-8 or holds a NUL byte.
func (c Checker) Text(op, field, s string) error {
	return c.kit().Text(op, field, s)
}

// Name refuses s, the value of field, when it is empty, longer than
// c.MaxNameLen, or refused by Text.
func (c Checker) Name(op, field, s string) error {
	return c.kit().Name(op, field, s)
}

// NewItem checks item i of a batch to enqueue (Store.Enqueue), naming its
// fields as the Broker does: "items[2].queue", "items[2].tags[0]". It
// checks the queue, the key when set and the kind as names, the delay,
// attempts, priority, timeout, key states and tags against package
// claim's limits and c's.
func (c Checker) NewItem(op string, i int, it claim.NewItem) error {
	return c.kit().Item(op, "items["+strconv.Itoa(i)+"].", claimkit.Item{
		Queue: it.Queue, Key: it.Key, Kind: it.Kind, Tags: it.Tags, Delay: it.Delay, Timeout: it.Timeout,
		MaxAttempts: it.MaxAttempts, Priority: it.Priority, KeyStates: claimkit.States(it.KeyStates),
	})
}

// NewItems checks every item of a batch to enqueue, as NewItem does, and
// returns the first refusal.
func (c Checker) NewItems(op string, items []claim.NewItem) error {
	for i, it := range items {
		if err := c.NewItem(op, i, it); err != nil {
			return err
		}
	}
	return nil
}

// ClaimRequest checks the request of Store.Claim: its queue and owner
// ("queue", "owner"), Limit ("limit", at least 1) and Lease
// ("lease_duration", positive).
func (c Checker) ClaimRequest(op string, req claim.ClaimRequest) error {
	return c.kit().Claim(op, req.Queue, req.Owner, req.Limit, req.Lease)
}

// Ref checks the claim of Store.Extend ("ref"): it names an item and has a
// token, neither above c.MaxID.
func (c Checker) Ref(op string, r claim.Ref) error {
	return c.kit().Ref(op, uint64(r.Item), r.Token)
}

// Extend checks the arguments of Store.Extend: the claim's Ref, as Ref
// does, and a positive lease duration ("lease_duration").
func (c Checker) Extend(op string, r claim.Ref, d time.Duration) error {
	return c.kit().Extend(op, uint64(r.Item), r.Token, d)
}

// Settlement checks the argument of Store.Settle: its Ref, How ("how", one
// of the four ways to settle), After ("after", not negative) and Reason
// ("reason", text).
func (c Checker) Settlement(op string, s claim.Settlement) error {
	valid := s.How >= claim.SettleComplete && s.How <= claim.SettleSnooze
	return c.kit().Settlement(op, uint64(s.Ref.Item), s.Ref.Token, s.How, valid, s.After, s.Reason)
}

// Item checks the queue and ID of an operation on one item (Cancel,
// RequeueDead, DeleteDead): the queue is a name, the ID ("id") not 0 nor
// above c.MaxID.
func (c Checker) Item(op, queue string, id claim.ItemID) error {
	return c.kit().ItemID(op, queue, uint64(id))
}

// ID checks the ID of Store.Lookup ("id"): not 0 nor above c.MaxID.
func (c Checker) ID(op string, id claim.ItemID) error {
	return c.kit().ID(op, uint64(id))
}

// StaleClaim returns the error for a call on r (Extend, Settle) when r is
// no longer its item's live claim, or for the cause a store passes to
// ClaimRequest.Lost: a *lease.Error with code lease.CodeStaleUse, so that
// it matches lease.ErrStaleUse, c's Package, and r's token as its LeaseID.
// It is not a check of input: a store returns it when its storage says the
// claim is gone.
func (c Checker) StaleClaim(op string, r claim.Ref) *lease.Error {
	return &lease.Error{Package: c.Package, Code: lease.CodeStaleUse, Op: op, LeaseID: lease.ID(r.Token),
		Detail: "item " + strconv.FormatUint(uint64(r.Item), 10) + " is no longer claimed by this claim"}
}

// Query checks the argument of Store.List: its queue, State ("state", 0
// or a state), Limit ("limit", at least 1), and its Kind and Tag filters
// as text.
func (c Checker) Query(op string, q claim.Query) error {
	return c.kit().Query(op, q.Queue, q.State, q.State <= claim.Cancelled, q.Limit, q.Kind, q.Tag)
}

// QueueQuery checks the argument of a claim.QueueLister's Queues: its
// Limit ("limit", at least 1) and After ("after", text).
func (c Checker) QueueQuery(op string, q claim.QueueQuery) error {
	return c.kit().Queues(op, q.Limit, q.After)
}

// Limit checks the limit of a page or a batch, as of a claim.Cleaner's
// Clean ("limit", at least 1).
func (c Checker) Limit(op string, limit int) error {
	return c.kit().Limit(op, limit)
}
