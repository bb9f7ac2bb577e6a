package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// listenRetryMin is the first pause before reconnecting a listening
// connection that failed; the pause doubles after each failure to listen.
const listenRetryMin = 50 * time.Millisecond

// listenCloseTimeout bounds the goodbye to the server when a listening
// connection is closed.
const listenCloseTimeout = 5 * time.Second

// listener is one connection of its own (outside the pool, made from the
// pool's configuration) listening on a table's channel: what a ClaimStore
// and a LockProvider's waiters use to hear of changes at once.
type listener struct {
	cfg *pgx.ConnConfig
	// oid is the statement that returns the OID of table, and channel
	// names the channel of a table with that OID.
	oid, table string
	channel    func(oid int64) string
	// before, if set, runs between connecting and LISTEN (a test's hook).
	before func()
	// listening runs once the connection listens, with the connection:
	// whatever happened before went unheard. An error ends the session.
	listening func(ctx context.Context, conn *pgx.Conn) error
	// note is given the payload of each notification of the channel.
	note func(payload string)
}

// run keeps one connection listening until ctx is done, reconnecting
// after a pause when it fails, growing up to maxPause while it cannot
// listen.
func (l *listener) run(ctx context.Context, maxPause time.Duration) {
	pause := listenRetryMin
	for {
		if l.session(ctx) {
			pause = listenRetryMin
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, max(maxPause, listenRetryMin))
	}
}

// session runs one listening connection until it fails or ctx is done,
// and reports whether it got as far as listening.
func (l *listener) session(ctx context.Context) bool {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return false
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseTimeout)
		_ = conn.Close(cctx)
		cancel()
	}()
	var oid int64
	if err := conn.QueryRow(ctx, l.oid, l.table).Scan(&oid); err != nil {
		return false
	}
	if l.before != nil {
		l.before()
	}
	channel := l.channel(oid)
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false
	}
	if err := l.listening(ctx, conn); err != nil {
		return false
	}
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if note.Channel == channel {
			l.note(note.Payload)
		}
	}
}
