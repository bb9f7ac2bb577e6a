package claim

import (
	"context"
	"errors"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/claimstore"
)

// ErrUnsupported is matched by the error of a Broker operation that its
// store cannot do (it lacks the optional interface the operation needs).
// The same error is a *lease.Error matching lease.ErrInvalidArgument that
// names the field "store", as PauseQueue's is.
var ErrUnsupported = errors.New("claim: operation not supported by the store")

// Capabilities says which optional operations a Broker's store has. It is
// a plain value, safe to copy and share.
type Capabilities struct {
	Pause    bool // PauseQueue and ResumeQueue (a claimstore.Pauser)
	Queues   bool // Queues (a claimstore.QueueLister)
	RetryNow bool // RetryNow (a claimstore.Retrier)
	Clean    bool // Clean and RunCleaner (a claimstore.Cleaner)
}

// Capabilities reports which optional operations the Broker's store has, so
// that a tool can offer only those.
func (b *Broker) Capabilities() Capabilities {
	_, pause := b.store.(claimstore.Pauser)
	_, queues := b.store.(claimstore.QueueLister)
	_, retry := b.store.(claimstore.Retrier)
	_, clean := b.store.(claimstore.Cleaner)
	return Capabilities{Pause: pause, Queues: queues, RetryNow: retry, Clean: clean}
}

// RetryNow makes the delayed item id of queue claimable at once (see
// claimstore.Retrier) and wakes the queue's workers. A store that is not a claimstore.Retrier
// gets an error matching ErrUnsupported and lease.ErrInvalidArgument.
func (b *Broker) RetryNow(ctx context.Context, queue string, id ItemID) (Item, error) {
	const op = "retry_now"
	if err := checkContext(ctx, op); err != nil {
		return Item{}, err
	}
	r, ok := b.store.(claimstore.Retrier)
	if !ok {
		return Item{}, unsupported(op, "cannot retry items now (not a claimstore.Retrier)")
	}
	return r.RetryNow(ctx, queue, id)
}

// unsupportedError is a store lacking an operation: bad input naming the
// store, that also matches ErrUnsupported.
type unsupportedError struct{ err *lease.Error }

func (e unsupportedError) Error() string   { return e.err.Error() }
func (e unsupportedError) Unwrap() []error { return []error{ErrUnsupported, e.err} }

// unsupported reports that the store cannot do op.
func unsupported(op, detail string) error {
	return unsupportedError{&lease.Error{Package: "claim", Code: lease.CodeInvalidArgument, Op: op, Field: "store", Detail: detail}}
}
