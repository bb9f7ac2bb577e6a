package election

import (
	"context"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
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
// capabilities a lock.Manager looks for are kept by the variants bounded
// returns, each method forwarded by name (the capabilities all embed
// lockprovider.Provider, so embedding two of them would make the
// provider's methods ambiguous).
type boundedProvider struct {
	p     lockprovider.Waiter
	bound func(context.Context) (context.Context, context.CancelFunc)
}

// Acquire is the provider's.
func (p *boundedProvider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return p.p.Acquire(ctx, name, executionID, d)
}

// Renew is the provider's.
func (p *boundedProvider) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	return p.p.Renew(ctx, leases, d)
}

// AcquireWait is the provider's: a campaign waits as long as its context
// says.
func (p *boundedProvider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	return p.p.AcquireWait(ctx, name, executionID, d)
}

// Release is the provider's, bounded.
func (p *boundedProvider) Release(ctx context.Context, leases []lock.Lease) error {
	ctx, cancel := p.bound(ctx)
	defer cancel()
	return p.p.Release(ctx, leases)
}

// boundedValuer is a boundedProvider over a lockprovider.ValueWaiter.
type boundedValuer struct {
	*boundedProvider
	vw lockprovider.ValueWaiter
}

// AcquireValue is the provider's.
func (p boundedValuer) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	return p.vw.AcquireValue(ctx, name, executionID, d, value)
}

// AcquireWaitValue is the provider's.
func (p boundedValuer) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	return p.vw.AcquireWaitValue(ctx, name, executionID, d, value)
}

// clockOf forwards a lockprovider.TimeBase's Clock.
type clockOf struct{ tb lockprovider.TimeBase }

// Clock is the provider's.
func (c clockOf) Clock() lease.Clock { return c.tb.Clock() }

// bounded returns the provider a campaign's Manager holds the lock with:
// the Election's, its releases bounded, keeping lockprovider.ValueWaiter
// and lockprovider.TimeBase when the provider is one (New made sure it is
// a lockprovider.Waiter).
func (e *Election) bounded() lock.Provider {
	base := &boundedProvider{p: e.provider.(lockprovider.Waiter), bound: e.exitBound}
	tb, isTB := e.provider.(lockprovider.TimeBase)
	switch {
	case e.valuer != nil && isTB:
		return struct {
			boundedValuer
			clockOf
		}{boundedValuer{base, e.valuer}, clockOf{tb}}
	case e.valuer != nil:
		return boundedValuer{base, e.valuer}
	case isTB:
		return struct {
			*boundedProvider
			clockOf
		}{base, clockOf{tb}}
	}
	return base
}
