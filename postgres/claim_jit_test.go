package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// sqlLog records the statements each connection of a pool sends, in
// order, whether alone or in a batch.
type sqlLog struct {
	mu     sync.Mutex
	byConn map[*pgx.Conn][]string
}

func (l *sqlLog) add(c *pgx.Conn, sql string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byConn[c] = append(l.byConn[c], strings.TrimSpace(sql))
}

func (l *sqlLog) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.add(c, d.SQL)
	return ctx
}
func (l *sqlLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (l *sqlLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (l *sqlLog) TraceBatchQuery(_ context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	l.add(c, d.SQL)
}
func (l *sqlLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// before returns, for each time stmt was sent, the two statements its
// connection sent just before it.
func (l *sqlLog) before(stmt string) [][2]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][2]string
	for _, sqls := range l.byConn {
		for i, s := range sqls {
			if s == strings.TrimSpace(stmt) {
				var p [2]string
				if i >= 2 {
					p[0] = sqls[i-2]
				}
				if i >= 1 {
					p[1] = sqls[i-1]
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// TestCountsAndQueuesPlanWithoutJIT checks that Counts and Queues run
// their statements in a read-only transaction that turned JIT compilation
// off first: beside a large history the planner's estimate of an exact
// count passes jit_above_cost, and compiling the statement took longer
// than running it (Queues beside a million finished rows: 490 ms against
// 110 ms).
func TestCountsAndQueuesPlanWithoutJIT(t *testing.T) {
	log := &sqlLog{byConn: map[*pgx.Conn][]string{}}
	pool := newPool(t, "lease-claims-jit", func(c *pgxpoolConfig) { c.ConnConfig.Tracer = log })
	s := claimStoreOn(t, pool, WithClaimTable(uniqueTable()), WithRetention(claim.StandardRetention))
	fillFinished(t, s, "q", 5, 50, 0)

	c, err := s.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Completed: 50}, c)
	infos, err := s.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, claim.Counts{Completed: 50}, infos[0].Counts)

	for name, stmt := range map[string]string{"counts": s.sql.counts, "queues": s.sql.queues} {
		sent := log.before(stmt)
		require.Len(t, sent, 1, name)
		assert.Equal(t, [2]string{"BEGIN READ ONLY", "SET LOCAL jit = off"}, sent[0], name)
	}

	// The setting ends with the transaction: the connection plans with
	// JIT as configured afterwards.
	var jit string
	require.NoError(t, pool.QueryRow(ctx, "SHOW jit").Scan(&jit))
	assert.Equal(t, "on", jit)
}

// TestCountsFailingLeavesNoTransactionOpen makes the counts statement
// fail inside the batch that opened its transaction (a lock timeout) on a
// pool of one connection, and checks that the next calls run as usual
// on it: not inside the failed transaction, nor with JIT left off.
func TestCountsFailingLeavesNoTransactionOpen(t *testing.T) {
	pool := newPool(t, "lease-claims-jit-fail", func(c *pgxpoolConfig) {
		c.MaxConns = 1
		c.ConnConfig.RuntimeParams["lock_timeout"] = "50ms"
	})
	s := claimStoreOn(t, pool, WithClaimTable(uniqueTable()), WithRetention(claim.StandardRetention))
	fillFinished(t, s, "q", 5, 5, 0)

	other := newPool(t, "lease-claims-jit-locker")
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "LOCK TABLE "+s.table+" IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	_, err = s.Counts(ctx, "q")
	require.Error(t, err, "the table is locked")
	_, err = s.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.Error(t, err, "the table is locked")
	require.NoError(t, tx.Rollback(ctx))

	c, err := s.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, claim.Counts{Completed: 5}, c)
	var jit string
	require.NoError(t, pool.QueryRow(ctx, "SHOW jit").Scan(&jit))
	assert.Equal(t, "on", jit)
	_, err = pool.Exec(ctx, "INSERT INTO "+s.table+" (queue, state, max_attempts, priority, enqueued_at, due) VALUES ('w', 1, 1, 0, now(), now())")
	require.NoError(t, err, "the connection is not left in a read-only transaction")
}
