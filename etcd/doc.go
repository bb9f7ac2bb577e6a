// Package etcd is a [lock.Provider] on etcd: named exclusive locks with
// fencing tokens, shared by every process that can reach the cluster.
//
// Each held lock is one key, the prefix (by default [DefaultPrefix]) followed
// by the lock's name, attached to an etcd lease of its own. The key exists
// exactly while the lock is held: etcd deletes it when the lease is revoked,
// by Release or by etcd's own expiry, so a lock never outlives its etcd
// lease, whatever any client's clock says.
//
//   - Acquire grants an etcd lease and creates the key in one transaction
//     that succeeds only if the key is absent; contention returns nil, nil.
//   - The fencing token is the key's create revision. etcd revisions grow
//     strictly across the whole store, so the tokens of a name grow across
//     releases, expiries and take-overs, and no two holdings share one.
//   - Renew keeps the etcd lease alive (or moves the key to a new lease of
//     the new duration), matching each lease by name, create revision and
//     execution ID.
//   - Release deletes the key if it still has the lease's create revision,
//     and revokes the etcd lease.
//   - AcquireWait (lockprovider.Waiter) serves the waiters of a name in order of
//     arrival: each queues a key of its own, on an etcd lease it keeps
//     alive, next to the lock's key, and watches the waiter ahead of it,
//     then the lock's key; Holder and Held (lockprovider.Inspector) read the keys;
//     AcquireValue (lockprovider.ValueAcquirer) records a small value in the key
//     with the execution ID; WatchHolder (lockprovider.HolderWatcher) watches
//     the lock's key, so that an election's Observe sees a new leader at
//     once.
//   - The calls that clean up after a caller whose context is done (the
//     revocation of an etcd lease that holds nothing, a waiter leaving the
//     queue) are given a tenth of the lock's TTL, at most 5 s.
//
// # Durations and clocks
//
// etcd lease TTLs are whole seconds, and a server raises a TTL below its
// minimum (1.5 election timeouts, rounded up: 2 s with the defaults) to that
// minimum. So a duration d is rounded up to whole seconds, and a lease lasts
// the TTL the server granted.
//
// etcd reports no expiry instant, only a TTL, so the ExpiresAt of a Lease is
// on the caller's clock: the time.Now read before the request was sent,
// plus the granted TTL. The server starts the TTL when it handles the
// request, later, so the lease ends on the server no earlier than ExpiresAt
// as long as the two clocks run at the same rate; their offset does not
// matter. The provider's clock is therefore the client's system clock.
//
// etcd notices an expired lease up to half a second late (its lessor scans
// every 500 ms) and only then deletes the key. Every key also records its
// holder's ExpiresAt, so an Acquire that finds a key whose recorded expiry has
// passed on its own clock waits, up to [ExpiryWait], for etcd to delete it,
// and a Renew refuses a lease whose ExpiresAt has passed even if etcd still
// keeps it. The recorded time only decides whether to wait: the key is taken
// over only once etcd has deleted it, so clock skew between clients can delay
// a take-over but never allow two holders.
//
// # Limits
//
// A key is the prefix and the name; a value holds the execution ID and the
// holder's value. A waiter's queue key is the lock's key, a NUL byte and
// the waiter's etcd lease ID, so lock names with a NUL byte in them should
// not be used. Acquire does not queue, so it may take a just-released lock
// ahead of the first waiter. etcd refuses a request larger than its --max-request-bytes (1.5 MiB by
// default). Renew and Release take a few round trips per lease, not one per
// batch. A lease listed twice in a Renew is renewed and returned twice.
//
// Errors from etcd are returned wrapped, so errors.Is finds the client's
// errors and context.DeadlineExceeded. Bad input is rejected before
// anything is sent, with a *lease.Error of code LS_INVALID_ARGUMENT.
package etcd
