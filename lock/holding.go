package lock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/renewal"
)

// holding is one lock held by a Manager while its function runs: the
// renewal loop that keeps it, and the lease as last renewed.
type holding struct {
	m      *Manager
	parent context.Context
	loop   *renewal.Loop
	// mu guards lease, written by renew (which the loop never runs
	// concurrently with itself) and read by the loss report, which can
	// come from the deadline's timer while a late renewal is under way.
	mu       sync.Mutex
	lease    Lease
	observed *holdObserver // nil: no observer (observe.go)
}

// hold starts holding l, acquired by a call made at sent on the Manager's
// clock, reported to observed (nil for none).
func (m *Manager) hold(ctx context.Context, l Lease, sent time.Time, observed *holdObserver) *holding {
	h := &holding{m: m, parent: ctx, lease: l, observed: observed}
	h.loop = renewal.Start(ctx, renewal.Config{
		Clock:    m.opts.clock,
		Duration: m.opts.duration,
		Margin:   m.opts.margin,
		Retry:    m.opts.retry,
		Renew:    h.renew,
		Expired:  ErrLockLost,
		Lost:     h.observeLost,
	}, sent)
	return h
}

// renew is the loop's Renew: a renewal that succeeds without returning the
// lease means the lock is no longer ours, and so does a closed service,
// which will never renew it again. A provider that panics is reported, and
// its renewal counts as failed.
func (h *holding) renew(ctx context.Context) error {
	var got []Lease
	var err error
	if callback.Call("provider renew", h.m.reportPanic, func() {
		got, err = h.m.provider.Renew(ctx, []Lease{h.current()}, h.m.opts.duration)
	}) {
		return errRenewPanicked
	}
	if errors.Is(err, lease.ErrClosed) {
		return renewal.Lost(ErrLockLost)
	}
	if err != nil {
		return err
	}
	held := h.current()
	for _, r := range got {
		if r.Name == held.Name && r.ExecutionID == held.ExecutionID && r.Token == held.Token {
			h.mu.Lock()
			h.lease = r
			h.mu.Unlock()
			h.observeRenewed(r)
			return nil
		}
	}
	return renewal.Lost(ErrLockLost)
}

var errRenewPanicked = providerFault("renew", "the provider's Renew panicked")

// current returns the lease as last renewed.
func (h *holding) current() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// outcome is the error Do returns for fn's err.
func (h *holding) outcome(err error) error {
	if h.loop.Err() != nil {
		return lostError(err)
	}
	return err
}

// finish stops the renewals, waits for one under way, and releases the
// lock. It runs when fn returns or panics.
func (h *holding) finish() {
	h.loop.Stop()
	// Release even a lost lease: a renewal that failed with an error may
	// have left it held, and Release never frees another holder's lock.
	l := h.current()
	err := h.m.provider.Release(context.WithoutCancel(h.parent), []Lease{l})
	if f := h.m.opts.onReleaseError; err != nil && f != nil {
		callback.Call("release error handler", h.m.reportPanic, func() { f(l, err) })
	}
	h.observeReleased(l, err)
}
