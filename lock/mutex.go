package lock

import (
	"context"
	"sync"
)

// Mutex is one named lock of a Manager held across calls: Lock acquires
// it, the Manager renews it in the background exactly as it does under Do,
// and Unlock releases it. Use it when the critical section does not fit in
// one function (a lock taken in one handler and released in another, or
// held for a process's lifetime); otherwise Do and TryLock, which release
// the lock when their function returns, leave nothing to forget.
//
// A held lock can be lost (a renewal shows it gone, or none confirms it
// before the safety deadline): Context then is cancelled with cause
// ErrLockLost, and the holder must stop using the resource. Locks are not
// reentrant: Lock on a Mutex that is held or being acquired is refused.
//
// A Mutex is safe for concurrent use; one goroutine may Lock it and another
// Unlock it.
type Mutex struct {
	m    *Manager
	name string

	mu        sync.Mutex
	acquiring bool
	h         *holding // nil while not held
	lease     Lease    // the lease h was acquired with
}

// NewMutex returns a Mutex for the lock name of m. It holds nothing until
// Lock or TryLock; the name is checked there.
func (m *Manager) NewMutex(name string) *Mutex {
	return &Mutex{m: m, name: name}
}

// Lock acquires the lock, waiting until it is free or ctx is done (then it
// returns ctx.Err() and holds nothing), as DoWait does. ctx bounds the
// wait only: once acquired, the lock is held until Unlock or its loss,
// whatever becomes of ctx.
func (mx *Mutex) Lock(ctx context.Context) error {
	_, err := mx.lock(ctx, "mutex lock", true)
	return err
}

// TryLock acquires the lock if it is free now, and reports whether it did;
// a lock held by another gets false, nil.
func (mx *Mutex) TryLock(ctx context.Context) (bool, error) {
	return mx.lock(ctx, "mutex trylock", false)
}

func (mx *Mutex) lock(ctx context.Context, op string, wait bool) (bool, error) {
	mx.mu.Lock()
	if mx.acquiring || mx.h != nil {
		mx.mu.Unlock()
		return false, invalid(op, "Mutex", "is already locked, or being locked, by this Mutex: locks are not reentrant")
	}
	mx.acquiring = true
	mx.mu.Unlock()

	acquire := mx.m.acquire
	if wait {
		acquire = mx.m.acquireWait
	}
	begun := mx.m.observeBegin()
	l, sent, err := acquire(ctx, mx.name)
	var h *holding
	var got Lease
	if err == nil && l != nil {
		got = *l
		// The hold outlives the call: keep ctx's values, not its end.
		hctx, observed := mx.m.observeAcquired(context.WithoutCancel(ctx), *l, begun)
		h = mx.m.hold(hctx, *l, sent, observed)
	}
	mx.mu.Lock()
	mx.acquiring = false
	mx.h, mx.lease = h, got
	mx.mu.Unlock()
	return h != nil, err
}

// Unlock stops the renewals and releases the lock. It returns an error
// matching ErrLockLost if the lock was lost while held (the release is
// still made: it never frees another holder's lock), and an
// LS_INVALID_ARGUMENT error if the Mutex is not held. The release runs to
// its end whatever ctx says, as Do's does, so that a lock is never left
// held because a caller's deadline passed; a release that fails goes to
// the Manager's release-error handler (WithReleaseErrorHandler) and the
// lease expires on its own.
func (mx *Mutex) Unlock(ctx context.Context) error {
	if ctx == nil {
		return invalid("mutex unlock", "ctx", "must not be nil")
	}
	mx.mu.Lock()
	h := mx.h
	mx.h, mx.lease = nil, Lease{}
	mx.mu.Unlock()
	if h == nil {
		return invalid("mutex unlock", "Mutex", "is not locked")
	}
	h.finish()
	return h.outcome(nil)
}

// Context returns a context that is done when the current holding ends:
// cancelled with cause ErrLockLost when the lock is lost, with
// context.Canceled when it is unlocked. While the Mutex is not held it
// returns a context that is already done with cause ErrLockLost, so a
// holder that checks it before each use of the resource never uses it
// unlocked.
func (mx *Mutex) Context() context.Context {
	mx.mu.Lock()
	h := mx.h
	mx.mu.Unlock()
	if h == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrLockLost)
		return ctx
	}
	return h.loop.Context()
}

// Lease returns the lease the current holding was acquired with, and
// whether the Mutex is held. Its Token is the fencing token to present to
// the resource; renewals keep the token and move the expiry, which the
// Manager tracks (Context says when the lock is lost).
func (mx *Mutex) Lease() (Lease, bool) {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	return mx.lease, mx.h != nil
}
