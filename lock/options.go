package lock

import (
	"bytes"
	"time"

	"github.com/leasehold/lease"
)

// Option configures a Manager. Options are plain values, safe to share and
// reuse across NewManager calls.
//
// The rule for bad options: an option constructor never panics. It records
// what it is given, and NewManager returns a *lease.Error with Code
// lease.CodeInvalidArgument whose Field names the option for a value that
// can never be valid (a duration that is not positive, an empty execution
// ID, a nil clock or function) and for a configuration whose values do not
// work together or with the provider. See NewManager for the rules.
type Option interface {
	apply(*managerOptions)
}

type optionFunc func(*managerOptions)

func (f optionFunc) apply(o *managerOptions) { f(o) }

// DefaultLeaseDuration is a Manager's lease duration unless
// WithLeaseDuration says otherwise.
const DefaultLeaseDuration = 30 * time.Second

type managerOptions struct {
	duration       time.Duration
	margin         time.Duration // < 0: duration/10
	retry          time.Duration // 0: duration/10
	executionID    string        // "": a random one
	clock          lease.Clock   // nil: the provider's time base, or the system clock
	onReleaseError func(Lease, error)
	onPanic        func(*lease.PanicError)
	value          []byte       // nil: none
	observer       Observer     // nil: none (WithObserver)
	tracers        []HoldTracer // the observer's, or those it joins (lease.Observers)
	bad            error        // the first option refused, reported by NewManager
}

// refuse records that option was given a value it can never take, unless
// an earlier option was refused already: NewManager reports the first.
func (o *managerOptions) refuse(option, detail string) {
	if o.bad == nil {
		o.bad = invalid(opNewManager, option, detail)
	}
}

// WithLeaseDuration sets the duration of the leases the Manager acquires
// and renews (default 30 s). It renews them every third of it. NewManager
// returns an error if d is not positive or so short (under 3 ns) that its
// third is zero.
func WithLeaseDuration(d time.Duration) Option {
	return optionFunc(func(o *managerOptions) {
		if d <= 0 {
			o.refuse("WithLeaseDuration", "lease duration "+d.String()+" is not positive")
		}
		o.duration = d
	})
}

// WithExecutionID sets the executionID the Manager holds locks as (default:
// 32 random hex digits, unique per Manager). Managers sharing an ID still
// exclude each other: locks are not reentrant. NewManager returns an error
// if id is empty.
func WithExecutionID(id string) Option {
	return optionFunc(func(o *managerOptions) {
		if id == "" {
			o.refuse("WithExecutionID", "execution ID must not be empty")
		}
		o.executionID = id
	})
}

// WithClock sets the clock a Manager over a provider without a time base
// (one that is not a lockprovider.TimeBase, such as a database) times renewals and
// safety deadlines on; the default is lease.SystemClock(). The Manager reads
// it through lease.MonotonicClock, so a step back of c reads as time
// standing still. A provider with its own time base (Memory) gives the
// Manager that one: NewManager returns an error if WithClock is given too.
// NewManager returns an error if c is nil.
func WithClock(c lease.Clock) Option {
	return optionFunc(func(o *managerOptions) {
		if c == nil {
			o.refuse("WithClock", "clock must not be nil")
		}
		o.clock = c
	})
}

// WithSafetyMargin sets how long before the last confirmed expiry the
// Manager gives a lock up if no renewal has succeeded (default a tenth of
// the lease duration), to absorb clock drift and the time the function needs
// to notice. NewManager returns an error if m is negative or not shorter
// than what is left of the lease at its first renewal (duration -
// duration/3).
func WithSafetyMargin(m time.Duration) Option {
	return optionFunc(func(o *managerOptions) {
		if m < 0 {
			o.refuse("WithSafetyMargin", "safety margin "+m.String()+" is negative")
			return
		}
		o.margin = m
	})
}

// WithRetryInterval sets how soon a renewal that failed with an error is
// retried (default a tenth of the lease duration). NewManager returns an
// error if r is not positive, or unless a retry can land before the safety
// deadline: r must be shorter than duration - duration/3 - margin.
func WithRetryInterval(r time.Duration) Option {
	return optionFunc(func(o *managerOptions) {
		if r <= 0 {
			o.refuse("WithRetryInterval", "retry interval "+r.String()+" is not positive")
			return
		}
		o.retry = r
	})
}

// WithReleaseErrorHandler sets a function called with the lease and the
// error when releasing a lock after its function returned fails. Such an
// error is not returned by TryLock or Do, since the function's outcome
// stands and the lease expires on its own; by default it is dropped. f runs
// on the goroutine of the TryLock or Do, with no lock of the Manager held,
// and may call back into it. If f panics, the panic is recovered and
// reported to the panic handler (WithPanicHandler) and TryLock or Do
// returns as if f had returned. NewManager returns an error if f is nil.
func WithReleaseErrorHandler(f func(Lease, error)) Option {
	return optionFunc(func(o *managerOptions) {
		if f == nil {
			o.refuse("WithReleaseErrorHandler", "handler must not be nil")
			return
		}
		o.onReleaseError = f
	})
}

// WithPanicHandler sets the function that receives the panics the Manager
// recovers from the code it calls back (default lease.LogPanic): the
// release-error handler ("release error handler") and the provider's
// Renew when a renewal timer calls it ("provider renew"; the renewal then
// counts as failed and is retried). This is the module's one policy for a
// panicking callback: recover, report, go on as if it had returned. The
// function a TryLock or Do runs is not a callback: its panic reaches the
// caller once the lock is released. h runs on the goroutine of the
// callback that panicked, with no lock of the Manager held; it must not
// panic itself. NewManager returns an error if h is nil.
func WithPanicHandler(h func(*lease.PanicError)) Option {
	return optionFunc(func(o *managerOptions) {
		if h == nil {
			o.refuse("WithPanicHandler", "handler must not be nil")
			return
		}
		o.onPanic = h
	})
}

// WithValue attaches a small value to every lock the Manager holds (a copy
// of v; default none), which a lockprovider.Inspector reports as Holding.Value: who the
// holder is, where to reach it. NewManager returns an error if v is longer
// than MaxValueSize or the provider cannot store values (it is not a
// lockprovider.ValueAcquirer; Memory is). An empty v is no value.
func WithValue(v []byte) Option {
	var c []byte
	if len(v) > 0 {
		c = bytes.Clone(v)
	}
	return optionFunc(func(o *managerOptions) { o.value = c })
}
