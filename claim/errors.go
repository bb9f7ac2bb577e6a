package claim

import (
	"errors"
	"strconv"

	"github.com/leasehold/lease"
)

// CodeStopped is the code of ErrStopped: Work stopped a handler that was
// still running StopTimeout after Work's context was done. The other
// errors of this package carry the codes of package lease.
const CodeStopped lease.Code = "LS_STOPPED"

// ErrNotFound is matched by errors about an item that does not exist, or is
// not in the state the operation needs (RequeueDead and DeleteDead of an item
// that is not a dead letter of that queue). It is the same value as
// lease.ErrNotFound: such an error is a *NotFoundError, which unwraps to a
// *lease.Error with lease.CodeNotFound.
var ErrNotFound = lease.ErrNotFound

// ErrClaimLost is matched by the cause of a Work handler's context when the
// claim under the handler was lost: its lease expired or was revoked, by
// anyone, or no heartbeat confirmed it up to the Worker's safety margin
// before its expiry. The same cause also matches lease.ErrStaleUse (and
// lease.ErrExpired or lease.ErrAlreadyRevoked, for how the lease ended) and
// is a *lease.Error (errors.As) naming the lease; its text says "expired"
// or "revoked" (for the margin: "treated as expired" and why). The Broker
// cancels the context as it takes the item back, so before anyone can claim
// the item again; the margin cancels it earlier still. ErrClaimLost itself
// is a *lease.Error with lease.CodeStaleUse; treat it as read-only.
var ErrClaimLost error = &lease.Error{Package: "claim", Code: lease.CodeStaleUse, Detail: "claim lost"}

// ErrCancelled is matched by the cause of a Work handler's context, and by
// the cause a store passes to ClaimRequest.Lost, when the item under the
// claim was cancelled (Broker.Cancel). Later calls on that claim get an
// error matching lease.ErrStaleUse. ErrCancelled itself is a *lease.Error
// with lease.CodeStaleUse; treat it as read-only.
var ErrCancelled error = &lease.Error{Package: "claim", Code: lease.CodeStaleUse, Detail: "item cancelled"}

// causeError is the cause of a handler context whose claim ended under it:
// a stale-use error that also matches a sentinel of this package
// (ErrClaimLost, ErrCancelled).
type causeError struct {
	sentinel error
	err      *lease.Error
}

func (e causeError) Error() string   { return e.err.Error() }
func (e causeError) Unwrap() []error { return []error{e.err, e.sentinel} } // the lease error first, for errors.As

// lost returns the cause for a handler whose claim r was lost because its
// lease ended for reason.
func lost(r Ref, reason lease.EndReason) error {
	err := stale("work", r, "lost its claim: lease "+reason.String())
	err.Ended = reason
	return causeError{ErrClaimLost, err}
}

// cancelled returns the cause for a handler whose item under claim r was
// cancelled.
func cancelled(r Ref) error {
	return causeError{ErrCancelled, stale("work", r, "was cancelled")}
}

// NotFoundError reports the item an operation could not find. It matches
// ErrNotFound (lease.ErrNotFound) and unwraps to a *lease.Error with
// lease.CodeNotFound. It is a plain value, safe to copy and to read from
// several goroutines.
type NotFoundError struct {
	Op    string // "requeue_dead", "delete_dead", "cancel", "lookup"
	Queue string // "" for lookup, which names no queue
	Item  ItemID
}

// Error formats as `claim: OP queue "Q" item N: no such dead letter
// [LS_NOT_FOUND]` for the dead-letter operations, `claim: OP queue "Q" item
// N: no such item [LS_NOT_FOUND]` for the others, without the queue when
// Queue is "".
func (e *NotFoundError) Error() string {
	s := "claim: " + e.Op
	if e.Queue != "" {
		s += " queue " + strconv.Quote(e.Queue)
	}
	return s + " " + e.detail() + " [" + string(lease.CodeNotFound) + "]"
}

func (e *NotFoundError) detail() string {
	s := "item " + strconv.FormatUint(uint64(e.Item), 10)
	if e.Op == "requeue_dead" || e.Op == "delete_dead" {
		return s + ": no such dead letter"
	}
	return s + ": no such item"
}

// Unwrap returns the *lease.Error that e stands for: lease.CodeNotFound,
// Package "claim", e's Op; it matches ErrNotFound.
func (e *NotFoundError) Unwrap() error {
	d := e.detail()
	if e.Queue != "" {
		d = "queue " + strconv.Quote(e.Queue) + " " + d
	}
	return &lease.Error{Package: "claim", Code: lease.CodeNotFound, Op: e.Op, Detail: d}
}

// invalid reports bad input with the core's error type, so callers match
// lease.ErrInvalidArgument and read the offending Field.
func invalid(op, field, detail string) error {
	return &lease.Error{Code: lease.CodeInvalidArgument, Package: "claim", Op: op, Field: field, Detail: detail}
}

// stale reports a claim that is no longer live, with the core's
// LS_STALE_USE code.
func stale(op string, r Ref, detail string) *lease.Error {
	return &lease.Error{Code: lease.CodeStaleUse, Package: "claim", Op: op, LeaseID: lease.ID(r.Token),
		Detail: "item " + strconv.FormatUint(uint64(r.Item), 10) + " " + detail}
}

// closedError reports an operation on a closed Broker or store.
func closedError(op string) error {
	return &lease.Error{Code: lease.CodeClosed, Package: "claim", Op: op, Detail: "broker closed"}
}

// leaseEnded reports whether err from the core says the lease is gone.
func leaseEnded(err error) bool {
	return errors.Is(err, lease.ErrExpired) || errors.Is(err, lease.ErrAlreadyRevoked) ||
		errors.Is(err, lease.ErrStaleUse) || errors.Is(err, lease.ErrNotFound)
}
