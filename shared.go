package lease

import (
	"log/slog"

	"github.com/leasehold/lease/internal/optcore"
)

// SharedOption is an option that every constructor of the module accepts:
// New and Restore here, lock.NewManager, claim.New and election.New. The
// settings every one of them has, the clock (WithClock), the panic handler
// (WithPanicHandler) and the logger (WithLogger), are set by these options
// alone, so a program writes them once and passes the same values to each:
//
//	clock := lease.WithClock(clk)
//	svc, err := lease.New(clock)
//	mgr, err := lock.NewManager(provider, clock, lock.WithLeaseDuration(d))
//
// A package's own options stay its own: a lock option does not compile as
// a claim option. The methods ApplyLock, ApplyClaim and ApplyElection are
// how a SharedOption satisfies those packages' Option interfaces; their
// parameter is internal to the module, so no other type can. The zero
// SharedOption sets nothing and is refused by every constructor. A
// SharedOption is a plain value, safe to share and reuse across calls and
// goroutines.
type SharedOption struct {
	set func(*shared)
}

// shared is the instantiation of the option core's settings: the only one.
type shared = optcore.Shared[Clock, *PanicError]

// apply makes a SharedOption an Option of New and Restore.
func (o SharedOption) apply(opts *options) { o.applyShared(&opts.shared) }

// ApplyLock applies o to the settings of a lock.Manager; it makes o a
// lock.Option.
func (o SharedOption) ApplyLock(t *optcore.Target[Clock, *PanicError]) { o.applyShared(t.Shared) }

// ApplyClaim applies o to the settings of a claim.Broker; it makes o a
// claim.Option.
func (o SharedOption) ApplyClaim(t *optcore.Target[Clock, *PanicError]) { o.applyShared(t.Shared) }

// ApplyElection applies o to the settings of an election.Election; it
// makes o an election.Option.
func (o SharedOption) ApplyElection(t *optcore.Target[Clock, *PanicError]) { o.applyShared(t.Shared) }

func (o SharedOption) applyShared(s *shared) {
	if o.set == nil {
		s.Refuse("SharedOption", "the zero SharedOption sets nothing: use WithClock, WithPanicHandler or WithLogger")
		return
	}
	o.set(s)
}

// WithClock sets the clock a component reads time from and arms its timers
// on. The default is SystemClock(). A Service reads c through
// MonotonicClock, so a step back of c reads as time standing still; so do
// a lock.Manager, a claim.Broker and an Election.
//
// A component over something that has a clock of its own (a lock.Manager
// or an Election over a lockprovider.TimeBase such as lock.Memory, a claim.Broker
// over a claimstore.TimeBase such as claim.Memory) reads that one:
// its constructor returns an error if WithClock is given too, since a
// second clock would disagree with it. Every constructor returns an error
// if c is nil.
func WithClock(c Clock) SharedOption {
	return SharedOption{set: func(s *shared) {
		if c == nil {
			s.Refuse("WithClock", "clock must not be nil")
			return
		}
		s.Clock, s.HasClock = c, true
	}}
}

// WithPanicHandler sets the function that receives the panics a component
// recovers from the code it calls back (observers, ending subscribers,
// handlers, hooks; PanicError names each). The default logs each panic
// with LogPanic, to the logger of WithLogger if one is given. h runs on the
// goroutine of the callback that panicked, outside the component's locks;
// it must not panic itself. Every constructor returns an error if h is nil.
func WithPanicHandler(h func(*PanicError)) SharedOption {
	return SharedOption{set: func(s *shared) {
		if h == nil {
			s.Refuse("WithPanicHandler", "handler must not be nil")
			return
		}
		s.OnPanic = h
	}}
}

// WithLogger sets the logger a component writes to: the records of the
// default panic handler (see LogPanic), which is all the module logs on
// its own. The default is slog.Default(), read when a record is written.
// A handler given by WithPanicHandler replaces the logging; the logger is
// then unused. Every constructor returns an error if l is nil.
func WithLogger(l *slog.Logger) SharedOption {
	return SharedOption{set: func(s *shared) {
		if l == nil {
			s.Refuse("WithLogger", "logger must not be nil")
			return
		}
		s.Logger = l
	}}
}

// newPanicError is the PanicError of a recovered panic.
func newPanicError(name string, value any, stack []byte) *PanicError {
	return &PanicError{Callback: name, Value: value, Stack: stack}
}
