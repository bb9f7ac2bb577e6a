package lock

import (
	"bytes"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/sharedopt"
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
//
// The clock, the panic handler and the logger are set by the options every
// constructor of the module shares: lease.WithClock, lease.WithPanicHandler
// and lease.WithLogger, which are Options too (see lease.SharedOption). The
// method ApplyLock takes a type internal to the module: only the module's
// options implement Option.
type Option interface {
	ApplyLock(*sharedopt.Target)
}

type optionFunc func(*managerOptions)

func (f optionFunc) ApplyLock(t *sharedopt.Target) { f(t.Own.(*managerOptions)) }

// DefaultLeaseDuration is a Manager's lease duration unless
// WithLeaseDuration says otherwise.
const DefaultLeaseDuration = 30 * time.Second

type managerOptions struct {
	shared         sharedopt.Settings // lease.WithClock, WithPanicHandler, WithLogger
	duration       time.Duration
	margin         time.Duration // < 0: duration/10
	retry          time.Duration // 0: duration/10
	executionID    string        // "": a random one
	clock          lease.Clock   // the provider's time base, or the shared clock, or the system's
	onReleaseError func(Lease, error)
	report         callback.Report // to the panic handler, or the logger
	value          []byte          // nil: none
	observer       Observer        // nil: none (WithObserver)
	tracers        []HoldTracer    // the observer's, or those it joins (lease.Observers)
}

// refuse records that option was given a value it can never take, unless
// an earlier option was refused already: NewManager reports the first.
func (o *managerOptions) refuse(option, detail string) { o.shared.Refuse(option, detail) }

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
// reported to the panic handler (lease.WithPanicHandler) and TryLock or Do
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
