package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/internal/sqlclaim"
)

// Claim claims up to req.Limit claimable items of req.Queue for req.Owner,
// each for req.Lease on the database's clock, and returns them in claim
// order (an empty slice when none is claimable). Claim calls on one queue
// from many goroutines share one statement per round trip, which deals the
// items out in call order. A call whose ctx ends while its statement is
// under way returns ctx's error; claims it may have made run out with
// their lease. An expired
// claim on its item's last attempt that the statement meets is moved to
// the dead letters instead, so a Claim may return fewer items than it
// could have. If req.Lost is set, Cancel of one of these items, from any
// process, calls it.
func (s *ClaimStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	return s.eng.Claim(ctx, req)
}

// Claim sends req in the next batch of Claim calls on its queue.
func (d dialect) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	weight := min(req.Limit, math.MaxInt32)
	return d.claims.Do(ctx, &sqlclaim.Call[claim.ClaimRequest, []claim.Claim]{Op: "claim", Group: req.Queue, Weight: weight, Req: req})
}

// maxPresized bounds the room runClaim makes for the rows of a batch up
// front: a Claim's limit may be far above what the queue holds.
const maxPresized = 4096

// runClaim sends one batch of Claim calls on one queue.
func (d dialect) runClaim(ctx context.Context, calls []*sqlclaim.Call[claim.ClaimRequest, []claim.Claim]) error {
	n := len(calls)
	owners, leases, starts := make([]string, n), make([]int64, n), make([]int64, n)
	var total int64
	for i, c := range calls {
		owners[i], leases[i], starts[i] = c.Req.Owner, micros(c.Req.Lease), total+1
		total += int64(c.Weight)
		c.Res = []claim.Claim{}
	}
	queue := calls[0].Req.Queue
	// A lone call's statement, sent from its caller's goroutine, ends with
	// its caller's context too.
	ctx, stop := sqlclaim.CallerBound(ctx, calls)
	defer stop()
	rows, err := d.pool.Query(ctx, d.sql.claim, queue, owners, leases, starts, total, d.table)
	if err != nil {
		return err
	}
	type picked struct {
		call, rn int64
		c        claim.Claim
	}
	var (
		got               = make([]picked, 0, min(total, maxPresized))
		call, rn          int64
		id, token, tout   int64
		state, prio       int16
		attempt, maxAtt   int32
		enqueued, expires time.Time
		payload, metadata []byte
		kind, tags        string
	)
	_, err = pgx.ForEachRow(rows, []any{&call, &rn, &id, &state, &attempt, &maxAtt, &prio, &tout, &enqueued, &expires, &token, &payload, &kind, &tags, &metadata}, func() error {
		if call < 1 || call > int64(n) {
			return fmt.Errorf("claim for call %d of %d", call, n)
		}
		if state != sqlclaim.RowClaimed {
			return nil // its lost claim was its last attempt: now dead
		}
		row := sqlclaim.ClaimedRow{
			ID: id, Token: token, Queue: queue, Owner: owners[call-1], Kind: kind, Tags: tags,
			Payload: payload, Metadata: metadata, Attempt: int(attempt), MaxAttempts: int(maxAtt), Priority: int(prio),
			Timeout: time.Duration(tout) * time.Microsecond, Enqueued: enqueued, Expires: expires,
		}
		payload, metadata = nil, nil // the next row gets its own
		c, err := row.Claim()
		got = append(got, picked{call, rn, c})
		return err
	})
	if err != nil {
		return err
	}
	slices.SortFunc(got, func(a, b picked) int { return cmp.Compare(a.rn, b.rn) })
	if n == 1 {
		calls[0].Res = make([]claim.Claim, 0, len(got))
	}
	for _, p := range got {
		c := calls[p.call-1]
		c.Res = append(c.Res, p.c)
	}
	return nil
}

// Extend extends the live claim r to lease from now on the database's
// clock and returns its new expiry. Calls from many goroutines share one
// statement per round trip. A claim that is no longer live (settled,
// expired, claimed again, cancelled) gets an error matching
// lease.ErrStaleUse and nothing changes.
func (s *ClaimStore) Extend(ctx context.Context, r claim.Ref, leaseDuration time.Duration) (time.Time, error) {
	return s.eng.Extend(ctx, r, leaseDuration)
}

// Extend sends the extension in the next batch of them.
func (d dialect) Extend(ctx context.Context, r claim.Ref, leaseDuration time.Duration) (time.Time, error) {
	return d.extends.Do(ctx, &sqlclaim.Call[extension, time.Time]{Op: "extend", Item: r.Item, Req: extension{r, leaseDuration}})
}

// extension is one Extend call in a batch.
type extension struct {
	ref   claim.Ref
	lease time.Duration
}

// runExtend sends one batch of extensions.
func (d dialect) runExtend(ctx context.Context, calls []*sqlclaim.Call[extension, time.Time]) error {
	n := len(calls)
	ids, tokens, leases := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, c := range calls {
		ids[i], tokens[i], leases[i] = int64(c.Req.ref.Item), int64(c.Req.ref.Token), micros(c.Req.lease)
	}
	// A lone call's statement, sent from its caller's goroutine, ends with
	// its caller's context too.
	ctx, stop := sqlclaim.CallerBound(ctx, calls)
	defer stop()
	rows, err := d.pool.Query(ctx, d.sql.extend, ids, tokens, leases)
	if err != nil {
		return err
	}
	var (
		pos     int64
		expires time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &expires}, func() error {
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("extended claim %d of %d", pos, n)
		}
		calls[pos-1].Res = expires
		return nil
	})
	if err != nil {
		return err
	}
	return nil
}
