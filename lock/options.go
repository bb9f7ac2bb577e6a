package lock

import (
	"bytes"
	"fmt"
	"time"

	"github.com/leasehold/lease"
)

// Option configures a Manager. Options are plain values, safe to share and
// reuse across NewManager calls.
//
// The rule for bad options: an option constructor panics on a value that
// can never be valid on its own (a duration that is not positive, an empty
// execution ID, a nil clock or function), which is a mistake in the
// program; NewManager returns an error for a configuration whose values do
// not work together or with the provider, which may come from a file or a
// flag. See NewManager for the rules.
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
	value          []byte   // nil: none
	observer       Observer // nil: none (WithObserver)
}

// WithLeaseDuration sets the duration of the leases the Manager acquires
// and renews (default 30 s). It renews them every third of it. It panics if
// d is not positive; NewManager returns an error if d is so short (under
// 3 ns) that its third is zero.
func WithLeaseDuration(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("lock: WithLeaseDuration(%v): not positive", d))
	}
	return optionFunc(func(o *managerOptions) { o.duration = d })
}

// WithExecutionID sets the executionID the Manager holds locks as (default:
// 32 random hex digits, unique per Manager). Managers sharing an ID still
// exclude each other: locks are not reentrant. It panics if id is empty.
func WithExecutionID(id string) Option {
	if id == "" {
		panic("lock: WithExecutionID: empty ID")
	}
	return optionFunc(func(o *managerOptions) { o.executionID = id })
}

// WithClock sets the clock a Manager over a provider without a time base
// (one that is not a TimeBase, such as a database) times renewals and
// safety deadlines on; the default is lease.SystemClock(). The Manager reads
// it through lease.MonotonicClock, so a step back of c reads as time
// standing still. A provider with its own time base (Memory) gives the
// Manager that one: NewManager returns an error if WithClock is given too.
// It panics if c is nil.
func WithClock(c lease.Clock) Option {
	if c == nil {
		panic("lock: WithClock: nil clock")
	}
	return optionFunc(func(o *managerOptions) { o.clock = c })
}

// WithSafetyMargin sets how long before the last confirmed expiry the
// Manager gives a lock up if no renewal has succeeded (default a tenth of
// the lease duration), to absorb clock drift and the time the function needs
// to notice. It panics if m is negative; NewManager returns an error unless
// m is shorter than what is left of the lease at its first renewal
// (duration - duration/3).
func WithSafetyMargin(m time.Duration) Option {
	if m < 0 {
		panic(fmt.Sprintf("lock: WithSafetyMargin(%v): negative", m))
	}
	return optionFunc(func(o *managerOptions) { o.margin = m })
}

// WithRetryInterval sets how soon a renewal that failed with an error is
// retried (default a tenth of the lease duration). It panics if r is not
// positive; NewManager returns an error unless a retry can land before the
// safety deadline: r must be shorter than duration - duration/3 - margin.
func WithRetryInterval(r time.Duration) Option {
	if r <= 0 {
		panic(fmt.Sprintf("lock: WithRetryInterval(%v): not positive", r))
	}
	return optionFunc(func(o *managerOptions) { o.retry = r })
}

// WithReleaseErrorHandler sets a function called with the lease and the
// error when releasing a lock after its function returned fails. Such an
// error is not returned by TryLock or Do, since the function's outcome
// stands and the lease expires on its own; by default it is dropped. f runs
// on the goroutine of the TryLock or Do, with no lock of the Manager held,
// and may call back into it. If f panics, the panic is recovered and
// reported to the panic handler (WithPanicHandler) and TryLock or Do
// returns as if f had returned. It panics with "lock:
// WithReleaseErrorHandler: nil handler" if f is nil.
func WithReleaseErrorHandler(f func(Lease, error)) Option {
	if f == nil {
		panic("lock: WithReleaseErrorHandler: nil handler")
	}
	return optionFunc(func(o *managerOptions) { o.onReleaseError = f })
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
// panic itself. It panics with "lock: WithPanicHandler: nil handler" if h
// is nil.
func WithPanicHandler(h func(*lease.PanicError)) Option {
	if h == nil {
		panic("lock: WithPanicHandler: nil handler")
	}
	return optionFunc(func(o *managerOptions) { o.onPanic = h })
}

// WithValue attaches a small value to every lock the Manager holds (a copy
// of v; default none), which an Inspector reports as Holding.Value: who the
// holder is, where to reach it. NewManager returns an error if v is longer
// than MaxValueSize or the provider cannot store values (it is not a
// ValueAcquirer; Memory is). An empty v is no value.
func WithValue(v []byte) Option {
	var c []byte
	if len(v) > 0 {
		c = bytes.Clone(v)
	}
	return optionFunc(func(o *managerOptions) { o.value = c })
}
