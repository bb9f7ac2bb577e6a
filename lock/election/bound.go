package election

import (
	"context"
	"time"

	"github.com/leasehold/lease/lock"
)

// The calls made on the way out of a leadership (the release of the lock,
// after the leadership was lost, resigned or cancelled) run when the
// caller has nothing left to wait for, often because the provider stopped
// answering. Each is given the Election's retry interval, in real time,
// as the deadline of its context: a provider that has not answered by
// then is taken to be unreachable, and the lease runs out on its own.
// The lock.Manager of a campaign releases without a deadline of its own,
// so the campaign hands it the provider wrapped in one that adds it.

// exitBound returns the context of a call made on the way out of a
// leadership: ctx with a deadline the retry interval away.
func (e *Election) exitBound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.opts.retry)
}

// boundedProvider is a campaign's provider: the Election's, with a
// deadline on Release. Everything else is forwarded as it is; the
// interfaces a lock.Manager looks for are kept by the variants wrap
// returns.
type boundedProvider struct {
	lock.Provider
	waiter lock.Waiter
	bound  func(context.Context) (context.Context, context.CancelFunc)
}

// AcquireWait is the provider's: a campaign waits as long as its context
// says.
func (p *boundedProvider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	return p.waiter.AcquireWait(ctx, name, executionID, d, value)
}

// Release is the provider's, bounded.
func (p *boundedProvider) Release(ctx context.Context, leases []lock.Lease) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return p.Provider.Release(ctx, leases)
}

// bounded returns the provider a campaign's Manager holds the lock with:
// the Election's, its releases bounded, keeping lock.ValueAcquirer and
// lock.TimeBase when the provider is one (New made sure it is a
// lock.Waiter).
func (e *Election) bounded() lock.Provider {
	base := &boundedProvider{Provider: e.provider, waiter: e.provider.(lock.Waiter), bound: e.exitBound}
	tb, isTB := e.provider.(lock.TimeBase)
	switch {
	case e.valuer != nil && isTB:
		return struct {
			*boundedProvider
			lock.ValueAcquirer
			lock.TimeBase
		}{base, e.valuer, tb}
	case e.valuer != nil:
		return struct {
			*boundedProvider
			lock.ValueAcquirer
		}{base, e.valuer}
	case isTB:
		return struct {
			*boundedProvider
			lock.TimeBase
		}{base, tb}
	}
	return base
}
