package etcd

import "github.com/leasehold/lease"

// DefaultPrefix is the key prefix a Provider uses unless [WithPrefix] says
// otherwise.
const DefaultPrefix = "lease/locks/"

// Option configures a Provider. Options are applied in order by [New], which
// validates the result.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	prefix string
	clock  lease.Clock
}

func defaultConfig() config {
	return config{prefix: DefaultPrefix, clock: lease.MonotonicClock(lease.SystemClock())}
}

// WithPrefix sets the prefix of the keys that hold the locks: the key of a
// lock is the prefix followed by its name. Providers that share a prefix
// share their locks. [New] refuses an empty prefix, which would put locks
// among any other keys of the cluster. The default is [DefaultPrefix].
func WithPrefix(prefix string) Option {
	return optionFunc(func(c *config) { c.prefix = prefix })
}

// WithClock sets the clock the Provider reads the caller's time from: the
// ExpiresAt it reports and records in a lock's key, and the instant it
// compares a recorded expiry with. It is wrapped in lease.MonotonicClock, so
// a wall clock stepping back never makes a holder's lease look longer or
// another's look expired early. The default is the system clock. [New]
// refuses a nil clock.
func WithClock(c lease.Clock) Option {
	return optionFunc(func(cfg *config) {
		cfg.clock = nil
		if c != nil {
			cfg.clock = lease.MonotonicClock(c)
		}
	})
}
