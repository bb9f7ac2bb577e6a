package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// waitSlack is added to a held lease's remaining time before a waiter tries
// again, so that the database finds the lease over when the attempt
// arrives; arriving early costs only another, shorter, wait.
const waitSlack = 2 * time.Millisecond

// giveUpTimeout bounds each statement a waiter must see through even when
// its caller's context ends: an attempt under way (abandoned, it could take
// the lock after AcquireWait returned), and the release or dequeue of a
// waiter that gives up.
const giveUpTimeout = 5 * time.Second

// AcquireWait acquires the lock name for executionID for d, as Acquire
// does, waiting while it is held, until ctx is done: it makes LockProvider a
// [lockprovider.Waiter], so [lock.Manager.Lock] and [lock.DoWait] wait without
// polling.
//
// Waiters are served first come, first served, per name, across every
// process that shares the table. A call first tries to acquire as Acquire
// does, but only if no live waiter is queued for name; refused, it takes a
// ticket (a row of the waiters' table, numbered in the order taken) and
// from then on may take the lock only while no live ticket of name is
// older than its own. Taking the lock removes the ticket in the same
// statement. While a call waits, its provider refreshes its ticket every
// second; a ticket not refreshed for 5 s is stale, its waiter taken for
// dead (its process or its connection to the database gone), and the
// waiters behind it go ahead: a dead waiter first in line delays the
// hand-off by 5 s at most. Callers of Acquire do not queue: one may take a
// freed lock before the first waiter, which keeps its place and waits for
// the next release.
//
// Waiting costs no pool connection: a LockProvider's waiters share one
// connection of its own, opened (with the pool's configuration) while any
// of them waits, that LISTENs on the table's channel; every Release that
// frees a lock, and every waiter that gives up, notifies the lock's name
// on that channel when it commits, which wakes the LockProvider's waiters of
// that name at once. An expiry notifies nobody, so after each refused
// attempt a waiter also learns, on the database's clock, when the holder's
// lease (plus any lock delay) ends and when the tickets ahead of it would
// go stale, and tries again then, or after lockprovider.PollInterval(d) if that is
// sooner; the poll also covers a notification that never came. Each
// attempt takes a pool connection for one statement.
//
// When ctx is done first it returns ctx.Err() holding nothing: an attempt
// under way is seen through (for up to 5 s) rather than abandoned, a lease
// it took is released and the ticket given back, on a context of their own
// bounded the same way. Only an attempt that fails outright (the server
// unreachable for 5 s) has an unknown outcome, as with Acquire: a lock it
// took unseen expires after d, and its ticket goes stale.
//
// Notifications need a session: behind a transaction-mode pooler such as
// PgBouncer they are not delivered, and waiters fall back on the poll.
func (p *LockProvider) AcquireWait(ctx context.Context, name, executionID string, d time.Duration) (*lock.Lease, error) {
	if err := lockChecks.Acquire(ctx, name, executionID, d); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &waiter{p: p, ctx: ctx, name: name, executionID: executionID, d: d}
	if l, _, err := w.attempt(); l != nil || err != nil {
		return l, err
	}
	p.hub.join()
	defer p.hub.leave()
	defer w.dequeue()
	if err := w.queue(); err != nil {
		return nil, err
	}
	poll := lockprovider.PollInterval(d)
	for {
		l, done, err := w.turn(poll)
		if done {
			return l, err
		}
	}
}

// turn is one attempt of a queued waiter and, when refused, the wait that
// follows it, up to poll; done says AcquireWait returns l, err.
func (w *waiter) turn(poll time.Duration) (l *lock.Lease, done bool, err error) {
	wake, disarm := w.p.hub.arm(w.name)
	defer disarm()
	l, wait, err := w.attempt()
	if l != nil || err != nil {
		return l, true, err
	}
	if w.p.onWait != nil {
		w.p.onWait(w.name)
	}
	t := time.NewTimer(min(wait+waitSlack, poll))
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-w.ctx.Done():
		return nil, true, w.ctx.Err()
	}
	return nil, false, nil
}

// waiter is one AcquireWait call.
type waiter struct {
	p           *LockProvider
	ctx         context.Context // the caller's
	name        string
	executionID string
	d           time.Duration
	ticket      int64 // 0 until queued
	served      bool  // the ticket went with the lock
}

// bounded returns a context for a statement that must be seen through
// even if the caller's context ends, bounded by giveUpTimeout.
func (w *waiter) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(w.ctx), giveUpTimeout)
}

// attempt tries to acquire the lock as w's place in the queue allows. It
// returns the lease when taken; otherwise how long to wait before the lock
// could be w's, unless a notification comes first. A lease taken as the
// caller's context ended is released, and ctx.Err() returned.
func (w *waiter) attempt() (*lock.Lease, time.Duration, error) {
	conn, err := w.p.pool.Acquire(w.ctx)
	if err != nil {
		return nil, 0, w.error(err)
	}
	defer conn.Release()
	actx, cancel := w.bounded()
	defer cancel()
	var (
		token             *int64
		expires           *time.Time
		leaseLeft, behind *int64 // µs
	)
	p := w.p
	err = conn.QueryRow(actx, p.sql.waitAcquire, w.name, w.executionID, micros(w.d), p.lockDelay, p.seq, w.ticket, micros(p.ticketTTL)).
		Scan(&token, &expires, &leaseLeft, &behind)
	if err != nil {
		return nil, 0, w.error(err)
	}
	if token == nil {
		wait := max(durationOf(leaseLeft), durationOf(behind))
		return nil, wait, nil
	}
	w.served = true
	l := &lock.Lease{Name: w.name, ExecutionID: w.executionID, ExpiresAt: *expires, Token: uint64(*token)}
	if err := w.ctx.Err(); err != nil {
		rctx, cancel := w.bounded()
		defer cancel()
		_ = p.Release(rctx, []lock.Lease{*l})
		return nil, 0, err
	}
	return l, 0, nil
}

// durationOf converts µs read from the database, perhaps NULL or negative,
// to a wait.
func durationOf(us *int64) time.Duration {
	if us == nil || *us <= 0 {
		return 0
	}
	return time.Duration(*us) * time.Microsecond
}

// queue takes w's ticket, which the hub keeps fresh from then on.
func (w *waiter) queue() error {
	qctx, cancel := w.bounded()
	defer cancel()
	if err := w.p.pool.QueryRow(qctx, w.p.sql.takeTicket, w.name, micros(w.p.ticketTTL)).Scan(&w.ticket); err != nil {
		return w.error(err)
	}
	w.p.hub.track(w.ticket)
	if err := w.ctx.Err(); err != nil {
		return err // given back by AcquireWait's deferred dequeue
	}
	return nil
}

// dequeue gives w's ticket back unless the lock took it, waking the
// waiters of the name that queue behind it.
func (w *waiter) dequeue() {
	w.p.hub.untrack(w.ticket)
	if w.served || w.ticket == 0 {
		return
	}
	dctx, cancel := w.bounded()
	defer cancel()
	// On failure the ticket goes stale in ticketTTL.
	_, _ = w.p.pool.Exec(dctx, w.p.sql.leaveQueue, w.ticket, w.p.table)
}

// error is the error AcquireWait returns for err: ctx's own error once ctx
// is done (err is then most likely its consequence), else err wrapped.
func (w *waiter) error(err error) error {
	if ctxErr := w.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("postgres: acquire wait %q: %w", w.name, err)
}
