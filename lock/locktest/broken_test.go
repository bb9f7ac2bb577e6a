package locktest_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Providers that each break one clause of the contract, to show the suite
// catches them.

// reentrant lets the holder acquire again.
type reentrant struct{ *lock.Memory }

func (p reentrant) Acquire(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	l, err := p.Memory.Acquire(ctx, name, exec, d)
	if l == nil && err == nil && exec == "a" {
		return &lock.Lease{Name: name, ExecutionID: exec, ExpiresAt: time.Now().Add(d), Token: 1 << 60}, nil
	}
	return l, err
}

// unfenced issues the same token every time.
type unfenced struct{ *lock.Memory }

func (p unfenced) Acquire(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	l, err := p.Memory.Acquire(ctx, name, exec, d)
	if l != nil {
		c := *l
		c.Token = 7
		return &c, nil
	}
	return l, err
}

// renewsAll claims to renew whatever it is given.
type renewsAll struct{ *lock.Memory }

func (p renewsAll) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	_, err := p.Memory.Renew(ctx, leases, d)
	return leases, err
}

// releasesByName frees a lock whoever holds it, ignoring the token.
type releasesByName struct {
	*lock.Memory
	svc *lease.Service
}

func (p releasesByName) Release(ctx context.Context, leases []lock.Lease) error {
	for _, l := range leases {
		if _, id, ok, err := p.svc.Get(ctx, "lock/"+l.Name); err == nil && ok {
			_, _ = p.svc.Revoke(ctx, id)
		}
	}
	return nil
}

// racy checks and then acts, non-atomically.
type racy struct {
	mu     sync.Mutex
	token  uint64
	holder map[string]lock.Lease
}

func (p *racy) Acquire(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	if err := lockprovider.CheckAcquire(ctx, name, exec, d); err != nil {
		return nil, err
	}
	p.mu.Lock()
	_, held := p.holder[name]
	p.mu.Unlock()
	if held {
		return nil, nil
	}
	runtime.Gosched() // the window
	p.mu.Lock()
	defer p.mu.Unlock()
	p.token++
	l := lock.Lease{Name: name, ExecutionID: exec, ExpiresAt: time.Now().Add(d), Token: p.token}
	p.holder[name] = l
	return &l, nil
}

func (p *racy) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if err := lockprovider.CheckRenew(ctx, leases, d); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []lock.Lease
	for _, l := range leases {
		if h, ok := p.holder[l.Name]; ok && h.ExecutionID == l.ExecutionID && h.Token == l.Token {
			out = append(out, l)
		}
	}
	return out, nil
}

func (p *racy) Release(ctx context.Context, leases []lock.Lease) error {
	if err := lockprovider.CheckRelease(ctx, leases); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range leases {
		if h, ok := p.holder[l.Name]; ok && h.ExecutionID == l.ExecutionID && h.Token == l.Token {
			delete(p.holder, l.Name)
		}
	}
	return nil
}

// lax accepts bad input.
type lax struct{ *lock.Memory }

func (p lax) Acquire(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	if name == "" {
		return nil, nil
	}
	return p.Memory.Acquire(ctx, name, exec, d)
}

// impatient is a Waiter that does not wait: contention comes back as
// nil, nil.
type impatient struct{ *lock.Memory }

func (p impatient) AcquireWait(ctx context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	return p.Acquire(ctx, name, exec, d)
}

// unsorted lists held locks in reverse name order.
type unsorted struct{ *lock.Memory }

func (p unsorted) Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error) {
	hs, err := p.Memory.Held(ctx, prefix, limit)
	slices.Reverse(hs)
	return hs, err
}

// plain is a Memory with none of its optional capabilities.
type plain struct{ lock.Provider }

// blind is a WaitInspector that lists no waiter.
type blind struct{ *lock.Memory }

func (p blind) Waiting(ctx context.Context, name string, limit int) ([]lock.Waiting, error) {
	if err := lockprovider.CheckWaiting(ctx, name, limit); err != nil {
		return nil, err
	}
	return nil, nil
}

// skewed is a TimeBase whose Clock is an hour ahead of the time its
// leases expire on.
type skewed struct{ *lock.Memory }

func (p skewed) Clock() lease.Clock { return aheadClock{p.Memory.Clock()} }

// aheadClock reads an hour ahead of c.
type aheadClock struct{ c lease.Clock }

func (a aheadClock) Now() time.Time { return a.c.Now().Add(time.Hour) }

func (a aheadClock) AfterFunc(d time.Duration, f func()) lease.Timer { return a.c.AfterFunc(d, f) }

// valueless is a ValueWaiter that drops the value of a waiter.
type valueless struct{ *lock.Memory }

func (p valueless) AcquireWaitValue(ctx context.Context, name, exec string, d time.Duration, value []byte) (*lock.Lease, error) {
	return p.Memory.AcquireWaitValue(ctx, name, exec, d, nil)
}
