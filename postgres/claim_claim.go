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
	"github.com/leasehold/lease/claim/claimstore"
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
	const op = "claim"
	if err := s.begin(ctx, op); err != nil {
		return nil, err
	}
	if err := checks.ClaimRequest("claims.claim", req); err != nil {
		return nil, err
	}
	weight := min(req.Limit, math.MaxInt32)
	out, err := s.claims.call(ctx, &batchCall[claim.ClaimRequest, []claim.Claim]{group: req.Queue, weight: weight, req: req})
	if err != nil {
		return nil, err
	}
	if req.Lost != nil && len(out) > 0 {
		s.track(out, req.Lost)
	}
	return out, nil
}

// runClaim sends one batch of Claim calls on one queue.
func (s *ClaimStore) runClaim(ctx context.Context, calls []*batchCall[claim.ClaimRequest, []claim.Claim]) error {
	n := len(calls)
	owners, leases, starts := make([]string, n), make([]int64, n), make([]int64, n)
	var total int64
	for i, c := range calls {
		owners[i], leases[i], starts[i] = c.req.Owner, micros(c.req.Lease), total+1
		total += int64(c.weight)
		c.res = []claim.Claim{}
	}
	queue := calls[0].req.Queue
	rows, err := s.pool.Query(ctx, s.sql.claim, queue, owners, leases, starts, total, s.table)
	if err != nil {
		return s.fail("claim", err)
	}
	type picked struct {
		call, rn int64
		c        claim.Claim
	}
	var (
		got               []picked
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
		if state != rowClaimed {
			return nil // its lost claim was its last attempt: now dead
		}
		tagList, err := claimstore.ParseTagsJSON(tags)
		if err != nil {
			return fmt.Errorf("item %d: %w", id, err)
		}
		got = append(got, picked{call, rn, claim.Claim{
			Queue: queue, Kind: kind, Tags: tagList, Metadata: metadata, Item: claim.ItemID(id), Owner: owners[call-1], Payload: payload,
			Attempt: int(attempt), MaxAttempts: int(maxAtt), Priority: int(prio),
			Timeout: time.Duration(tout) * time.Microsecond, EnqueuedAt: enqueued, ExpiresAt: expires,
			Ref: claim.Ref{Item: claim.ItemID(id), Token: uint64(token)},
		}})
		payload, metadata = nil, nil // the next row gets its own
		return nil
	})
	if err != nil {
		return s.fail("claim", err)
	}
	slices.SortFunc(got, func(a, b picked) int { return cmp.Compare(a.rn, b.rn) })
	for _, p := range got {
		c := calls[p.call-1]
		c.res = append(c.res, p.c)
	}
	return nil
}

// Extend extends the live claim r to lease from now on the database's
// clock and returns its new expiry. Calls from many goroutines share one
// statement per round trip. A claim that is no longer live (settled,
// expired, claimed again, cancelled) gets an error matching
// lease.ErrStaleUse and nothing changes.
func (s *ClaimStore) Extend(ctx context.Context, r claim.Ref, leaseDuration time.Duration) (time.Time, error) {
	const op = "extend"
	if err := s.begin(ctx, op); err != nil {
		return time.Time{}, err
	}
	if err := checks.Extend("claims."+op, r, leaseDuration); err != nil {
		return time.Time{}, err
	}
	return s.extends.do(ctx, r, leaseDuration)
}

// runExtend sends one batch of extensions.
func (s *ClaimStore) runExtend(ctx context.Context, calls []*batchCall[time.Duration, time.Time]) error {
	n := len(calls)
	ids, tokens, leases := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, c := range calls {
		ids[i], tokens[i], leases[i] = int64(c.item), int64(c.token), micros(c.req)
	}
	rows, err := s.pool.Query(ctx, s.sql.extend, ids, tokens, leases)
	if err != nil {
		return s.fail("extend", err)
	}
	var (
		pos     int64
		expires time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&pos, &expires}, func() error {
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("extended claim %d of %d", pos, n)
		}
		calls[pos-1].res = expires
		return nil
	})
	if err != nil {
		return s.fail("extend", err)
	}
	for _, c := range calls {
		r := claim.Ref{Item: c.item, Token: c.token}
		if c.res.IsZero() {
			s.untrack(r)
			c.err = staleClaim("extend", r)
			continue
		}
		s.retrack(r, c.res)
	}
	return nil
}
