package election

import (
	"context"
	"sync"

	"github.com/leasehold/lease/lock"
)

// Leadership is one candidate's term as leader, from the Campaign that won
// it until it is lost or given up. While it lasts, a lock.Manager holds the
// lock on a goroutine of the Election's and renews its lease in the
// background; the goroutine ends once the lock is released.
//
// A Leadership is safe for concurrent use.
type Leadership struct {
	value []byte
	token uint64
	// ctx is the leadership's context: a child of the context the Manager
	// gives the held lock, so it ends with lock.ErrLockLost when the lock is
	// lost, with the campaign context's cause when that ends, and with
	// ErrResigned on Resign.
	ctx    context.Context
	cancel context.CancelCauseFunc

	done       chan struct{} // closed once the Manager has released the lock
	mu         sync.Mutex
	releaseErr error // the release's error, if it failed
}

// setReleaseError records the error of the lock's release; it is the
// Manager's release-error handler.
func (ld *Leadership) setReleaseError(_ lock.Lease, err error) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.releaseErr = err
}

// Context returns the leadership's context: it is done once the
// leadership is over, with context.Cause ErrLeadershipLost when it was
// lost (a renewal showed the lock gone, or none confirmed it before the
// safety deadline), ErrResigned after Resign, and the cause of the
// campaign's context when that ended. Work done as leader should run under
// it, and stop when it ends.
func (ld *Leadership) Context() context.Context { return ld.ctx }

// Token returns the fencing token of the leadership's lock: greater than
// every earlier leader's. Pass it to the resources the leader writes, which
// refuse an older one (lock.Fence), so a leader that lost its leadership
// without noticing cannot overwrite its successor's work.
func (ld *Leadership) Token() uint64 { return ld.token }

// Value returns a copy of the value the candidate campaigned with.
func (ld *Leadership) Value() []byte {
	if ld.value == nil {
		return nil
	}
	return append([]byte(nil), ld.value...)
}

// Resign gives the leadership up: its context ends with cause ErrResigned
// (unless it had already ended), renewals stop, and the lock is released,
// so that a waiting candidate leads at once. It returns once all that is
// done, with the release's error if it failed (the lease then expires on
// its own), or ctx.Err() if ctx is done first, in which case the release
// goes on. Resign is idempotent, and may be called after the leadership
// was lost, to wait for its release.
//
// The release, made whether the leadership was resigned, cancelled or
// lost, is given the Election's retry interval (WithRetryInterval), in
// real time, as its context's deadline: when the provider does not answer
// by then (it is unreachable, or hangs) the release fails with
// context.DeadlineExceeded and the lease expires on its own. So once the
// leadership's context has ended, Resign returns within the retry
// interval (and a renewal under way is cut short), provided the
// provider's calls return once their context is done.
func (ld *Leadership) Resign(ctx context.Context) error {
	if ctx == nil {
		return invalid("resign", "ctx", "must not be nil")
	}
	ld.cancel(ErrResigned)
	select {
	case <-ld.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.releaseErr
}
