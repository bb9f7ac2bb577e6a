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

// NotFoundError reports the item an operation could not find.
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
func stale(op string, r Ref, detail string) error {
	return &lease.Error{Code: lease.CodeStaleUse, Op: "claim." + op, LeaseID: r.lease,
		Detail: "item " + strconv.FormatUint(uint64(r.item), 10) + " " + detail}
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
