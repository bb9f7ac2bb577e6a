package election

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/optcore"
	"github.com/leasehold/lease/internal/renewal"
	"github.com/leasehold/lease/internal/sharedopt"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// MaxCandidateValueSize is the largest value a candidate may attach: a host
// name, an address, an identity. It is below lock.MaxValueSize, the largest
// value of a holding, because the candidate's value also travels,
// base64-encoded, in the lock's execution ID, which every provider must
// store (PostgreSQL's hold at most 1024 bytes).
const MaxCandidateValueSize = 512

// Election is one leader election: the lock name it is fought over, on a
// provider. It keeps no state between calls: every Campaign is a candidate
// of its own, and any number of Elections, in any number of processes, may
// share a name.
//
// Each Campaign holds its lock with a lock.Manager of its own, on a
// goroutine that waits for the lock and then for the leadership to end, and
// is over by the time Resign returns. The renewals run as callbacks of the
// clock (inside Advance on a leasetest.FakeClock), as the Manager's do.
//
// An Election is safe for concurrent use.
type Election struct {
	name     string
	provider lock.Provider
	// held is provider as a campaign's Manager sees it: its releases
	// bounded (bound.go).
	held      lock.Provider
	inspector lockprovider.Inspector
	valuer    lockprovider.ValueWaiter // nil: the value travels only in the execution ID
	opts      options
	// managerOpts configure the lock.Manager of each campaign: the
	// schedule, the panic handler and, without a time base, the clock.
	managerOpts []lock.Option
}

// Leader is who leads an election, as Leader and Observe report it. It is a
// plain value; Value is the caller's own copy.
type Leader struct {
	// Value is what the leader attached to its campaign; nil for none.
	Value []byte
	// Token is the fencing token of the leader's lock: every new leadership
	// has a greater one, so a change of leader is a change of Token.
	Token uint64
	// ExpiresAt is when the leader's lease ends unless renewed, on the
	// provider's clock.
	ExpiresAt time.Time
}

const opNew = "New"

// New returns an Election for the lock name on provider, or an error for a
// configuration that cannot work: a *lease.Error with Code
// lease.CodeInvalidArgument whose Field names the argument or the option
// at fault (such as "WithSafetyMargin") and whose Detail gives the rule and
// the values. It refuses
//
//   - a nil provider, or one that is not a lockprovider.Waiter (a candidate waits
//     for the lock without polling) and a lockprovider.Inspector (Leader and
//     Observe ask it who holds the lock);
//   - an empty name;
//   - lease.WithClock for a provider that has its own time base (lockprovider.TimeBase);
//   - a lease duration whose third rounds to zero, a safety margin or a
//     retry interval that lock.NewManager would refuse (see its rules), and
//     a poll interval that is not positive.
func New(provider lock.Provider, name string, opts ...Option) (*Election, error) {
	if provider == nil {
		return nil, invalid(opNew, "provider", "must not be nil")
	}
	// The Manager of each campaign waits on the Waiter.
	if _, ok := provider.(lockprovider.Waiter); !ok {
		return nil, invalid(opNew, "provider", "the provider cannot wait for a lock: it does not implement lockprovider.Waiter")
	}
	in, ok := provider.(lockprovider.Inspector)
	if !ok {
		return nil, invalid(opNew, "provider", "the provider cannot say who holds a lock: it does not implement lockprovider.Inspector")
	}
	if name == "" {
		return nil, invalid(opNew, "name", "must not be empty")
	}
	o := options{duration: DefaultLeaderLeaseDuration}
	if r := optcore.Apply(&sharedopt.Target{Shared: &o.shared, Own: &o}, opts, Option.ApplyElection); r != nil {
		return nil, invalid(opNew, r.Option, r.Detail)
	}
	o.report = sharedopt.Reporter(&o.shared)
	e := &Election{name: name, provider: provider, inspector: in}
	e.valuer, _ = provider.(lockprovider.ValueWaiter)
	tb, isTB := provider.(lockprovider.TimeBase)
	switch {
	case isTB && o.shared.HasClock:
		return nil, invalid(opNew, "WithClock",
			"the provider has its own time base (it implements lockprovider.TimeBase, as lock.Memory does), which the Election reads; a second clock would disagree with it")
	case isTB:
		if o.clock = tb.Clock(); o.clock == nil {
			return nil, invalid(opNew, "provider", "its Clock (lockprovider.TimeBase) returned nil")
		}
	case o.shared.HasClock:
		o.clock = lease.MonotonicClock(o.shared.Clock)
	default:
		o.clock = lease.MonotonicClock(lease.SystemClock())
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	e.opts = o
	e.held = e.bounded()
	e.managerOpts = []lock.Option{lock.WithLeaseDuration(o.duration)}
	for _, so := range sharedopt.Pass(&o.shared) {
		e.managerOpts = append(e.managerOpts, so)
	}
	if o.set.margin {
		e.managerOpts = append(e.managerOpts, lock.WithSafetyMargin(o.margin))
	}
	if o.set.retry {
		e.managerOpts = append(e.managerOpts, lock.WithRetryInterval(o.retry))
	} else {
		e.opts.retry = renewal.DefaultRetry(o.duration)
	}
	if !isTB {
		e.managerOpts = append(e.managerOpts, lease.WithClock(o.clock))
	}
	// The schedule's rules are lock.NewManager's: ask it, and give its
	// answer as New's.
	if _, err := lock.NewManager(provider, e.managerOpts...); err != nil {
		var le *lease.Error
		if errors.As(err, &le) {
			c := *le
			c.Package, c.Op = "election", opNew
			return nil, &c
		}
		return nil, err
	}
	return e, nil
}

// check refuses the values no schedule can use, which lock's options would
// panic on, and fills in the poll interval.
func (o *options) check() error {
	switch {
	case o.duration <= 0:
		return invalid(opNew, "WithLeaseDuration", "lease duration "+o.duration.String()+" is not positive")
	case o.margin < 0:
		return invalid(opNew, "WithSafetyMargin", "safety margin "+o.margin.String()+" is negative")
	case o.set.retry && o.retry <= 0:
		return invalid(opNew, "WithRetryInterval", "retry interval "+o.retry.String()+" is not positive")
	case o.set.poll && o.poll <= 0:
		return invalid(opNew, "WithPollInterval", "poll interval "+o.poll.String()+" is not positive")
	case !o.set.poll:
		o.poll = lockprovider.PollInterval(o.duration)
	}
	return nil
}

func invalid(op, field, detail string) *lease.Error {
	return &lease.Error{Package: "election", Code: lease.CodeInvalidArgument, Op: op, Field: field, Detail: detail}
}

// Name returns the lock name the Election is fought over.
func (e *Election) Name() string { return e.name }

// LeaseDuration returns the duration of the leader's lease.
func (e *Election) LeaseDuration() time.Duration { return e.opts.duration }

// reportPanic reports a panic recovered from a callback to the panic
// handler.
func (e *Election) reportPanic(name string, value any, stack []byte) {
	e.opts.report(name, value, stack)
}

// Campaign makes a candidate with value attached (a copy; nil for none)
// and blocks until it leads, then returns its Leadership; or, when ctx is
// done first, returns ctx.Err() holding nothing. Candidates wait on the
// provider's lockprovider.Waiter, so a freed lock is taken at once; the order in
// which waiting candidates win is the provider's (first come, first served
// on lock.Memory and the etcd provider).
//
// ctx stays tied to the leadership: when it is done, the leadership ends
// and the lock is released at once (so the next leader does not wait for
// the lease to expire), and the Leadership's context ends with ctx's
// cause. Cancel ctx or call Resign to give the leadership up; either way,
// call Resign (or cancel ctx) once the leadership is over, so that its
// renewals stop. The release that ends every leadership is bounded by the
// retry interval (see Leadership.Resign).
//
// A value longer than MaxCandidateValueSize or a nil ctx is refused with a
// *lease.Error (lease.ErrInvalidArgument) naming it; a failure of the
// provider is returned as it is.
func (e *Election) Campaign(ctx context.Context, value []byte) (*Leadership, error) {
	if ctx == nil {
		return nil, invalid("campaign", "ctx", "must not be nil")
	}
	if len(value) > MaxCandidateValueSize {
		return nil, invalid("campaign", "value",
			strconv.Itoa(len(value))+" bytes is more than MaxCandidateValueSize ("+strconv.Itoa(MaxCandidateValueSize)+")")
	}
	value = bytes.Clone(value)
	opts := append([]lock.Option{lock.WithExecutionID(executionID(value))}, e.managerOpts...)
	if e.valuer != nil && len(value) > 0 {
		opts = append(opts, lock.WithValue(value))
	}
	ld := &Leadership{value: value, done: make(chan struct{})}
	opts = append(opts, lock.WithReleaseErrorHandler(ld.setReleaseError))
	m, err := lock.NewManager(e.held, opts...)
	if err != nil {
		return nil, err // New checked everything NewManager checks
	}
	won := make(chan struct{})
	var lockErr error
	go func() {
		defer close(ld.done)
		lockErr = m.Lock(ctx, e.name, func(hctx context.Context, l lock.Lease) error {
			ld.token = l.Token
			ld.ctx, ld.cancel = context.WithCancelCause(hctx)
			// Told before Campaign returns, as the deposed event is
			// before Resign returns: an observer never sees a leader
			// act before it sees the leader elected.
			e.observe(EventElected, value, l.Token, ld.ctx)
			close(won)
			<-ld.ctx.Done()
			e.observe(EventDeposed, value, l.Token, ld.ctx)
			return nil
		})
	}()
	select {
	case <-won:
		return ld, nil
	case <-ld.done:
		select {
		case <-won: // won, and already over: the caller learns it from Context
			return ld, nil
		default:
		}
		if lockErr == nil {
			lockErr = ErrLeadershipLost // never happens: fn ran, so won is closed
		}
		return nil, lockErr
	}
}

// Leader returns who leads now: the leader's value, token and lease
// expiry, or ErrNoLeader when nobody does. The answer is a snapshot; the
// leadership may change as soon as it is given.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	if ctx == nil {
		return Leader{}, invalid("leader", "ctx", "must not be nil")
	}
	h, ok, err := e.inspector.Holder(ctx, e.name)
	if err != nil {
		return Leader{}, err
	}
	if !ok {
		return Leader{}, ErrNoLeader
	}
	return leaderOf(h), nil
}

// leaderOf makes a Leader of a holding of the election's lock: its value is
// the one the provider stored, or else the one carried in the execution
// ID.
func leaderOf(h lock.Holding) Leader {
	v := h.Value
	if v == nil {
		v = valueOf(h.ExecutionID)
	}
	return Leader{Value: v, Token: h.Token, ExpiresAt: h.ExpiresAt}
}

// A candidate's execution ID is 32 random hex digits, unique to the
// campaign, then, if it has a value, a dot and the value in unpadded
// base64url. It is valid text for every provider, and at most
// 33 + 683 bytes long.

// executionID returns a new execution ID carrying value.
func executionID(value []byte) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	id := hex.EncodeToString(b[:])
	if len(value) == 0 {
		return id
	}
	return id + "." + base64.RawURLEncoding.EncodeToString(value)
}

// valueOf returns the value an execution ID carries: nil for none, and for
// an ID that is not a candidate's (a lock taken by other means).
func valueOf(id string) []byte {
	_, enc, ok := strings.Cut(id, ".")
	if !ok {
		return nil
	}
	v, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(v) == 0 {
		return nil
	}
	return v
}
