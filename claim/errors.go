package claim

import (
	"errors"
	"strconv"

	"github.com/leasehold/lease"
)

// ErrNotFound is matched by errors about an item that does not exist, or is
// not in the state the operation needs (RequeueDead and DeleteDead of an item
// that is not a dead letter of that queue).
var ErrNotFound = errors.New("claim: item not found")

// ErrClaimLost is matched by the cause of a Work handler's context when the
// claim under the handler was lost: its lease expired or was revoked, by
// anyone, or no heartbeat confirmed it up to the Worker's safety margin
// before its expiry. The same cause also matches lease.ErrStaleUse and is a
// *lease.Error (errors.As) naming the lease; its text says "expired" or
// "revoked" (for the margin: "treated as expired" and why). The Broker
// cancels the context as it takes the item back, so before anyone can claim
// the item again; the margin cancels it earlier still.
var ErrClaimLost = errors.New("claim: claim lost")

// ErrCancelled is matched by the cause of a Work handler's context, and by
// the errors of later calls on the claim, when the item under the claim was
// cancelled (Broker.Cancel).
var ErrCancelled = errors.New("claim: item cancelled")

// lostError is the cause of a lost claim's handler context: a stale-use
// error that also matches ErrClaimLost.
type lostError struct{ err *lease.Error }

func (e lostError) Error() string   { return e.err.Error() }
func (e lostError) Unwrap() []error { return []error{ErrClaimLost, e.err} }

// lost returns the cause for a handler whose claim h was lost because its
// lease ended for reason.
func lost(h *hold, reason lease.EndReason) error {
	r := Ref{Item: h.item.id, Token: uint64(h.lease)}
	return lostError{stale("work", r, "lost its claim: lease "+reason.String())}
}

// NotFoundError reports the item an operation could not find. It is a plain
// value, safe to copy and to read from several goroutines.
type NotFoundError struct {
	Op    string // "requeue_dead", "delete_dead"
	Queue string
	Item  ItemID
}

// Error formats as `claim: OP queue "Q" item N: no such dead letter`.
func (e *NotFoundError) Error() string {
	return "claim: " + e.Op + " queue " + strconv.Quote(e.Queue) + " item " +
		strconv.FormatUint(uint64(e.Item), 10) + ": no such dead letter"
}

// Unwrap returns ErrNotFound.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// invalid reports bad input with the core's error type, so callers match
// lease.ErrInvalidArgument and read the offending Field.
func invalid(op, field, detail string) error {
	return &lease.Error{Code: lease.CodeInvalidArgument, Op: "claim." + op, Field: field, Detail: detail}
}

// stale reports a claim that is no longer live, with the core's
// LS_STALE_USE code.
func stale(op string, r Ref, detail string) *lease.Error {
	return &lease.Error{Code: lease.CodeStaleUse, Op: "claim." + op, LeaseID: lease.ID(r.Token),
		Detail: "item " + strconv.FormatUint(uint64(r.Item), 10) + " " + detail}
}

// closedError reports an operation on a closed Broker.
func closedError(op string) error {
	return &lease.Error{Code: lease.CodeClosed, Op: "claim." + op, Detail: "broker closed"}
}

// leaseEnded reports whether err from the core says the lease is gone.
func leaseEnded(err error) bool {
	return errors.Is(err, lease.ErrExpired) || errors.Is(err, lease.ErrAlreadyRevoked) ||
		errors.Is(err, lease.ErrStaleUse) || errors.Is(err, lease.ErrNotFound)
}
