package claim

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/leasehold/lease"
)

// Claim is one owner's hold on one item. It is a plain value, safe to copy
// and to use from several goroutines; the Broker reads only its Ref,
// Attempt and MaxAttempts, so changing the other fields changes nothing.
type Claim struct {
	Queue       string
	Item        ItemID
	Owner       string
	Payload     []byte // a copy of the item's payload
	Attempt     int    // 1 for the first claim of the item
	MaxAttempts int    // the item's attempts in all
	Priority    int
	Timeout     time.Duration // the item's handler timeout, 0 for none
	ExpiresAt   time.Time
	Ref         Ref
}

// Claim claims up to limit visible items of queue for owner, oldest visible
// first, each for leaseDuration, and returns the claims. It returns an
// empty slice, not an error, when nothing is visible. Each claim is a lease
// granted to owner with purpose lease.Operation and TTL leaseDuration, so the
// service's TTL bounds apply. Bad input (empty queue or owner, limit < 1,
// leaseDuration <= 0) gets an error matching lease.ErrInvalidArgument that
// names the field; on any error nothing is claimed, and so it is if the
// Broker is closed while the leases are being granted.
func (b *Broker) Claim(ctx context.Context, queue, owner string, limit int, leaseDuration time.Duration) ([]Claim, error) {
	claims, _, err := b.claim(ctx, queue, owner, limit, leaseDuration, nil)
	return claims, err
}

// waiter is a worker's wait for a queue: it must call Broker.stopWaiting
// with qs once wake is closed or it gives up.
type waiter struct {
	qs   *queueState
	wake <-chan struct{}
}

// claim is Claim, and for a Work worker (j not nil, limit 1) also: the
// claim is recorded with j so that losing it stops j, and when nothing was
// visible it returns a waiter whose channel is closed when something may
// have become visible.
func (b *Broker) claim(ctx context.Context, queue, owner string, limit int, d time.Duration, j *job) ([]Claim, waiter, error) {
	if err := checkClaimArgs(ctx, queue, owner, limit, d); err != nil {
		return nil, waiter{}, err
	}
	b.mu.Lock()
	if err := b.open("claim"); err != nil {
		b.mu.Unlock()
		return nil, waiter{}, err
	}
	qs := b.findQueue(queue)
	if qs == nil || qs.ready.Len() == 0 {
		var w waiter
		if j != nil {
			if qs == nil {
				qs = b.queue(queue)
			}
			if qs.wake == nil {
				qs.wake = make(chan struct{})
			}
			qs.waiters++
			w = waiter{qs, qs.wake}
		}
		b.unlock()
		return []Claim{}, w, nil
	}
	// Reserve the items, then grant their leases without the lock. The
	// leases go straight into out, which nobody else sees yet.
	n := min(limit, qs.ready.Len())
	var buf [8]*hold
	holds := buf[:0]
	if n > len(buf) {
		holds = make([]*hold, 0, n)
	}
	for range n {
		it := qs.ready.pop()
		h := &hold{item: it, owner: owner}
		it.state = Claimed
		it.hold = h
		qs.claimed++
		holds = append(holds, h)
	}
	missed := b.missed
	b.mu.Unlock()

	out := make([]Claim, len(holds))
	var err error
	granted := 0
	for ; granted < len(out); granted++ {
		l, gerr := b.svc.Grant(ctx, owner, lease.Operation, d)
		if gerr != nil {
			err = gerr
			break
		}
		out[granted] = Claim{Queue: queue, Owner: owner, ExpiresAt: l.ExpiresAt,
			Ref: Ref{Token: uint64(l.ID)}}
	}

	b.mu.Lock()
	if err == nil && b.closed {
		err = closedError("claim")
	}
	if err != nil {
		// Put the items back where they were, as if never claimed, and
		// give back the leases already granted.
		for _, h := range holds {
			b.release(h)
			b.makeVisible(h.item, h.item.visibleAt)
		}
		b.unlock()
		for _, c := range out[:granted] {
			_, _ = b.svc.Revoke(context.WithoutCancel(ctx), lease.ID(c.Ref.Token))
		}
		return nil, waiter{}, err
	}
	for i, h := range holds {
		it := h.item
		it.attempts++
		h.attempt = it.attempts
		h.lease = lease.ID(out[i].Ref.Token)
		h.expires = b.nanos(out[i].ExpiresAt)
		b.byLease.put(h.lease, h)
		b.claims.push(h.expires, it)
		out[i].Item = it.id
		out[i].Ref.Item = it.id
		out[i].MaxAttempts = it.max
		out[i].Payload = clone(it.payload)
		out[i].Attempt = h.attempt
	}
	if j != nil {
		b.startJob(j, holds[0], out[0])
	}
	if b.missed != missed {
		// A lease ended that the Broker did not know, perhaps one of
		// these before it was recorded: if it expired, take it back now.
		b.settle(b.now())
	}
	b.unlock()
	return out, waiter{}, nil
}

// stopWaiting ends a worker's wait on qs.
func (b *Broker) stopWaiting(qs *queueState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	qs.waiters--
	b.retireIfUnused(qs)
}

func checkClaimArgs(ctx context.Context, queue, owner string, limit int, d time.Duration) error {
	if err := checkContext(ctx, "claim"); err != nil {
		return err
	}
	switch {
	case queue == "":
		return invalid("claim", "queue", "must not be empty")
	case owner == "":
		return invalid("claim", "owner", "must not be empty")
	case limit < 1:
		return invalid("claim", "limit", strconv.Itoa(limit)+" is less than 1")
	case d <= 0:
		return invalid("claim", "lease_duration", d.String()+" is not positive")
	}
	return nil
}

// Heartbeat extends a live claim to now+leaseDuration and returns the
// updated claim. A claim that is no longer live (its lease expired or was
// revoked, its item was completed, failed or claimed again) gets an error
// matching lease.ErrStaleUse and nothing changes.
func (b *Broker) Heartbeat(ctx context.Context, c Claim, leaseDuration time.Duration) (Claim, error) {
	const op = "heartbeat"
	if err := b.checkClaim(ctx, op, c); err != nil {
		return Claim{}, err
	}
	if leaseDuration <= 0 {
		return Claim{}, invalid(op, "lease_duration", leaseDuration.String()+" is not positive")
	}
	h, beatsDone, err := b.acquire(op, c.Ref, false)
	if err != nil {
		return Claim{}, err
	}
	l, err := b.svc.RenewTTL(ctx, lease.ID(c.Ref.Token), leaseDuration)

	b.mu.Lock()
	defer b.unlock()
	if b.closed {
		return Claim{}, closedError(op)
	}
	if err == nil {
		expires := b.nanos(l.ExpiresAt)
		if h.beats > 1 || h.beatsDone != beatsDone {
			// Another heartbeat overlapped this one and the service may
			// have applied it last: keep the later expiry. Should the
			// service's be the earlier, its ending notification takes the
			// item back; the Broker never expires a claim early.
			expires = max(expires, h.expires)
		}
		h.expires = expires
	}
	h.beats--
	h.beatsDone++
	b.finish(h, err)
	if err != nil {
		return Claim{}, b.coreError(op, c.Ref, err)
	}
	c.ExpiresAt = l.ExpiresAt
	return c, nil
}

// Complete removes the claimed item for good. A claim that is no longer
// live gets an error matching lease.ErrStaleUse and nothing changes.
func (b *Broker) Complete(ctx context.Context, c Claim) error {
	const op = "complete"
	if err := b.checkClaim(ctx, op, c); err != nil {
		return err
	}
	h, _, err := b.acquire(op, c.Ref, true)
	if err != nil {
		return err
	}
	return b.settleClaim(ctx, op, c.Ref, h, func(it *item) {
		b.remove(it)
	})
}

// Fail gives the claimed item back with reason, which is kept in its
// history. If the claim was the item's last attempt the item is
// dead-lettered (DeadLettered); otherwise it is requeued (Requeued), visible
// again after Backoff(attempt, baseDelay, maxDelay), passed through the
// jitter function if the Broker has one. Durations must be positive and
// baseDelay <= maxDelay. A claim that is no longer live gets an error
// matching lease.ErrStaleUse and nothing changes.
func (b *Broker) Fail(ctx context.Context, c Claim, reason string, baseDelay, maxDelay time.Duration) (Outcome, error) {
	const op = "fail"
	if err := b.checkClaim(ctx, op, c); err != nil {
		return 0, err
	}
	switch {
	case baseDelay <= 0:
		return 0, invalid(op, "base_delay", baseDelay.String()+" is not positive")
	case maxDelay <= 0:
		return 0, invalid(op, "max_delay", maxDelay.String()+" is not positive")
	case maxDelay < baseDelay:
		return 0, invalid(op, "max_delay", maxDelay.String()+" is less than base_delay "+baseDelay.String())
	}
	h, _, err := b.acquire(op, c.Ref, true)
	if err != nil {
		return 0, err
	}
	// The claim is this call's now: its attempt and the item's maximum do
	// not change, so the delay is computed here, outside the lock, where
	// the jitter function may take its time or call the Broker.
	last := h.attempt >= h.item.max
	var delay time.Duration
	if !last {
		delay = b.delay(h.attempt, baseDelay, maxDelay)
	}
	err = b.settleClaim(ctx, op, c.Ref, h, func(it *item) {
		now := b.now()
		it.history = append(it.history, Failure{Attempt: h.attempt, Owner: h.owner, At: b.at(now), Reason: reason})
		if last {
			b.makeDead(it, now)
			return
		}
		b.place(it, addSat(now, delay), now)
	})
	if err != nil {
		return 0, err
	}
	if last {
		return DeadLettered, nil
	}
	return Requeued, nil
}

// settleClaim ends the live claim h (acquired for settling) for a Complete
// or Fail: it revokes the claim's lease and, if the service agrees the lease
// was live, detaches the claim from its item and calls apply under the lock
// to decide the item's fate.
func (b *Broker) settleClaim(ctx context.Context, op string, r Ref, h *hold, apply func(it *item)) error {
	_, err := b.svc.Revoke(ctx, lease.ID(r.Token))

	b.mu.Lock()
	defer b.unlock()
	h.settling = false
	if b.closed {
		return closedError(op)
	}
	if err != nil {
		b.finish(h, err)
		return b.coreError(op, r, err)
	}
	h.busy--
	it := h.item
	b.release(h)
	apply(it)
	return nil
}

// delay is the backoff delay with the Broker's jitter applied. It calls
// the jitter function, so it must not be called under the lock.
func (b *Broker) delay(attempt int, base, maxDelay time.Duration) time.Duration {
	d := Backoff(attempt, base, maxDelay)
	if b.opts.jitter == nil {
		return d
	}
	jittered := d
	if b.call("jitter", func() { jittered = b.opts.jitter(d) }) {
		return d
	}
	return min(max(jittered, 0), maxDelay)
}

// checkClaim validates the arguments common to the calls on a claim.
func (b *Broker) checkClaim(ctx context.Context, op string, c Claim) error {
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	switch {
	case c.Ref.Token == 0:
		return invalid(op, "claim", "is the zero Claim")
	}
	return nil
}

// acquire finds the live claim r refers to and marks a call under way on
// it: a heartbeat, or with settle a Complete or Fail, which owns the claim
// from then on. The claim leaves the claims heap until finish, so that only
// the service's answer decides its fate meanwhile. For a heartbeat it also
// returns how many heartbeats of the claim had finished, to tell whether
// another one overlaps it.
//
// acquire does not read the clock: whether the lease is still live is for
// the service to answer, and a claim that expired is taken back when that
// answer comes.
func (b *Broker) acquire(op string, r Ref, settle bool) (*hold, uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, 0, closedError(op)
	}
	it := b.lookup(r.Item)
	if it == nil || it.hold == nil || it.hold.lease != lease.ID(r.Token) {
		return nil, 0, stale(op, r, "is no longer claimed by this claim")
	}
	h := it.hold
	switch {
	case h.settling:
		return nil, 0, stale(op, r, "is being completed or failed")
	case h.ended != 0:
		return nil, 0, stale(op, r, "lost its claim: lease "+h.ended.String())
	}
	if h.busy == 0 {
		b.claims.remove(it)
	}
	h.busy++
	h.settling = settle
	if !settle {
		h.beats++
	}
	return h, h.beatsDone, nil
}

// finish ends a call on claim h that did not complete or fail it. err is
// the service's answer: if it says the lease is gone, the claim is lost.
// The last call to finish puts a still-live claim back in the claims heap
// or takes back its item if its lease ended meanwhile.
func (b *Broker) finish(h *hold, err error) {
	h.busy--
	if err != nil && leaseEnded(err) && h.ended == 0 {
		// The ending notification has not arrived yet.
		h.ended, h.endedAt = lease.EndExpired, h.expires
		if errors.Is(err, lease.ErrAlreadyRevoked) {
			h.ended = lease.EndRevoked
		}
	}
	if h.busy > 0 || h.item.hold != h {
		return
	}
	if h.ended != 0 {
		// An expiry ended the lease at its instant, no later than now; a
		// revocation is dated now, when the Broker learns of it.
		now := b.now()
		at := min(h.endedAt, now)
		if h.ended == lease.EndRevoked {
			at = now
		}
		b.lose(h, at, h.ended)
		return
	}
	b.claims.push(h.expires, h.item)
}

// coreError turns the service's error for a claim's lease into the Broker's:
// an ended lease is a stale claim; anything else (a cancelled context, a
// closed service, a TTL out of bounds) is returned as is.
func (b *Broker) coreError(op string, r Ref, err error) error {
	if leaseEnded(err) {
		return stale(op, r, "lost its claim: "+err.Error())
	}
	return err
}
