package claim

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/renewal"
)

// job is a Work handler running on a claim. Its heartbeat is the module's
// renewal loop (internal/renewal), the one lock.Manager holds its locks
// with, on the service's clock: it renews the claim every LeaseDuration/3,
// retries a heartbeat that failed, ends at once when a heartbeat finds the
// claim stale or the service closed, and gives the claim up a safety margin
// before its last confirmed expiry if no heartbeat confirmed it since. The
// loop has no goroutine: its timers are callbacks of the clock.
//
// The handler's context is a child of the loop's, so that every end of the
// hold reaches the handler with its cause. The Broker stops the job (the
// handler's context cancelled with the reason, the loop cancelled) in the
// critical section that takes the claim's item back, and when it closes.
// It only cancels there: Loop.Stop waits for a heartbeat under way, which
// needs the Broker's lock, so the worker stops the loop, outside the lock,
// once the handler has returned; nothing of the job runs after that.
type job struct {
	parent context.Context // Work's
	lease  time.Duration
	margin time.Duration
	retry  time.Duration

	// Set by startJob, under the Broker's lock, before the loop runs.
	b      *Broker
	loop   *renewal.Loop
	ctx    context.Context // the handler's, a child of the loop's
	cancel context.CancelCauseFunc
	// claim is the claim as of its last heartbeat. After startJob only
	// renew touches it, and the loop never runs renew concurrently with
	// itself.
	claim Claim

	// Guarded by the Broker's lock.
	done    bool // ended: the handler returned, or the Broker stopped the job
	stopped bool // stopped by the Broker: the claim is not the worker's to settle
}

func newJob(ctx context.Context, w Worker) *job {
	return &job{parent: ctx, lease: w.LeaseDuration, margin: w.SafetyMargin, retry: heartbeatRetry(w.LeaseDuration)}
}

// heartbeatRetry is how soon a Work heartbeat that failed is retried: the
// renewal loop's default, as lock.Manager's.
func heartbeatRetry(lease time.Duration) time.Duration { return renewal.DefaultRetry(lease) }

// startJob records that j runs on the new claim h (c to the caller) and
// starts its heartbeat. The claim's lease was granted to expire at
// c.ExpiresAt on the service's clock, the Broker's, so the hold counts from
// the instant of the grant (c.ExpiresAt - the lease): the safety deadline
// is then exactly the margin before the real expiry. b.mu is held: starting
// the loop runs no user code but the clock's.
func (b *Broker) startJob(j *job, h *hold, c Claim) {
	h.job = j
	j.b = b
	j.claim = c
	b.jobs[j] = struct{}{}
	j.loop = renewal.Start(j.parent, renewal.Config{
		Clock:    b.clock,
		Duration: j.lease,
		Margin:   j.margin,
		Retry:    j.retry,
		Renew:    j.renew,
		Expired:  unconfirmed(h, j.margin),
	}, c.ExpiresAt.Add(-j.lease))
	j.ctx, j.cancel = context.WithCancelCause(j.loop.Context())
}

// unconfirmed is the cause for a handler whose claim h no heartbeat
// confirmed before the safety margin.
func unconfirmed(h *hold, margin time.Duration) error {
	r := Ref{Item: h.item.id, Token: uint64(h.lease)}
	return lostError{stale("work", r, "lost its claim: treated as expired a safety margin of "+margin.String()+
		" before its last confirmed expiry, as the heartbeat could not confirm it since")}
}

// renew is the loop's Renew: one heartbeat of the claim. A heartbeat refused
// because the claim is stale means the claim is lost (the Broker has taken
// the item back, or will as that heartbeat's answer is recorded, cancelling
// the handler first); a closed service or Broker will never confirm it
// again. Any other error is retried by the loop.
func (j *job) renew(ctx context.Context) error {
	c, err := j.b.Heartbeat(ctx, j.claim, j.lease)
	if err == nil {
		j.claim = c
		return nil
	}
	var le *lease.Error
	switch {
	case errors.Is(err, lease.ErrStaleUse) && errors.As(err, &le):
		return renewal.Lost(lostError{le})
	case errors.Is(err, lease.ErrClosed):
		return renewal.Lost(err)
	}
	return err
}

// stopJob stops j for cause: the handler's context cancelled with cause
// (if the handler is still running) and no more heartbeats. Both are
// cancellations that run no user code and do not wait, so they are done
// under the lock, in the critical section that takes the claim's item
// back; the worker waits for a heartbeat under way once its handler has
// returned. b.mu is held.
func (b *Broker) stopJob(j *job, cause error) {
	if j.done {
		return
	}
	j.done, j.stopped = true, true
	delete(b.jobs, j)
	j.cancel(cause)
	j.loop.Cancel()
}

// endedJob reports whether the Broker has stopped j.
func (b *Broker) endedJob(j *job) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return j.stopped
}

// finishJob ends j once its handler has returned: it stops the heartbeat
// (outside the Broker's lock, waiting for a heartbeat under way, after which
// nothing of the job runs) and reports whether the Broker had stopped j
// (the claim was lost or the Broker closed), in which case the item is not
// the worker's to settle.
func (b *Broker) finishJob(j *job) (stopped bool) {
	j.loop.Stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	if !j.done {
		j.done = true
		delete(b.jobs, j)
	}
	j.cancel(nil)
	return j.stopped
}

// scheduleError checks the heartbeat schedule of w, whose zero fields
// have their defaults, with the rules lock.Manager's schedule obeys.
func (w Worker) scheduleError() error {
	bad := renewal.Validate(w.LeaseDuration, w.SafetyMargin, heartbeatRetry(w.LeaseDuration))
	switch {
	case bad == nil:
		return nil
	case bad.Param == renewal.ParamDuration:
		return invalid("work", "lease_duration", bad.Detail)
	case bad.Param == renewal.ParamRetry:
		return invalid("work", "safety_margin", bad.Detail+
			"; failed heartbeats are retried every "+heartbeatRetry(w.LeaseDuration).String()+
			", a tenth of the lease duration: set a shorter safety margin")
	}
	return invalid("work", "safety_margin", bad.Detail)
}
