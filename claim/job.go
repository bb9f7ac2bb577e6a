package claim

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/renewal"
)

// run is one Work call: its fetcher, its handlers' jobs, and how it stops.
//
// Locks. A store may call lostFn with its own lock held, and lostFn takes
// run.mu, so nothing holds run.mu while calling the store; the Broker's
// lock is never held across a call either. Under run.mu the jobs are only
// cancelled: contexts, and renewal loops with Loop.Cancel, which does not
// wait for a heartbeat under way (that heartbeat may be waiting for the
// store's lock). A worker stops its job's loop, with Loop.Stop, outside
// every lock once its handler has returned; nothing of the job runs after
// that.
type run struct {
	b     *Broker
	w     Worker
	clock lease.Clock
	wg    sync.WaitGroup

	// base is the parent of every job: Work's context without its
	// cancellation, cancelled by hardStop (the stop timeout, an error, the
	// Broker closing).
	base     context.Context
	hardStop context.CancelCauseFunc
	closing  chan struct{} // closed when the Broker closes
	lostFn   func(Ref, error)

	mu         sync.Mutex
	closeCause error         // set when the Broker closed
	jobs       map[Ref]*job  // jobs whose handler has not returned
	claiming   int           // claims under way
	early      map[Ref]error // claims of those claims lost before they returned
	stopTimer  lease.Timer   // the stop timeout, once Work's ctx is done
}

func newRun(b *Broker, ctx context.Context, w Worker) *run {
	base, hardStop := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &run{b: b, w: w, clock: b.clock, base: base, hardStop: hardStop,
		closing: make(chan struct{}), jobs: make(map[Ref]*job, w.Concurrency)}
	r.lostFn = r.lost
	return r
}

// isClosed reports whether the Broker closed the run.
func (r *run) isClosed() bool {
	select {
	case <-r.closing:
		return true
	default:
		return false
	}
}

// close stops the run for the Broker's Close: every job is stopped with
// cause, and no claim will be handed to a handler.
func (r *run) close(cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closeCause != nil {
		return
	}
	r.closeCause = cause
	close(r.closing)
	if r.stopTimer != nil {
		r.stopTimer.Stop()
	}
	for _, j := range r.jobs {
		r.stopJob(j, cause)
	}
	r.hardStop(cause)
}

// stopAfter starts the end of the handlers once the fetcher has stopped:
// after StopTimeout when it stopped because Work's context is done, at
// once (with err as the cause) when it failed.
func (r *run) stopAfter(err error) {
	if err != nil {
		r.hardStop(err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closeCause != nil {
		return
	}
	r.stopTimer = r.clock.AfterFunc(r.w.StopTimeout, func() {
		r.hardStop(errStopped(r.w.StopTimeout))
	})
}

// errStopped is the cause of the contexts of handlers still running at the
// stop timeout.
func errStopped(d time.Duration) error {
	return &stoppedError{d}
}

type stoppedError struct{ d time.Duration }

func (e *stoppedError) Error() string {
	return "claim: work stopped: handler still running " + e.d.String() + " (the stop timeout) after the worker was told to stop [" + string(CodeStopped) + "]"
}
func (e *stoppedError) Unwrap() error { return ErrStopped }

// lost is the ClaimRequest.Lost of the run's claims: it stops the claim's
// job, or notes the loss for the claim under way to find. It may be called
// with the store's lock held.
func (r *run) lost(ref Ref, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.jobs[ref]; j != nil {
		r.stopJob(j, cause)
		return
	}
	if r.claiming > 0 {
		if r.early == nil {
			r.early = make(map[Ref]error)
		}
		r.early[ref] = cause
	}
}

// beginClaim notes that a claim is under way, so that losses of its claims
// reported before it returns are kept.
func (r *run) beginClaim() {
	r.mu.Lock()
	r.claiming++
	r.mu.Unlock()
}

// endClaim makes a job of each claim, heartbeated from sent, the instant
// the claim was asked for, and returns them. A claim lost meanwhile, or
// made as the Broker closed, has its job stopped already. Losses noted
// for other claims still under way are kept for them; once none is, the
// rest (of claims that never came back) are dropped.
func (r *run) endClaim(claims []Claim, sent time.Time) []*job {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.claiming--
	var out []*job
	if len(claims) > 0 {
		out = make([]*job, len(claims))
	}
	for i, c := range claims {
		j := r.newJob(c, sent)
		out[i] = j
		r.jobs[c.Ref] = j
		cause, lost := r.early[c.Ref]
		switch {
		case lost:
			delete(r.early, c.Ref)
			r.stopJob(j, cause)
		case r.closeCause != nil:
			r.stopJob(j, r.closeCause)
		}
	}
	if r.claiming == 0 {
		r.early = nil
	}
	return out
}

// job is a Work handler running on a claim. Its heartbeat is the module's
// renewal loop (internal/renewal), the one lock.Manager holds its locks
// with, on the Broker's clock: it renews the claim every LeaseDuration/3,
// retries a heartbeat that failed, ends at once when a heartbeat finds the
// claim stale or the store closed, and gives the claim up a safety margin
// before its last confirmed expiry if no heartbeat confirmed it since. The
// loop has no goroutine: its timers are callbacks of the clock.
//
// The handler's context is a child of the loop's, itself a child of the
// run's base, so that every end of the hold reaches the handler with its
// cause.
type job struct {
	r       *run
	claim   Claim
	loop    *renewal.Loop
	ctx     context.Context // the handler's
	cancel  context.CancelCauseFunc
	timeout time.Duration // the handler's, 0 for none

	// Guarded by run.mu.
	done     bool        // the handler returned, or the job was stopped
	stopped  bool        // stopped: the claim is not the worker's to settle
	timedOut bool        // the timeout cancelled the handler
	timer    lease.Timer // the handler's timeout
}

// newJob makes the job of claim c, asked for at sent, and starts its
// heartbeat. run.mu is held: starting the loop runs no user code but the
// clock's.
func (r *run) newJob(c Claim, sent time.Time) *job {
	w := r.w
	j := &job{r: r, claim: c, timeout: w.Timeout}
	if c.Timeout > 0 {
		j.timeout = c.Timeout
	}
	ref := c.Ref
	j.loop = renewal.Start(r.base, renewal.Config{
		Clock:    r.clock,
		Duration: w.LeaseDuration,
		Margin:   w.SafetyMargin,
		Retry:    heartbeatRetry(w.LeaseDuration),
		Renew:    j.renew,
		Expired:  unconfirmed(ref, w.SafetyMargin),
	}, sent)
	j.ctx, j.cancel = context.WithCancelCause(j.loop.Context())
	return j
}

// heartbeatRetry is how soon a Work heartbeat that failed is retried: the
// renewal loop's default, as lock.Manager's.
func heartbeatRetry(lease time.Duration) time.Duration { return renewal.DefaultRetry(lease) }

// unconfirmed is the cause for a handler whose claim r no heartbeat
// confirmed before the safety margin.
func unconfirmed(r Ref, margin time.Duration) error { return unconfirmedError{r, margin} }

// unconfirmedError is unconfirmed's cause, a causeError matching
// ErrClaimLost, built when it is read: every job is given one up front,
// and nearly every job ends without it. Built for each job, its text was
// about a seventh of the bytes Work allocated per item.
type unconfirmedError struct {
	ref    Ref
	margin time.Duration
}

func (e unconfirmedError) cause() causeError {
	return causeError{ErrClaimLost, stale("work", e.ref, "lost its claim: treated as expired a safety margin of "+e.margin.String()+
		" before its last confirmed expiry, as the heartbeat could not confirm it since")}
}

func (e unconfirmedError) Error() string   { return e.cause().Error() }
func (e unconfirmedError) Unwrap() []error { return e.cause().Unwrap() }

// renew is the loop's Renew: one heartbeat of the claim. A heartbeat refused
// because the claim is stale means the claim is lost (the store has taken
// the item back, or will); a closed store will never confirm it again. Any
// other error is retried by the loop.
func (j *job) renew(ctx context.Context) error {
	_, err := j.r.b.store.Extend(ctx, j.claim.Ref, j.r.w.LeaseDuration)
	if err == nil {
		return nil
	}
	var le *lease.Error
	switch {
	case errors.Is(err, lease.ErrStaleUse) && errors.As(err, &le):
		return renewal.Lost(causeError{ErrClaimLost, le})
	case errors.Is(err, lease.ErrClosed):
		return renewal.Lost(err)
	}
	return err
}

// stopJob stops j for cause: the handler's context cancelled with cause
// (if the handler is still running) and no more heartbeats, and the claim
// no longer the worker's to settle. Both are cancellations that run no user
// code and do not wait, so they are done under run.mu, possibly within the
// store's critical section that takes the claim's item back. run.mu is
// held.
func (r *run) stopJob(j *job, cause error) {
	if j.done {
		return
	}
	j.done, j.stopped = true, true
	delete(r.jobs, j.claim.Ref)
	j.cancel(cause)
	j.loop.Cancel()
	if j.timer != nil {
		j.timer.Stop()
	}
}

// start arms j's timeout and reports whether its handler is to run: not if
// the job was stopped already.
func (r *run) start(j *job) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j.done {
		return false
	}
	if j.timeout > 0 {
		cause := context.DeadlineExceeded
		j.timer = r.clock.AfterFunc(j.timeout, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if !j.done {
				j.timedOut = true
				j.cancel(cause)
			}
		})
	}
	return true
}

// finish ends j once its handler has returned: it stops the timeout and
// the heartbeat (outside every lock, waiting for a heartbeat under way,
// after which nothing of the job runs) and reports whether the job had been
// stopped, in which case the item is not the worker's to settle, and
// whether the handler's timeout had passed.
func (r *run) finish(j *job) (stopped, timedOut bool) {
	r.mu.Lock()
	if j.timer != nil {
		j.timer.Stop()
	}
	if !j.done {
		j.done = true
		delete(r.jobs, j.claim.Ref)
	}
	stopped, timedOut = j.stopped, j.timedOut
	r.mu.Unlock()
	j.loop.Stop()
	j.cancel(nil)
	return stopped, timedOut
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
