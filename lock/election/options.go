package election

import (
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/sharedopt"
)

// Option configures an Election. Options are plain values, safe to share
// and reuse across New calls. They only record what they are given: New
// checks the values, and returns an error for any that cannot work, so a
// configuration read from a file or a flag is refused, not a panic. A nil
// clock, function or observer is refused by New too: option constructors
// never panic.
//
// The clock, the panic handler and the logger are set by the options every
// constructor of the module shares: lease.WithClock, lease.WithPanicHandler
// and lease.WithLogger, which are Options too (see lease.SharedOption). The
// method ApplyElection takes a type internal to the module: only the
// module's options implement Option.
type Option interface {
	ApplyElection(*sharedopt.Target)
}

type optionFunc func(*options)

func (f optionFunc) ApplyElection(t *sharedopt.Target) { f(t.Own.(*options)) }

// DefaultLeaderLeaseDuration is an Election's lease duration unless
// WithLeaseDuration says otherwise: a crashed leader is replaced within
// about that long. It is shorter than lock.DefaultLeaseDuration, a lock
// Manager's, because a crashed leader leaves a whole role unserved.
const DefaultLeaderLeaseDuration = 15 * time.Second

type options struct {
	shared   sharedopt.Settings // lease.WithClock, WithPanicHandler, WithLogger
	duration time.Duration
	margin   time.Duration // unset: a tenth of duration
	retry    time.Duration // unset: a tenth of duration
	poll     time.Duration // unset: lockprovider.PollInterval(duration)
	set      setFlags
	clock    lease.Clock     // the provider's time base, or the shared clock, or the system's
	report   callback.Report // to the panic handler, or the logger
	observer Observer        // nil: none (WithObserver)
}

// refuse records that option was given nil, unless an earlier option was
// refused already: New reports the first.
func (o *options) refuse(option, detail string) { o.shared.Refuse(option, detail) }

// setFlags records which durations were given, so that a zero given is
// refused rather than taken for the default.
type setFlags struct{ margin, retry, poll bool }

// WithLeaseDuration sets the duration of the leader's lease (default
// DefaultLeaderLeaseDuration). The leader renews it every third of it, and a
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
