package electiontest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/lock/lockprovider"
)

// electionName is the lock every clause's candidates contend for.
const electionName = "electiontest"

// env is what a clause runs with: the provider (wrapped so that a clause
// can make it fail), its clock, and helpers that fail the clause on an
// unexpected result.
type env struct {
	*testing.T
	inner lock.Provider // the provider as given
	p     lock.Provider // inner, wrapped in faults
	f     *faults
	clock lease.Clock
	adv   leasetest.Advancer // nil on a real clock
	long  time.Duration
	short time.Duration
	poll  time.Duration
}

func newEnv(t *testing.T, p lock.Provider, clock lease.Clock) *env {
	e := &env{T: t, inner: p, clock: clock, long: realLong, short: realShort, poll: realPoll}
	e.adv, _ = clock.(leasetest.Advancer)
	if e.fake() {
		e.long, e.short, e.poll = fakeLease, fakeLease, fakePoll
	}
	e.f = &faults{}
	e.p = e.f.wrap(p)
	return e
}

// fake reports whether time is driven by the suite.
func (e *env) fake() bool { return e.adv != nil }

// scale returns n with a fake clock and real otherwise.
func (e *env) scale(n, real int) int {
	if e.fake() {
		return n
	}
	return real
}

// advance moves a fake clock by d; on a real clock it does nothing.
func (e *env) advance(d time.Duration) {
	if e.fake() {
		e.adv.Advance(d)
	}
}

// options are the options of every election of the suite, then opts: the
// clock for a provider without a time base, and the suite's poll interval
// and lease duration.
func (e *env) options(d time.Duration, opts ...election.Option) []election.Option {
	o := []election.Option{election.WithLeaseDuration(d), election.WithPollInterval(e.poll)}
	if _, ok := e.inner.(lockprovider.TimeBase); !ok {
		o = append(o, lease.WithClock(e.clock))
	}
	return append(o, opts...)
}

// election returns an election on the wrapped provider with a lease of d.
func (e *env) election(d time.Duration, opts ...election.Option) *election.Election {
	e.Helper()
	el, err := election.New(e.p, electionName, e.options(d, opts...)...)
	require.NoError(e, err, "election.New")
	return el
}

// campaign wins an election that must be free, and resigns at the end of
// the clause.
func (e *env) campaign(el *election.Election, value string) *election.Leadership {
	e.Helper()
	return e.won(e.campaignAsync(el, value), value)
}

type campaignResult struct {
	ld  *election.Leadership
	err error
}

// campaignAsync starts a Campaign on a goroutine and returns the channel
// its result arrives on. When the clause ends the campaign is cancelled,
// waited for, and its leadership, if any, resigned: a failing clause
// leaks nothing.
func (e *env) campaignAsync(el *election.Election, value string) <-chan campaignResult {
	ctx, cancel := context.WithCancel(background)
	return e.campaignCtx(ctx, cancel, el, value)
}

// campaignCtx is campaignAsync with the campaign's context and its cancel.
func (e *env) campaignCtx(ctx context.Context, cancel context.CancelFunc, el *election.Election, value string) <-chan campaignResult {
	out := make(chan campaignResult, 1)
	done := make(chan struct{})
	var ld atomic.Pointer[election.Leadership]
	go func() {
		defer close(done)
		var v []byte
		if value != "" {
			v = []byte(value)
		}
		l, err := el.Campaign(ctx, v)
		ld.Store(l)
		out <- campaignResult{l, err}
	}()
	e.Cleanup(func() {
		cancel()
		<-done
		if l := ld.Load(); l != nil {
			_ = l.Resign(background)
		}
	})
	return out
}

// won returns the leadership a campaign won, failing the clause if it
// returned anything else or nothing within waitLimit.
func (e *env) won(ch <-chan campaignResult, value string) *election.Leadership {
	e.Helper()
	select {
	case r := <-ch:
		require.NoError(e, r.err, "Campaign(%q)", value)
		require.NotNil(e, r.ld, "Campaign(%q) must return a leadership, never nil, nil", value)
		require.NotZero(e, r.ld.Token(), "Campaign(%q): Token must never be 0", value)
		return r.ld
	case <-time.After(waitLimit):
		e.Fatalf("Campaign(%q) did not win within %v", value, waitLimit)
		return nil
	}
}

// stillWaiting fails the clause if the campaign has returned. It cannot
// tell a campaign that is blocked from one not yet started, so it never
// fails a good election.
func (e *env) stillWaiting(ch <-chan campaignResult, what string) {
	e.Helper()
	select {
	case r := <-ch:
		e.Fatalf("%s: Campaign returned (%v, %v) while another leads", what, r.ld, r.err)
	default:
	}
}

// ended waits for ctx to be done, failing the clause after waitLimit.
func (e *env) ended(ctx context.Context, what string) {
	e.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(waitLimit):
		e.Fatalf("%s: the context did not end within %v", what, waitLimit)
	}
}

// receive returns what ch delivers, failing the clause after waitLimit.
func receive[T any](e *env, ch <-chan T, what string) T {
	e.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		e.Fatalf("%s: nothing within %v", what, waitLimit)
		var zero T
		return zero
	}
}

// errInjected is the error of a failure the suite injects.
var errInjected = errors.New("electiontest: injected failure")

// faults wraps a provider so that a clause can make its renewals and
// releases fail, as a leader cut off from the provider sees them.
type faults struct {
	renew, release atomic.Bool
	// entered, if not nil, is told (without blocking) when AcquireWait is
	// called.
	entered chan struct{}
}

// faulty is the wrapped provider: Renew and Release fail when told to,
// everything else is the provider's. It embeds the methods of each
// capability, not the capability interfaces, which all embed
// lockprovider.Provider and would make its methods ambiguous.
type faulty struct {
	lock.Provider
	holders
	w lockprovider.Waiter
	f *faults
}

// holders are the methods of a lockprovider.Inspector.
type holders interface {
	Holder(ctx context.Context, name string) (lock.Holding, bool, error)
	Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error)
}

// clocks is the method of a lockprovider.TimeBase.
type clocks interface{ Clock() lease.Clock }

// watches is the method of a lockprovider.HolderWatcher.
type watches interface {
	WatchHolder(ctx context.Context, name string, fn func(lock.Holding)) error
}

// entering tells f.entered (without blocking) that a wait began.
func (f *faults) entering() {
	select {
	case f.entered <- struct{}{}:
	default:
	}
}

func (p *faulty) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	p.f.entering()
	return p.w.AcquireWait(ctx, name, executionID, d)
}

func (p *faulty) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if p.f.renew.Load() {
		return nil, errInjected
	}
	return p.Provider.Renew(ctx, leases, d)
}

func (p *faulty) Release(ctx context.Context, leases []lock.Lease) error {
	if p.f.release.Load() {
		return errInjected
	}
	return p.Provider.Release(ctx, leases)
}

// faultyValues are the methods of a lockprovider.ValueWaiter, the wait
// told to f as faulty's is.
type faultyValues struct {
	vw lockprovider.ValueWaiter
	f  *faults
}

func (v faultyValues) AcquireValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	return v.vw.AcquireValue(ctx, name, executionID, d, value)
}

func (v faultyValues) AcquireWaitValue(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	v.f.entering()
	return v.vw.AcquireWaitValue(ctx, name, executionID, d, value)
}

// wrap returns p wrapped, with the optional interfaces p has that an
// Election looks for: lockprovider.ValueWaiter, lockprovider.TimeBase and
// lockprovider.HolderWatcher. A provider that is not a Waiter and an
// Inspector is returned as it is, for New to refuse.
func (f *faults) wrap(p lock.Provider) lock.Provider {
	w, okW := p.(lockprovider.Waiter)
	in, okI := p.(lockprovider.Inspector)
	if !okW || !okI {
		return p
	}
	base := &faulty{Provider: p, holders: in, w: w, f: f}
	vw, okV := p.(lockprovider.ValueWaiter)
	va := faultyValues{vw: vw, f: f}
	tb, okT := p.(lockprovider.TimeBase)
	hw, okH := p.(lockprovider.HolderWatcher)
	switch {
	case okV && okT && okH:
		return struct {
			*faulty
			faultyValues
			clocks
			watches
		}{base, va, tb, hw}
	case okV && okT:
		return struct {
			*faulty
			faultyValues
			clocks
		}{base, va, tb}
	case okV && okH:
		return struct {
			*faulty
			faultyValues
			watches
		}{base, va, hw}
	case okT && okH:
		return struct {
			*faulty
			clocks
			watches
		}{base, tb, hw}
	case okV:
		return struct {
			*faulty
			faultyValues
		}{base, va}
	case okT:
		return struct {
			*faulty
			clocks
		}{base, tb}
	case okH:
		return struct {
			*faulty
			watches
		}{base, hw}
	}
	return base
}

// callbacks records what Run calls, as channels a clause waits on.
type callbacks struct {
	started chan *election.Leadership // every OnStartedLeading's leadership
	// strayCtx records an OnStartedLeading whose ctx was not its
	// leadership's Context, or that got no leadership (then sent as nil).
	strayCtx atomic.Bool
	stopped  chan struct{} // a value per OnStoppedLeading
	mu       sync.Mutex
	leaders  []election.Leader // every OnNewLeader, in order
	newLead  chan struct{}     // a value per OnNewLeader
}

func newCallbacks() *callbacks {
	return &callbacks{
		started: make(chan *election.Leadership, 64),
		stopped: make(chan struct{}, 64),
		newLead: make(chan struct{}, 64),
	}
}

func (c *callbacks) funcs() election.Callbacks {
	return election.Callbacks{
		OnStartedLeading: func(ctx context.Context, ld *election.Leadership) {
			if ld == nil || ctx != ld.Context() {
				c.strayCtx.Store(true)
				ld = nil
			}
			c.started <- ld
			<-ctx.Done()
		},
		OnStoppedLeading: func() { c.stopped <- struct{}{} },
		OnNewLeader: func(l election.Leader) {
			c.mu.Lock()
			c.leaders = append(c.leaders, l)
			c.mu.Unlock()
			c.newLead <- struct{}{}
		},
	}
}

// leadership returns the leadership of the next OnStartedLeading, failing
// the clause if it got none, or a ctx that is not the leadership's.
func (c *callbacks) leadership(e *env, what string) *election.Leadership {
	e.Helper()
	ld := receive(e, c.started, what)
	if ld == nil || c.strayCtx.Load() {
		e.Fatalf("%s: OnStartedLeading got no leadership, or a ctx that is not its Context", what)
	}
	return ld
}

func (c *callbacks) seen() []election.Leader {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]election.Leader(nil), c.leaders...)
}

// run starts el.Run with the callbacks on a goroutine, and returns the
// channel its error arrives on and the function that cancels it. The
// clause's end cancels it and waits for it.
func (e *env) run(el *election.Election, value string, c *callbacks) (<-chan error, context.CancelFunc) {
	ctx, cancel := context.WithCancel(background)
	out := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out <- el.Run(ctx, []byte(value), c.funcs())
	}()
	e.Cleanup(func() {
		cancel()
		<-done
	})
	return out, cancel
}
