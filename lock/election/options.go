package election

import (
	"time"

	"github.com/leasehold/lease"
)

// Option configures an Election. Options are plain values, safe to share
// and reuse across New calls. They only record what they are given: New
// checks the values, and returns an error for any that cannot work, so a
// configuration read from a file or a flag is refused, not a panic. A nil
// clock, function or observer is refused by New too: option constructors
// never panic.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// DefaultLeaseDuration is an Election's lease duration unless
// WithLeaseDuration says otherwise: a crashed leader is replaced within
// about that long.
const DefaultLeaseDuration = 15 * time.Second

type options struct {
	duration time.Duration
	margin   time.Duration // unset: a tenth of duration
	retry    time.Duration // unset: a tenth of duration
	poll     time.Duration // unset: lockprovider.PollInterval(duration)
	set      setFlags
	clock    lease.Clock // nil: the provider's time base, or the system clock
	onPanic  func(*lease.PanicError)
	observer Observer // nil: none (WithObserver)
	bad      error    // the first option refused for a nil, reported by New
}

// refuse records that option was given nil, unless an earlier option was
// refused already: New reports the first.
func (o *options) refuse(option, detail string) {
	if o.bad == nil {
		o.bad = invalid(opNew, option, detail)
	}
}

// setFlags records which durations were given, so that a zero given is
// refused rather than taken for the default.
type setFlags struct{ margin, retry, poll bool }

// WithLeaseDuration sets the duration of the leader's lease (default
// DefaultLeaseDuration). The leader renews it every third of it, and a
// leader that stops renewing is replaced within about d. New refuses a d
// whose third rounds to zero.
func WithLeaseDuration(d time.Duration) Option {
	return optionFunc(func(o *options) { o.duration = d })
}

// WithSafetyMargin sets how long before the last confirmed expiry a leader
// whose renewals fail gives the leadership up (default a tenth of the lease
// duration). New refuses a margin that is negative or not shorter than
// what is left of the lease at its first renewal (duration - duration/3).
func WithSafetyMargin(m time.Duration) Option {
	return optionFunc(func(o *options) { o.margin, o.set.margin = m, true })
}

// WithRetryInterval sets how soon a renewal that failed is retried, and how
// soon Run campaigns again after a campaign failed (default a tenth of the
// lease duration). New refuses one that is not positive or not shorter than
// duration - duration/3 - margin, so that a retry can always land before
// the safety deadline.
func WithRetryInterval(r time.Duration) Option {
	return optionFunc(func(o *options) { o.retry, o.set.retry = r, true })
}

// WithPollInterval sets how often Observe (and so Run's OnNewLeader) asks
// the provider who leads: a change of leader is seen within about p
// (default lockprovider.PollInterval of the lease duration: a tenth of it, at
// least 10 ms). On a provider that watches instead (a lockprovider.HolderWatcher) it is
// only how soon a watch that failed is started again. New refuses a p
// that is not positive.
func WithPollInterval(p time.Duration) Option {
	return optionFunc(func(o *options) { o.poll, o.set.poll = p, true })
}

// WithClock sets the clock an Election over a provider without a time base
// (one that is not a lockprovider.TimeBase, such as a database) times renewals,
// safety deadlines, retries and polls on; the default is
// lease.SystemClock(), read through lease.MonotonicClock. A provider with
// its own time base (lock.Memory) gives the Election that one, and New
// refuses WithClock for it. New returns an error if c is nil.
func WithClock(c lease.Clock) Option {
	return optionFunc(func(o *options) {
		if c == nil {
			o.refuse("WithClock", "clock must not be nil")
			return
		}
		o.clock = c
	})
}

// WithPanicHandler sets the function that receives the panics the Election
// recovers from the code it calls back (default lease.LogPanic): Run's
// callbacks ("on started leading", "on stopped leading", "on new leader")
// and the provider's Renew when a renewal timer calls it ("provider
// renew"; the renewal then counts as failed). h runs on the goroutine of
// the callback that panicked, with no lock of the Election held; it must
// not panic itself. New returns an error if h is nil.
func WithPanicHandler(h func(*lease.PanicError)) Option {
	return optionFunc(func(o *options) {
		if h == nil {
			o.refuse("WithPanicHandler", "handler must not be nil")
			return
		}
		o.onPanic = h
	})
}
