// Package postgres is a [lock.Provider] on PostgreSQL: named exclusive locks
// with fencing tokens, shared by every process that can reach the database.
//
// Each lock is one row of a table (by default lease_locks, created by
// [LockProvider.Migrate]). Every decision is taken by the database in a
// single statement against its own clock, so clock skew between application hosts
// cannot give two holders the same lock:
//
//   - Acquire is one INSERT ... ON CONFLICT DO UPDATE that inserts the row or
//     takes over a row whose lease has expired or was released; contention
//     returns nil, nil.
//   - Fencing tokens are drawn from a sequence by that same statement, after
//     it holds the row's lock, and never below the row's previous token plus
//     one. So they are unique across names and strictly increase per name
//     across take-overs, releases and server restarts. A release keeps the
//     row, marked released, with its last token.
//   - Renew and Release take one round trip for a whole list, matching each
//     lease by name, execution ID and token. Release notifies the freed
//     names (pg_notify) from the same statement.
//   - [LockProvider.AcquireWait] (a [lockprovider.Waiter]) waits for a held lock,
//     first come, first served across processes (a ticket per waiter in a
//     second table), woken by a release's notification, heard on one
//     LISTEN connection per LockProvider outside the pool, or at the holder's
//     expiry as the database reads it; [LockProvider.Holder] and
//     [LockProvider.Held] (a [lockprovider.Inspector]) read who holds what in one
//     SELECT. The provider stores no values with a lock.
//
// The package also holds [ClaimStore], a [claim.Store] over one table (by
// default lease_claims, created by [ClaimStore.Migrate], whose migrations
// are versioned and recorded): a durable work queue. Claim is one UPDATE
// over the claimable rows of a queue (FOR UPDATE SKIP LOCKED), where a
// claim whose lease expired on the database's clock counts as claimable,
// so no rescuer is needed; each claim carries a per-item token that
// Extend and Settle must match. Claim, Extend and Settle calls from many
// goroutines are coalesced into one statement per round trip, and
// [ClaimStore.Notify] wakes waiters from one shared LISTEN connection,
// with a bounded poll behind it.
//
// Point the pool at the primary and keep synchronous_commit on (the
// default): tokens survive a crash only if an acknowledged commit is on disk.
// Each call is one statement in its own implicit transaction, so the
// provider also works behind a transaction-mode connection pooler, except
// that AcquireWait's notifications need a session (without one, waiters
// fall back on polling).
//
// Errors from the database are returned wrapped, so errors.As finds the
// driver's *pgconn.PgError and errors.Is finds context.DeadlineExceeded.
// Bad input is rejected before anything is sent, with a *lease.Error of code
// LS_INVALID_ARGUMENT.
//
// The tests need a server: run ../scripts/with-postgres go test ./... from
// this directory, which starts a throwaway one.
package postgres
