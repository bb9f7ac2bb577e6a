// Package claimkit holds the checks of a claim.Store's input, for package
// claim (its Broker and Memory) and for package claim/claimstore, which
// exports them to store authors. They live here, on plain values, because
// claim/claimstore imports claim: claim cannot import it back.
package claimkit

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leasehold/lease/internal/inputcheck"
)

// Limits are package claim's limits on an item, which every store applies
// (claim.MaxPriority, claim.MaxTimeout, claim.MaxTags, claim.MaxTagLen).
type Limits struct {
	MaxPriority int
	MaxTimeout  time.Duration
	MaxTags     int
	MaxTagLen   int
	// MaxState is the highest state; the states are 1 to MaxState.
	MaxState int
}

// Checker checks input as one store does: its package names the errors,
// and its own limits apply on top of claim's. The zero value of each limit
// is none.
type Checker struct {
	Limits
	inputcheck.Names
	MaxAttempts int
	MaxID       uint64
}

// Item is what the checks read of a claim.NewItem.
type Item struct {
	Queue, Key, Kind string
	Tags             []string
	Delay, Timeout   time.Duration
	MaxAttempts      int
	Priority         int
	// KeyStates are the states, as numbers, in which an existing item
	// with Key blocks this one (see States).
	KeyStates []int
}

// States is a store's states as the checks read them.
func States[S ~uint8](states []S) []int {
	if len(states) == 0 {
		return nil
	}
	out := make([]int, len(states))
	for i, st := range states {
		out[i] = int(st)
	}
	return out
}

// Item checks an item to enqueue, naming its fields with prefix ("" for
// one item, "items[i]." in a batch).
func (c Checker) Item(op, prefix string, it Item) error {
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
	case it.Priority < 0 || it.Priority > c.MaxPriority:
		return bad("priority", fmt.Sprintf("%d is not between 0 and %d", it.Priority, c.MaxPriority))
	case it.Timeout < 0:
		return bad("timeout", it.Timeout.String()+" is negative")
	case it.Timeout > c.MaxTimeout:
		// Every store refuses it, so that a timeout comes back as given
		// from whichever store holds it (whole microseconds in a column).
		return bad("timeout", it.Timeout.String()+" is more than claim.MaxTimeout, "+c.MaxTimeout.String())
	}
	if err := c.KeyStates(op, prefix, it.Key, it.KeyStates); err != nil {
		return err
	}
	return c.Tags(op, prefix, it.Tags)
}

// KeyStates checks an item's key states: states, and only with a key.
func (c Checker) KeyStates(op, prefix, key string, states []int) error {
	if len(states) > 0 && key == "" {
		return c.Invalid(op, prefix+"key_states", "are set without a key")
	}
	for j, st := range states {
		if st < 1 || st > c.MaxState {
			return c.Invalid(op, prefix+"key_states["+strconv.Itoa(j)+"]", "State("+strconv.Itoa(st)+") is not a state")
		}
	}
	return nil
}

// Tags checks an item's tags, naming them with prefix.
func (c Checker) Tags(op, prefix string, tags []string) error {
	if len(tags) > c.MaxTags {
		return c.Invalid(op, prefix+"tags", fmt.Sprintf("%d tags, more than %d", len(tags), c.MaxTags))
	}
	for j, tag := range tags {
		field := prefix + "tags[" + strconv.Itoa(j) + "]"
		if tag == "" || len(tag) > c.MaxTagLen {
			return c.Invalid(op, field, fmt.Sprintf("is %d bytes, not between 1 and %d", len(tag), c.MaxTagLen))
		}
		if err := c.Text(op, field, tag); err != nil {
			return err
		}
	}
	return nil
}

// Claim checks the arguments of a claim: the queue, the owner, the limit
// and the lease duration.
func (c Checker) Claim(op, queue, owner string, limit int, d time.Duration) error {
	if err := c.Name(op, "queue", queue); err != nil {
		return err
	}
	if err := c.Name(op, "owner", owner); err != nil {
		return err
	}
	if err := c.Limit(op, limit); err != nil {
		return err
	}
	if d <= 0 {
		return c.Invalid(op, "lease_duration", d.String()+" is not positive")
	}
	return nil
}

// Ref checks a claim's reference: an item and a token, each not 0 and at
// most c.MaxID.
func (c Checker) Ref(op string, item, token uint64) error {
	switch {
	case item == 0 || c.MaxID > 0 && item > c.MaxID:
		return c.Invalid(op, "ref", "does not name an item")
	case token == 0 || c.MaxID > 0 && token > c.MaxID:
		return c.Invalid(op, "ref", "has no claim token")
	}
	return nil
}

// Settlement checks a settlement: its Ref, whether How is a way to settle
// (howOK), its After and its Reason.
func (c Checker) Settlement(op string, item, token uint64, how fmt.Stringer, howOK bool, after time.Duration, reason string) error {
	if err := c.Ref(op, item, token); err != nil {
		return err
	}
	switch {
	case !howOK:
		return c.Invalid(op, "how", how.String()+" is not a way to settle")
	case after < 0:
		return c.Invalid(op, "after", after.String()+" is negative")
	}
	return c.Text(op, "reason", reason)
}

// ItemID checks the queue and ID of an operation on one item.
func (c Checker) ItemID(op, queue string, id uint64) error {
	if err := c.Name(op, "queue", queue); err != nil {
		return err
	}
	return c.ID(op, id)
}

// ID checks an item ID: not 0 nor above c.MaxID.
func (c Checker) ID(op string, id uint64) error {
	if id == 0 || c.MaxID > 0 && id > c.MaxID {
		return c.Invalid(op, "id", "is not an item ID")
	}
	return nil
}

// Query checks a listing: its queue, whether its state is one (stateOK),
// its limit, and its kind and tag filters.
func (c Checker) Query(op, queue string, state fmt.Stringer, stateOK bool, limit int, kind, tag string) error {
	if err := c.Name(op, "queue", queue); err != nil {
		return err
	}
	switch {
	case !stateOK:
		return c.Invalid(op, "state", state.String()+" is not a state")
	}
	if err := c.Limit(op, limit); err != nil {
		return err
	}
	if err := c.Text(op, "kind", kind); err != nil {
		return err
	}
	return c.Text(op, "tag", tag)
}

// Extend checks the arguments of Extend: the claim's Ref and a positive
// lease duration.
func (c Checker) Extend(op string, item, token uint64, d time.Duration) error {
	if err := c.Ref(op, item, token); err != nil {
		return err
	}
	if d <= 0 {
		return c.Invalid(op, "lease_duration", d.String()+" is not positive")
	}
	return nil
}

// Limit checks the limit of a page or a batch: at least 1.
func (c Checker) Limit(op string, limit int) error {
	if limit < 1 {
		return c.Invalid(op, "limit", strconv.Itoa(limit)+" is less than 1")
	}
	return nil
}

// Queues checks a page of queues: its limit, and the queue it starts after
// as text.
func (c Checker) Queues(op string, limit int, after string) error {
	if err := c.Limit(op, limit); err != nil {
		return err
	}
	return c.Text(op, "after", after)
}
