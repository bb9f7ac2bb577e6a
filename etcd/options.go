package etcd

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
}

func defaultConfig() config {
	return config{prefix: DefaultPrefix}
}

// WithPrefix sets the prefix of the keys that hold the locks: the key of a
// lock is the prefix followed by its name. Providers that share a prefix
// share their locks. [New] refuses an empty prefix, which would put locks
// among any other keys of the cluster. The default is [DefaultPrefix].
func WithPrefix(prefix string) Option {
	return optionFunc(func(c *config) { c.prefix = prefix })
}
