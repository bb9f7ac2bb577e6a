package postgres

import "time"

// DefaultLockTable is the table a LockProvider uses unless [WithLockTable]
// says otherwise.
const DefaultLockTable = "lease_locks"

// LockOption configures a LockProvider. Options are applied in order by
// [NewLockProvider], which validates the result.
type LockOption interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	schema    string
	schemaSet bool // WithSchema was given, even with ""
	table     string
	lockDelay time.Duration
}

func defaultConfig() config {
	return config{table: DefaultLockTable}
}

// WithLockTable sets the name of the table that holds the locks. The name is
// used as one quoted identifier, exactly as given (case and dots included);
// it must be 1 to 63 bytes of valid UTF-8 without NUL. The default is
// [DefaultLockTable].
func WithLockTable(name string) LockOption {
	return optionFunc(func(c *config) { c.table = name })
}

// WithLockSchema places the table in the given schema, which Migrate
// creates if it is missing. The same rules as for [WithLockTable] apply, so
// [NewLockProvider] refuses an empty name: it is more likely an unset
// setting than a wish for the default. Without WithLockSchema the table is
// unqualified and found through the connection's search_path.
func WithLockSchema(name string) LockOption {
	return optionFunc(func(c *config) { c.schema, c.schemaSet = name, true })
}

// WithLockDelay keeps a lock whose lease EXPIRED (not one that was released)
// unavailable for d more, measured on the database's clock, so writes from
// a stalled holder that does not yet know it lost the lock land before the
// next holder starts (Chubby's lock-delay). The default is 0; d must not be
// negative.
func WithLockDelay(d time.Duration) LockOption {
	return optionFunc(func(c *config) { c.lockDelay = d })
}
