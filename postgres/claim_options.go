package postgres

import (
	"time"

	"github.com/leasehold/lease/claim"
)

// DefaultClaimTable is the table a ClaimStore uses unless [WithClaimTable]
// says otherwise.
const DefaultClaimTable = "lease_claims"

// DefaultPoll is how long a [ClaimStore.Notify] channel stays open at
// most unless [WithPoll] says otherwise: the bound on how late a
// waiter learns of an item whose notification was lost.
const DefaultPoll = time.Second

// DefaultBatch is the largest number of settlements, or of extensions,
// a ClaimStore sends in one statement unless [WithBatch] says
// otherwise.
const DefaultBatch = 1000

// ClaimOption configures a ClaimStore. Options are applied in order by
// [NewClaimStore], which validates the result.
type ClaimOption interface {
	applyClaim(*claimConfig)
}

type claimOptionFunc func(*claimConfig)

func (f claimOptionFunc) applyClaim(c *claimConfig) { f(c) }

type claimConfig struct {
	retention claim.Retention
	schema    string
	schemaSet bool
	table     string
	poll      time.Duration
	batch     int
	flushers  int
}

func defaultClaimConfig() claimConfig {
	return claimConfig{table: DefaultClaimTable, poll: DefaultPoll, batch: DefaultBatch, flushers: DefaultFlushers}
}

// WithClaimTable sets the name of the table that holds the items. The name
// is used as one quoted identifier, exactly as given (case and dots
// included); it must be 1 to 63 bytes of valid UTF-8 without NUL. The
// default is [DefaultClaimTable].
func WithClaimTable(name string) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) { c.table = name })
}

// WithClaimSchema places the table, and the table of applied migrations,
// in the given schema, which Migrate creates if it is missing. The rules of
// [WithClaimTable] apply, so an empty name is refused. Without it the
// tables are unqualified and found through the connection's search_path.
func WithClaimSchema(name string) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) { c.schema, c.schemaSet = name, true })
}

// WithRetention makes the store keep finished items for r (see
// claim.Retention): a completed or cancelled item becomes a row in state
// completed or cancelled instead of being deleted, and [ClaimStore.Clean]
// deletes the rows whose retention has passed, dead letters included when
// r.Dead is set. The default is the zero Retention: nothing finished is
// kept, dead letters stay until DeleteDead. Stores sharing a table should
// share a retention: each applies its own to the items it settles and
// cleans. A negative field is refused by [NewClaimStore] with an error
// naming it.
func WithRetention(r claim.Retention) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) { c.retention = r })
}

// WithPoll bounds how long a [ClaimStore.Notify] channel stays open
// when no notification arrives, so that a lost notification (a dropped
// connection, a transaction-mode pooler) only delays a waiter. d must be
// positive; the default is [DefaultPoll].
func WithPoll(d time.Duration) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) { c.poll = d })
}

// WithBatch sets the largest number of Settle calls, and of Extend
// calls, that the store coalesces into one statement. n must be at least 1;
// 1 sends each call on its own. The default is [DefaultBatch].
func WithBatch(n int) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) { c.batch = n })
}

// DefaultFlushers is how many batches of Claim calls, and of Settle
// calls, a ClaimStore may have under way at once unless
// [WithFlushers] says otherwise.
const DefaultFlushers = 1

// WithFlushers sets how many batches of Claim calls, and how many of
// Settle calls, the store may have under way at once, each on a connection
// of the pool: while one batch waits for its commit, the next is sent.
// Extend calls go one batch at a time. n must be at least 1; the store
// then uses up to 2n+1 connections of the pool for batches.
func WithFlushers(n int) ClaimOption {
	return claimOptionFunc(func(c *claimConfig) { c.flushers = n })
}
