package claim

import (
	"context"
	"time"
)

// Claim claims up to limit claimable items of queue for owner, each for
// leaseDuration, and returns the claims: lower Priority first, then the
// earliest visible, then the lowest ID. It returns an empty slice, not an
// error, when nothing is claimable. Bad input (empty queue or owner, limit
// < 1, leaseDuration <= 0) gets an error matching lease.ErrInvalidArgument
// that names the field; on any error nothing is claimed. With Memory each
// claim is a lease of its service, so the service's TTL bounds apply.
func (b *Broker) Claim(ctx context.Context, queue, owner string, limit int, leaseDuration time.Duration) ([]Claim, error) {
	if err := checkContext(ctx, "claim"); err != nil {
		return nil, err
	}
	claims, err := b.store.Claim(ctx, ClaimRequest{Queue: queue, Owner: owner, Limit: limit, Lease: leaseDuration})
	return b.observeClaims(claims, leaseDuration, err)
}

// Heartbeat extends a live claim to now+leaseDuration on the store's clock
// and returns the updated claim. A claim that is no longer live (its lease
// expired or was revoked, its item was settled, cancelled or claimed again)
// gets an error matching lease.ErrStaleUse and nothing changes.
func (b *Broker) Heartbeat(ctx context.Context, c Claim, leaseDuration time.Duration) (Claim, error) {
	const op = "heartbeat"
	if err := checkContext(ctx, op); err != nil {
		return Claim{}, err
	}
	exp, err := b.store.Extend(ctx, c.Ref, leaseDuration)
	if err != nil {
		return Claim{}, err
	}
	c.ExpiresAt = exp
	return c, nil
}

// Complete completes the claimed item: the store keeps it as Completed for
// its retention (see Retention), or removes it. A claim that is no longer
// live gets an error matching lease.ErrStaleUse and nothing changes.
func (b *Broker) Complete(ctx context.Context, c Claim) error {
	const op = "complete"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return b.observeSettled(c, EventCompleted, b.store.Settle(ctx, Settlement{Ref: c.Ref, How: SettleComplete}))
}

// Fail gives the claimed item back with reason, which is kept in its
// history. If the claim was the item's last attempt (c.Attempt >=
// c.MaxAttempts) the item is dead-lettered (DeadLettered); otherwise it is
// requeued (Requeued), visible again after Backoff(attempt, baseDelay,
// maxDelay), passed through the jitter function if the Broker has one.
// Durations must be positive and baseDelay <= maxDelay. A claim that is no
// longer live gets an error matching lease.ErrStaleUse and nothing changes.
func (b *Broker) Fail(ctx context.Context, c Claim, reason string, baseDelay, maxDelay time.Duration) (Outcome, error) {
	const op = "fail"
	if err := checkContext(ctx, op); err != nil {
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
	s := Settlement{Ref: c.Ref, How: SettleDead, Reason: reason}
	out := DeadLettered
	if c.Attempt < c.MaxAttempts {
		s.How, s.After, out = SettleRetry, b.delay(c.Attempt, baseDelay, maxDelay), Requeued
	}
	if err := b.store.Settle(ctx, s); err != nil {
		return 0, err
	}
	return out, b.observeSettled(c, outcomeEvent(out), nil)
}

// Snooze gives the claimed item back, claimable again after after, without
// spending an attempt and without a failure in its history: for a handler
// that finds it is too early to do the work. after must not be negative. A
// claim that is no longer live gets an error matching lease.ErrStaleUse and
// nothing changes.
func (b *Broker) Snooze(ctx context.Context, c Claim, after time.Duration) error {
	const op = "snooze"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return b.observeSettled(c, EventSnoozed, b.store.Settle(ctx, Settlement{Ref: c.Ref, How: SettleSnooze, After: after}))
}

// Cancel cancels the item id of queue whatever its state: waiting, dead or
// claimed. The store keeps it as Cancelled for its retention (see
// Retention) or removes it; an item already completed or cancelled is left
// as it is. A claimed item's claim ends at once: later calls on it get an
// error matching lease.ErrStaleUse, and a Work handler running on it has
// its context cancelled with a cause matching ErrCancelled. An item that
// does not exist in queue gets an error matching ErrNotFound.
func (b *Broker) Cancel(ctx context.Context, queue string, id ItemID) error {
	const op = "cancel"
	if err := checkContext(ctx, op); err != nil {
		return err
	}
	return b.observeCancel(queue, id, b.store.Cancel(ctx, queue, id))
}

// delay is the backoff delay with the Broker's jitter applied. It calls
// the jitter function, so it must not be called under a lock.
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
