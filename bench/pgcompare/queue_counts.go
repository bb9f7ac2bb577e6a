package pgcompare

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// claimSizeBuckets are the upper bounds of the buckets of burnCounts'
// histogram of items per Claim call.
var claimSizeBuckets = [...]int{0, 1, 4, 16, 64, 1 << 30}

// burnCounts counts, under TraceEnv, the calls the Broker makes on the
// claim store during a burn-down: Claim calls and the items each got, the
// time the fetcher spent in Claim and between Claims, and the Settle calls
// with how many were in flight as each began.
type burnCounts struct {
	claims, claimed atomic.Int64
	sizes           [len(claimSizeBuckets)]atomic.Int64
	inClaim, gap    atomic.Int64 // nanoseconds
	lastClaim       atomic.Int64 // unix nanoseconds of the last Claim's return
	settles         atomic.Int64
	settling        atomic.Int64 // Settle calls in flight now
	settlingSum     atomic.Int64 // sum over Settle calls of settling as each began
	settlingMax     atomic.Int64
	settleTime      atomic.Int64 // nanoseconds, summed over Settle calls
	// wal is pg_stat_wal's wal_sync, wal_sync_time (ms) and wal_write
	// as the burn-down began, if the server says.
	wal    [3]float64
	walSet bool
	// first holds the sizes of the first claims, in order.
	first [24]atomic.Int64
}

func (c *burnCounts) claimStart() time.Time {
	now := time.Now()
	if last := c.lastClaim.Load(); last != 0 {
		c.gap.Add(now.UnixNano() - last)
	}
	return now
}

func (c *burnCounts) claimEnd(t0 time.Time, n int) {
	now := time.Now()
	if i := c.claims.Add(1) - 1; i < int64(len(c.first)) {
		c.first[i].Store(int64(n))
	}
	c.claimed.Add(int64(n))
	c.inClaim.Add(int64(now.Sub(t0)))
	c.lastClaim.Store(now.UnixNano())
	for i, b := range claimSizeBuckets {
		if n <= b {
			c.sizes[i].Add(1)
			break
		}
	}
}

func (c *burnCounts) settleStart() time.Time {
	n := c.settling.Add(1)
	c.settlingSum.Add(n)
	for m := c.settlingMax.Load(); n > m && !c.settlingMax.CompareAndSwap(m, n); m = c.settlingMax.Load() {
	}
	return time.Now()
}

func (c *burnCounts) settleEnd(t0 time.Time) {
	c.settleTime.Add(int64(time.Since(t0)))
	c.settling.Add(-1)
	c.settles.Add(1)
}

// walStats returns pg_stat_wal's wal_sync, wal_sync_time and wal_write.
func walStats(ctx context.Context, pool *pgxpool.Pool) ([3]float64, error) {
	var w [3]float64
	err := pool.QueryRow(ctx, `SELECT wal_sync::float8, wal_sync_time, wal_write::float8 FROM pg_stat_wal`).Scan(&w[0], &w[1], &w[2])
	return w, err
}

// begin records the server's WAL counts as the burn-down begins. Backends
// report their WAL counts to pg_stat_wal at most once a second, so those
// of a burn-down shorter than a few seconds are partial.
func (c *burnCounts) begin(ctx context.Context, pool *pgxpool.Pool) {
	if w, err := walStats(ctx, pool); err == nil {
		c.wal, c.walSet = w, true
	}
}

// report writes the counts since the last report and the server's counts
// of table (pg_stat_user_tables, checkpoints, and pg_stat_statements when
// the extension is there).
func (c *burnCounts) report(ctx context.Context, out io.Writer, label string, pool *pgxpool.Pool, table string) {
	claims := max(c.claims.Load(), 1)
	settles := max(c.settles.Load(), 1)
	var b strings.Builder
	fmt.Fprintf(&b, "counts %s: claims %d (items %d, %.1f per claim; sizes", label, c.claims.Load(), c.claimed.Load(), float64(c.claimed.Load())/float64(claims))
	prev := -1
	for i, ub := range claimSizeBuckets {
		fmt.Fprintf(&b, " %d-%d:%d", prev+1, ub, c.sizes[i].Load())
		prev = ub
	}
	b.WriteString("; first")
	for i := range c.first {
		fmt.Fprintf(&b, " %d", c.first[i].Load())
	}
	fmt.Fprintf(&b, "), fetcher in claim %.0f ms (%.2f ms per claim), between claims %.0f ms; settles %d (mean in flight %.1f, max %d, mean %.2f ms)",
		float64(c.inClaim.Load())/1e6, float64(c.inClaim.Load())/float64(claims)/1e6, float64(c.gap.Load())/1e6, c.settles.Load(),
		float64(c.settlingSum.Load())/float64(settles), c.settlingMax.Load(), float64(c.settleTime.Load())/float64(settles)/1e6)
	var (
		upd, hot, av, aa, seq, idx int64
		tups                       int64
	)
	q := `SELECT n_tup_upd, n_tup_hot_upd, autovacuum_count, autoanalyze_count, seq_scan, idx_scan, n_dead_tup FROM pg_stat_user_tables WHERE relid = $1::regclass`
	if err := pool.QueryRow(ctx, q, table).Scan(&upd, &hot, &av, &aa, &seq, &idx, &tups); err == nil {
		fmt.Fprintf(&b, "; table upd %d hot %d autovacuum %d autoanalyze %d seq_scan %d idx_scan %d dead %d", upd, hot, av, aa, seq, idx, tups)
	} else {
		fmt.Fprintf(&b, "; table: %v", err)
	}
	if w, err := walStats(ctx, pool); err == nil && c.walSet {
		syncs := max(w[0]-c.wal[0], 1)
		fmt.Fprintf(&b, "; WAL syncs reported so far %.0f (%.3f ms each, %.2f per claim+settle statement), writes %.0f", w[0]-c.wal[0], (w[1]-c.wal[1])/syncs,
			syncs/float64(claims+settleStatements(ctx, pool)), w[2]-c.wal[2])
	}
	var ckpt int64
	if err := pool.QueryRow(ctx, `SELECT num_timed + num_requested FROM pg_stat_checkpointer`).Scan(&ckpt); err == nil {
		fmt.Fprintf(&b, "; checkpoints so far %d", ckpt)
	} else if err := pool.QueryRow(ctx, `SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter`).Scan(&ckpt); err == nil {
		fmt.Fprintf(&b, "; checkpoints so far %d", ckpt)
	}
	rows, err := pool.Query(ctx, `SELECT calls, rows, total_exec_time, shared_blks_hit + shared_blks_read, wal_bytes, left(regexp_replace(query, '\s+', ' ', 'g'), 30)
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND calls > 50 ORDER BY calls DESC LIMIT 4`)
	if err == nil {
		for rows.Next() {
			var (
				calls, nrows, blks int64
				ms, wal            float64
				text               string
			)
			if rows.Scan(&calls, &nrows, &ms, &blks, &wal, &text) == nil {
				fmt.Fprintf(&b, "; stmt %q calls %d rows/call %.1f ms/call %.3f blks/call %.0f wal/call %.0f", text, calls, float64(nrows)/float64(calls), ms/float64(calls), float64(blks)/float64(calls), wal/float64(calls))
			}
		}
		rows.Close()
	}
	fmt.Fprintln(out, b.String())
}

// settleStatements returns how many settle statements pg_stat_statements
// counted in this database, 0 if it cannot say.
func settleStatements(ctx context.Context, pool *pgxpool.Pool) int64 {
	var n int64
	_ = pool.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::int8 FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE 'WITH live AS MATERIALIZED%'`).Scan(&n)
	return n
}
