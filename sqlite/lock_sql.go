package sqlite

// The lock statements. Times are nanoseconds since the Unix epoch on the
// store's clock; a released lock has expires_at the smallest integer.
var (
	// :name, :exec, :now, :expires. The update runs only when the current
	// lease is over; the token goes up by one from the row's, which is
	// never deleted, so it exceeds every token issued for the name.
	sqlAcquire = `INSERT INTO lease_locks (name, execution_id, token, expires_at)
VALUES (:name, :exec, 1, :expires)
ON CONFLICT (name) DO UPDATE SET execution_id = excluded.execution_id, token = token + 1,
  expires_at = excluded.expires_at
WHERE expires_at <= :now
RETURNING token, expires_at`

	// :name, :exec, :token, :now, :expires.
	sqlRenew = `UPDATE lease_locks SET expires_at = :expires
WHERE name = :name AND execution_id = :exec AND token = :token AND expires_at > :now
RETURNING expires_at`

	// :name, :exec, :token, :now.
	sqlRelease = `UPDATE lease_locks SET expires_at = -9223372036854775808
WHERE name = :name AND execution_id = :exec AND token = :token AND expires_at > :now`

	// :name, :now.
	sqlHolder = `SELECT execution_id, token, expires_at FROM lease_locks
WHERE name = :name AND expires_at > :now`

	// :prefix, :now, :limit (-1 for all). substr compares bytes of the
	// prefix as text, so % and _ are not patterns; the BINARY collation
	// orders by bytes.
	sqlHeld = `SELECT name, execution_id, token, expires_at FROM lease_locks
WHERE expires_at > :now AND substr(name, 1, length(:prefix)) = :prefix
ORDER BY name LIMIT :limit`

	// :name: when the lock's lease ends, if it is held.
	sqlExpiry = `SELECT expires_at FROM lease_locks WHERE name = :name`
)
