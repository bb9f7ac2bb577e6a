package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/lease/lock"
)

// waitSlack is added to a held lease's remaining time before a waiter tries
// again, so that the database finds the lease over when the attempt
// arrives; arriving early costs only another, shorter, wait.
const waitSlack = 2 * time.Millisecond

// unlistenTimeout bounds the UNLISTEN that hands a waiter's connection back
// to the pool, which runs even after the caller's context is done.
const unlistenTimeout = 5 * time.Second

// AcquireWait acquires the lock name for executionID for d, as Acquire
// does, waiting while it is held, until ctx is done: it makes Provider a
// [lock.Waiter], so [lock.Manager.Lock] and [lock.DoWait] wait without
// polling. value must be empty: the provider stores no values.
//
// The waiter takes one connection from the pool for the whole wait (so a
// pool needs a connection per concurrent waiter, plus the others' needs),
// LISTENs on the table's channel, and only then tries to acquire, on that
// connection; every Release that frees a lock notifies its name on that
// channel when it commits, which wakes the waiters of that name at once.
// An expiry notifies nobody, so after each failed attempt the waiter also
// reads, on the database's clock, when the holder's lease (plus any lock
// delay) ends, and tries again then, or after lock.PollInterval(d) if that
// is sooner; the poll also covers a notification that never came. Waiters
// are not queued: when a lock is freed every waiter for it, in any process,
// tries at once and one wins, in no particular order (no FIFO), and callers
// of Acquire compete with them. The connection stops listening before it
// goes back to the pool.
//
// When ctx is done first it returns ctx.Err(), and a lease acquired as ctx
// ended is released before returning. As with Acquire, an attempt cut short
// by ctx has an unknown outcome: a lock it took unseen expires after d.
//
// Notifications need a session: behind a transaction-mode pooler such as
// PgBouncer they are not delivered, and waiters fall back on the poll.
func (p *Provider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration, value []byte) (*lock.Lease, error) {
	if err := checkAcquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := lock.CheckValue(value); err != nil {
		return nil, err
	}
	if len(value) > 0 {
		return nil, invalid("acquire", "value", "this provider cannot store a value: it is not a lock.ValueAcquirer")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, p.waitError(ctx, name, err)
	}
	w := &listener{conn: conn}
	defer w.close(ctx)
	if err := w.listen(ctx, p); err != nil {
		return nil, p.waitError(ctx, name, err)
	}
	poll := lock.PollInterval(d)
	for {
		l, err := p.acquireOn(ctx, conn, name, executionID, d)
		if err != nil {
			return nil, p.waitError(ctx, name, err)
		}
		if l != nil {
			if err := ctx.Err(); err != nil {
				_ = p.Release(context.WithoutCancel(ctx), []lock.Lease{*l})
				return nil, err
			}
			return l, nil
		}
		left, err := p.remaining(ctx, conn, name)
		if err != nil {
			return nil, p.waitError(ctx, name, err)
		}
		if p.onWait != nil {
			p.onWait(name)
		}
		if err := w.wait(ctx, name, min(left+waitSlack, poll)); err != nil {
			return nil, p.waitError(ctx, name, err)
		}
	}
}

// remaining returns how long until the lease holding name is over and past
// its lock delay, on the database's clock: 0 if it already is, or the lock is
// released or unknown.
func (p *Provider) remaining(ctx context.Context, conn *pgxpool.Conn, name string) (time.Duration, error) {
	var us int64
	err := conn.QueryRow(ctx, p.sql.remaining, name, p.lockDelay).Scan(&us)
	if errors.Is(err, pgx.ErrNoRows) || us < 0 {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return time.Duration(us) * time.Microsecond, nil
}

// waitError is the error AcquireWait returns for err: ctx's own error once
// ctx is done (err is then most likely its consequence), else err wrapped.
func (p *Provider) waitError(ctx context.Context, name string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("postgres: acquire wait %q: %w", name, err)
}

// listener is a waiter's connection, listening on its table's channel.
type listener struct {
	conn    *pgxpool.Conn
	channel string // "" until LISTEN succeeded
}

// listen finds the table's channel and listens on it.
func (w *listener) listen(ctx context.Context, p *Provider) error {
	var oid int64
	if err := w.conn.QueryRow(ctx, p.sql.oid, p.table).Scan(&oid); err != nil {
		return err
	}
	channel := channelName(oid)
	if _, err := w.conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	w.channel = channel
	return nil
}

// wait returns when name is notified on the channel, or after timeout, or
// with ctx's error when ctx is done. Notifications of other names are
// skipped without extending the wait.
func (w *listener) wait(ctx context.Context, name string, timeout time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		n, err := w.conn.Conn().WaitForNotification(wctx)
		if n != nil && n.Channel == w.channel && n.Payload == name {
			return nil
		}
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			return ctx.Err()
		case wctx.Err() != nil && !w.conn.Conn().IsClosed():
			return nil // timed out: time to try again
		}
		return err
	}
}

// close hands the connection back to the pool, no longer listening and
// with no notification left queued on it; a connection that cannot be
// cleaned is closed instead.
func (w *listener) close(ctx context.Context) {
	c := w.conn.Conn()
	if w.channel != "" && !c.IsClosed() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlistenTimeout)
		_, err := c.Exec(uctx, "UNLISTEN "+pgx.Identifier{w.channel}.Sanitize())
		cancel()
		if err != nil {
			// The pool destroys a closed connection rather than reuse it.
			_ = c.Close(context.WithoutCancel(ctx))
		}
		// Drop what arrived before the UNLISTEN: pgx queues notifications
		// received during a statement until someone waits for them.
		done, stop := context.WithCancel(ctx)
		stop()
		for !c.IsClosed() {
			if n, _ := c.WaitForNotification(done); n == nil {
				break
			}
		}
	}
	w.conn.Release()
}
