package lock

import (
	"context"
	"errors"
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
	// lease is written only by renew, which the loop never runs
	// concurrently with itself, and read by finish once the loop has
	// stopped.
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
		got, err = h.m.provider.Renew(ctx, []Lease{h.lease}, h.m.opts.duration)
	}) {
		return errRenewPanicked
	}
	if errors.Is(err, lease.ErrClosed) {
		return renewal.Lost(ErrLockLost)
	}
	if err != nil {
		return err
	}
	for _, r := range got {
		if r.Name == h.lease.Name && r.ExecutionID == h.lease.ExecutionID && r.Token == h.lease.Token {
			h.lease = r
			h.observeRenewed()
			return nil
		}
	}
	return renewal.Lost(ErrLockLost)
}

var errRenewPanicked = providerFault("renew", "the provider's Renew panicked")

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
	err := h.m.provider.Release(context.WithoutCancel(h.parent), []Lease{h.lease})
	if f := h.m.opts.onReleaseError; err != nil && f != nil {
		callback.Call("release error handler", h.m.reportPanic, func() { f(h.lease, err) })
	}
	h.observeReleased(err)
}
