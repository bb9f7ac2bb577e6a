package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// LockProvider is a [lock.Provider] that keeps locks in an SQLite file,
// shared by every process of the host that opens it. It is a [lockprovider.Waiter] and a
// [lockprovider.Inspector], so [lock.Manager] (TryLock, Lock, DoWait, fencing) and
// lock/election work on it. It is safe for concurrent use by multiple
// goroutines and processes.
//
// Acquire, Renew and Release are writes, committed as the claim store's are
// (BEGIN IMMEDIATE, group commit, busy retries). A Renew or Release whose
// ctx ends while it waits returns ctx.Err() at once, its write withdrawn
// or, if a transaction had taken it, perhaps in the file; an Acquire waits
// for that transaction and returns its answer. A lock's row is never
// deleted, and each acquisition sets its token to the previous one plus
// one, in the transaction that holds the file's write lock: tokens of a
// name grow strictly across every process sharing the file. Leases end at
// instants of the provider's clock ([WithClock]; the host's wall clock by
// default). The provider keeps no time base of its own, so a
// [lock.Manager] over it keeps time on its own clock and confirms a lease
// with a Renew before running the function; a clock step can make a lease
// end early or late, and fencing tokens keep two holders from acting as
// one.
type LockProvider struct {
	d *db
	// onWait, if set (by tests), is called each time AcquireWait starts
	// waiting.
	onWait func(name string)
}

var (
	_ lock.Provider          = (*LockProvider)(nil)
	_ lockprovider.Waiter    = (*LockProvider)(nil)
	_ lockprovider.Inspector = (*LockProvider)(nil)
)

// NewLockProvider opens the SQLite file at path as a lock provider, creating it if it
// does not exist and bringing its schema up to date (safe when several
// processes open a file at once). Errors are as [NewClaimStore]'s. Close
// releases the file; it frees no lock.
func NewLockProvider(ctx context.Context, path string, opts ...Option) (*LockProvider, error) {
	d, err := openDB(ctx, "locks.open", path, opts)
	if err != nil {
		return nil, err
	}
	return &LockProvider{d: d}, nil
}

// Close stops the provider's goroutines and closes the file: calls under
// way fail with an error matching lease.ErrClosed, as do later ones. The
// locks held stay held until their leases end. Close is idempotent.
func (p *LockProvider) Close() error {
	p.d.close()
	return nil
}

func (p *LockProvider) open(op string) error {
	if p.d.closed.Load() {
		return closedError(op)
	}
	return nil
}

// fail wraps a failure of op, or reports the provider closed.
func (p *LockProvider) fail(op string, err error) error {
	if p.d.closed.Load() && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return closedError(op)
	}
	return p.d.storage(op, err)
}

// Acquire takes the lock name for executionID for d, measured on the
// provider's clock, if it is unheld, released or expired. It returns nil,
// nil when someone holds it, the same executionID included. The new Lease's
// Token is greater than every token issued before for name. A nil error
// means the acquisition is in the file.
func (p *LockProvider) Acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	if err := lockChecks.Acquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := p.open("acquire"); err != nil {
		return nil, err
	}
	l, _, err := p.acquire(ctx, name, executionID, d)
	return l, err
}

// acquire is Acquire for checked arguments; when the lock is held it also
// returns when its lease ends.
func (p *LockProvider) acquire(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, int64, error) {
	var (
		l    *lock.Lease
		ends int64
	)
	// To its end: AcquireWait releases a lease acquired as its context
	// ended, so it must learn of every lease it acquired.
	err := p.d.commit.doToEnd(ctx, "acquire", true, func(ctx context.Context, tx *wtx) error {
		l, ends = nil, 0
		now := p.d.now()
		st, err := tx.stmt(ctx, sqlAcquire)
		if err != nil {
			return err
		}
		var token, expires int64
		err = st.QueryRowContext(ctx, sql.Named("name", name), sql.Named("exec", executionID),
			sql.Named("now", now), sql.Named("expires", addNanos(now, d))).Scan(&token, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return tx.QueryRowContext(ctx, sqlExpiry, sql.Named("name", name)).Scan(&ends)
		}
		if err != nil {
			return err
		}
		l = &lock.Lease{Name: name, ExecutionID: executionID, ExpiresAt: at(expires), Token: uint64(token)}
		return nil
	}, nil)
	if err != nil {
		return nil, 0, p.fail("acquire", err)
	}
	return l, ends, nil
}

// Renew extends, to d from now on the provider's clock, every lease in
// leases that still holds its lock (same name, execution ID and token, not
// expired, not released), in one transaction. It returns those, in input
// order, with their new ExpiresAt and unchanged Token; the others are
// silently skipped. A lease listed twice is returned twice.
func (p *LockProvider) Renew(ctx context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	if err := lockChecks.Renew(ctx, leases, d); err != nil {
		return nil, err
	}
	if err := p.open("renew"); err != nil {
		return nil, err
	}
	if len(leases) == 0 {
		return nil, nil
	}
	renewed := make([]int64, len(leases))
	err := p.d.commit.do(ctx, "renew", len(leases) == 1, func(ctx context.Context, tx *wtx) error {
		clear(renewed)
		now := p.d.now()
		st, err := tx.stmt(ctx, sqlRenew)
		if err != nil {
			return err
		}
		done := map[lock.Lease]int64{}
		for i, l := range leases {
			if l.Token == 0 || l.Token > math.MaxInt64 {
				continue
			}
			k := lock.Lease{Name: l.Name, ExecutionID: l.ExecutionID, Token: l.Token}
			if e, ok := done[k]; ok {
				renewed[i] = e
				continue
			}
			var expires int64
			err := st.QueryRowContext(ctx, sql.Named("name", l.Name), sql.Named("exec", l.ExecutionID),
				sql.Named("token", int64(l.Token)), sql.Named("now", now),
				sql.Named("expires", addNanos(now, d))).Scan(&expires)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			renewed[i], done[k] = expires, expires
		}
		return nil
	}, nil)
	if err != nil {
		return nil, p.fail("renew", err)
	}
	var out []lock.Lease
	for i, l := range leases {
		if renewed[i] != 0 {
			l.ExpiresAt = at(renewed[i])
			out = append(out, l)
		}
	}
	return out, nil
}

// Release frees, in one transaction, every lease in leases that still
// holds its lock. Releasing a lease that was already released, has
// expired, or was never issued is not an error, and a release never frees
// a lock someone else now holds. A released lock keeps its last token. The
// provider's waiters in this process are woken when the release commits;
// those of other processes a moment later (see AcquireWait).
func (p *LockProvider) Release(ctx context.Context, leases []lock.Lease) error {
	if err := lockChecks.Release(ctx, leases); err != nil {
		return err
	}
	if err := p.open("release"); err != nil {
		return err
	}
	if len(leases) == 0 {
		return nil
	}
	err := p.d.commit.do(ctx, "release", len(leases) == 1, func(ctx context.Context, tx *wtx) error {
		now := p.d.now()
		st, err := tx.stmt(ctx, sqlRelease)
		if err != nil {
			return err
		}
		for _, l := range leases {
			if l.Token == 0 || l.Token > math.MaxInt64 {
				continue
			}
			if _, err := st.ExecContext(ctx, sql.Named("name", l.Name), sql.Named("exec", l.ExecutionID),
				sql.Named("token", int64(l.Token)), sql.Named("now", now)); err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil {
		return p.fail("release", err)
	}
	return nil
}
