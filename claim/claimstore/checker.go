package claimstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/textcol"
)

// Checker checks the input of one store: the one place a store's input is
// checked, whichever door it came through (a claim.Broker, the console,
// leasectl, a transactional enqueue). Its zero limits are none, so
// Checker{Package: "mystore"} applies the contract's rules alone, as
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

// Invalid returns the error for bad input in field of op: a *lease.Error
// with code lease.CodeInvalidArgument and c's Package, for the checks a
// store makes of its own.
func (c Checker) Invalid(op, field, detail string) error {
	return &lease.Error{Package: c.Package, Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

// Text refuses s, the value of field, when c.TextOnly and s is not valid
// UTF-8 or holds a NUL byte.
func (c Checker) Text(op, field, s string) error {
	if !c.TextOnly {
		return nil
	}
	if why := textcol.Text(s); why != "" {
		return c.Invalid(op, field, why)
	}
	return nil
}

// Name refuses s, the value of field, when it is empty, longer than
// c.MaxNameLen, or refused by Text.
func (c Checker) Name(op, field, s string) error {
	if why := textcol.Name(s, c.MaxNameLen, c.TextOnly); why != "" {
		return c.Invalid(op, field, why)
	}
	return nil
}

// NewItem checks item i of a batch to enqueue (Store.Enqueue), naming its
// fields "items[2].queue", "items[2].tags[0]". It checks the queue, the
// key when set and the kind as names, the delay, attempts, priority,
// timeout, key states and tags against the contract's limits (MaxPriority,
// MaxTimeout, MaxTags, MaxTagLen) and c's.
func (c Checker) NewItem(op string, i int, it NewItem) error {
	return c.NewItemNamed(op, "items["+strconv.Itoa(i)+"].", it)
}

// NewItemNamed checks an item to enqueue as NewItem does, naming its
// fields with prefix: "" for a lone item, "items[2]." in a batch,
// "jobs[0]." for the items a claim.Periodic will enqueue.
func (c Checker) NewItemNamed(op, prefix string, it NewItem) error {
	bad := func(field, detail string) error { return c.Invalid(op, prefix+field, detail) }
	if err := c.Name(op, prefix+"queue", it.Queue); err != nil {
		return err
	}
	if it.Key != "" {
		if err := c.Name(op, prefix+"key", it.Key); err != nil {
			return err
		}
	}
	if c.MaxNameLen > 0 && len(it.Kind) > c.MaxNameLen {
		return bad("kind", fmt.Sprintf("is %d bytes, more than %d", len(it.Kind), c.MaxNameLen))
	}
	if err := c.Text(op, prefix+"kind", it.Kind); err != nil {
		return err
	}
	switch {
	case it.Delay < 0:
		return bad("delay", it.Delay.String()+" is negative")
	case it.MaxAttempts < 1 && c.MaxAttempts == 0:
		return bad("max_attempts", strconv.Itoa(it.MaxAttempts)+" is less than 1")
	case it.MaxAttempts < 1 || c.MaxAttempts > 0 && it.MaxAttempts > c.MaxAttempts:
		return bad("max_attempts", fmt.Sprintf("%d is not between 1 and %d", it.MaxAttempts, c.MaxAttempts))
	case it.Priority < 0 || it.Priority > MaxPriority:
		return bad("priority", fmt.Sprintf("%d is not between 0 and %d", it.Priority, MaxPriority))
	case it.Timeout < 0:
		return bad("timeout", it.Timeout.String()+" is negative")
	case it.Timeout > MaxTimeout:
		// Every store refuses it, so that a timeout comes back as given
		// from whichever store holds it (whole microseconds in a column).
		return bad("timeout", it.Timeout.String()+" is more than claim.MaxTimeout, "+MaxTimeout.String())
	}
	if len(it.KeyStates) > 0 && it.Key == "" {
		return bad("key_states", "are set without a key")
	}
	for j, st := range it.KeyStates {
		if st < Visible || st > Cancelled {
			return bad("key_states["+strconv.Itoa(j)+"]", st.String()+" is not a state")
		}
	}
	if len(it.Tags) > MaxTags {
		return bad("tags", fmt.Sprintf("%d tags, more than %d", len(it.Tags), MaxTags))
	}
	for j, tag := range it.Tags {
		field := prefix + "tags[" + strconv.Itoa(j) + "]"
		if tag == "" || len(tag) > MaxTagLen {
			return c.Invalid(op, field, fmt.Sprintf("is %d bytes, not between 1 and %d", len(tag), MaxTagLen))
		}
		if err := c.Text(op, field, tag); err != nil {
			return err
		}
	}
	return nil
}

// NewItems checks every item of a batch to enqueue, as NewItem does, and
// returns the first refusal.
func (c Checker) NewItems(op string, items []NewItem) error {
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
func (c Checker) ClaimRequest(op string, req ClaimRequest) error {
	if err := c.Name(op, "queue", req.Queue); err != nil {
		return err
	}
	if err := c.Name(op, "owner", req.Owner); err != nil {
		return err
	}
	if err := c.Limit(op, req.Limit); err != nil {
		return err
	}
	if req.Lease <= 0 {
		return c.Invalid(op, "lease_duration", req.Lease.String()+" is not positive")
	}
	return nil
}

// Ref checks the claim of Store.Extend ("ref"): it names an item and has a
// token, neither above c.MaxID.
func (c Checker) Ref(op string, r Ref) error {
	switch {
	case r.Item == 0 || c.MaxID > 0 && uint64(r.Item) > c.MaxID:
		return c.Invalid(op, "ref", "does not name an item")
	case r.Token == 0 || c.MaxID > 0 && r.Token > c.MaxID:
		return c.Invalid(op, "ref", "has no claim token")
	}
	return nil
}

// Extend checks the arguments of Store.Extend: the claim's Ref, as Ref
// does, and a positive lease duration ("lease_duration").
func (c Checker) Extend(op string, r Ref, d time.Duration) error {
	if err := c.Ref(op, r); err != nil {
		return err
	}
	if d <= 0 {
		return c.Invalid(op, "lease_duration", d.String()+" is not positive")
	}
	return nil
}

// Settlement checks the argument of Store.Settle: its Ref, How ("how", one
// of the four ways to settle), After ("after", not negative) and Reason
// ("reason", text).
func (c Checker) Settlement(op string, s Settlement) error {
	if err := c.Ref(op, s.Ref); err != nil {
		return err
	}
	switch {
	case s.How < SettleComplete || s.How > SettleSnooze:
		return c.Invalid(op, "how", s.How.String()+" is not a way to settle")
	case s.After < 0:
		return c.Invalid(op, "after", s.After.String()+" is negative")
	}
	return c.Text(op, "reason", s.Reason)
}

// Item checks the queue and ID of an operation on one item (Cancel,
// RequeueDead, DeleteDead, a Retrier's RetryNow): the queue is a name, the
// ID ("id") not 0 nor above c.MaxID.
func (c Checker) Item(op, queue string, id ItemID) error {
	if err := c.Name(op, "queue", queue); err != nil {
		return err
	}
	return c.ID(op, id)
}

// ID checks the ID of Store.Lookup ("id"): not 0 nor above c.MaxID.
func (c Checker) ID(op string, id ItemID) error {
	if id == 0 || c.MaxID > 0 && uint64(id) > c.MaxID {
		return c.Invalid(op, "id", "is not an item ID")
	}
	return nil
}

// StaleClaim returns the error for a call on r (Extend, Settle) when r is
// no longer its item's live claim, or for the cause a store passes to
// ClaimRequest.Lost: a *lease.Error with code lease.CodeStaleUse, so that
// it matches lease.ErrStaleUse, c's Package, and r's token as its LeaseID.
// It is not a check of input: a store returns it when its storage says the
// claim is gone.
func (c Checker) StaleClaim(op string, r Ref) *lease.Error {
	return &lease.Error{Package: c.Package, Code: lease.CodeStaleUse, Op: op, LeaseID: lease.ID(r.Token),
		Detail: "item " + strconv.FormatUint(uint64(r.Item), 10) + " is no longer claimed by this claim"}
}

// Query checks the argument of Store.List: its queue, State ("state", 0
// or a state), Limit ("limit", at least 1), and its Kind and Tag filters
// as text.
func (c Checker) Query(op string, q Query) error {
	if err := c.Name(op, "queue", q.Queue); err != nil {
		return err
	}
	if q.State > Cancelled {
		return c.Invalid(op, "state", q.State.String()+" is not a state")
	}
	if err := c.Limit(op, q.Limit); err != nil {
		return err
	}
	if err := c.Text(op, "kind", q.Kind); err != nil {
		return err
	}
	return c.Text(op, "tag", q.Tag)
}

// QueueQuery checks the argument of a QueueLister's Queues: its Limit
// ("limit", at least 1) and After ("after", text).
func (c Checker) QueueQuery(op string, q QueueQuery) error {
	if err := c.Limit(op, q.Limit); err != nil {
		return err
	}
	return c.Text(op, "after", q.After)
}

// Limit checks the limit of a page or a batch, as of a Cleaner's Clean
// ("limit", at least 1).
func (c Checker) Limit(op string, limit int) error {
	if limit < 1 {
		return c.Invalid(op, "limit", strconv.Itoa(limit)+" is less than 1")
	}
	return nil
}
