package claim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/renewal"
)

// Defaults of a Worker's zero fields.
const (
	DefaultLeaseDuration = 30 * time.Second
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = time.Hour
	DefaultStopTimeout   = 10 * time.Second
)

// ErrStopped is matched by the cause of a Work handler's context when Work
// stopped it: Work's context was done and the handler was still running
// StopTimeout later. It is a *lease.Error with CodeStopped; treat it as
// read-only.
var ErrStopped error = &lease.Error{Package: "claim", Code: CodeStopped, Detail: "work stopped"}

// Handler processes one claimed item. Returning nil completes the item;
// returning the error of Snooze(d) snoozes it; returning the error of
// Discard(err) dead-letters it at once; another error or a panic fails it.
// ctx is cancelled when the handler should stop:
//
//   - when the claim is lost because its lease expired or was revoked
//     (context.Cause matches ErrClaimLost and lease.ErrStaleUse), and, with
//     the same kind of cause, when no heartbeat could confirm the claim by
//     the Worker's SafetyMargin before its last confirmed expiry. A lost
//     claim's item may be handed out again at once, so a handler must stop
//     touching it then; the store tells the Broker before the item can be
//     claimed again (Memory does).
//   - when the item is cancelled (the cause matches ErrCancelled);
//   - when its timeout passes (the cause matches context.DeadlineExceeded);
//   - StopTimeout after Work's context is done (the cause matches
//     ErrStopped): not at once, so that a handler under way may finish;
//   - when the Broker closes (the cause matches lease.ErrClosed), or a
//     heartbeat finds the store closed (that error).
//
// Work calls the handler from its Concurrency workers at once, so it must be
// safe for concurrent use.
type Handler func(ctx context.Context, c Claim) error

// SnoozeError is the error a handler returns, through Snooze, to give its
// item back for a while without spending an attempt. It is a plain value,
// safe to copy and share.
type SnoozeError struct {
	After time.Duration // the delay before the item is claimable again
}

// Error formats as "claim: snooze for D".
func (e *SnoozeError) Error() string { return "claim: snooze for " + e.After.String() }

// Snooze returns the error a handler returns to snooze its item: the item
// becomes claimable again d later (a negative d counts as 0), its attempt
// is not spent and no failure is recorded. Work finds it with errors.As, so
// it may be wrapped.
func Snooze(d time.Duration) error { return &SnoozeError{After: max(d, 0)} }

// Worker says how Broker.Work runs a handler on a queue. Zero fields take
// the defaults. A Worker is a plain value, safe to share.
type Worker struct {
	Queue   string  // required
	Handler Handler // required
	// Owner is the owner of every claim Work makes, kept in the history of
	// the items it fails. Default DefaultOwner(), unique to the process.
	Owner string
	// Concurrency is the number of handlers running at once; default 1.
	Concurrency int
	// BatchSize is the most items one claim fetches: Work claims
	// min(idle handlers + Prefetch room, BatchSize) items per round trip
	// to the store (at most Concurrency while claims come back full, see
	// Work). Default (zero) Concurrency + Prefetch, so that one
	// round trip fills every idle handler and the prefetch; set 1 to
	// spread items across several Work calls (several processes) more
	// evenly.
	BatchSize int
	// Prefetch is how many items Work may hold claimed beyond its
	// running handlers: they wait for a handler to free up, their claims
	// heartbeated meanwhile, so that handlers that finish find their next
	// item at hand rather than waiting for a round trip to the store, and
	// each round trip fetches more; with Prefetch at least Concurrency,
	// once the queue holds more than a claim takes, a second claim is
	// under way while the first is (see Work), so that the store is
	// asked for the next batch while the last one is worked. An item
	// held so counts an attempt like any other claim, and is not
	// claimable by other workers while it waits. Default (zero) none:
	// Work claims only for idle handlers. Not negative.
	Prefetch int
	// LeaseDuration is the lease of each claim, extended by a heartbeat
	// every LeaseDuration/3 while the handler runs, so it must be at least
	// 3ns. A heartbeat that fails is retried every LeaseDuration/10 (at
	// least 1ns). Default DefaultLeaseDuration.
	LeaseDuration time.Duration
	// SafetyMargin is how long before its claim's last confirmed expiry a
	// handler is told to stop if no heartbeat has confirmed the claim since
	// (a heartbeat hangs or keeps failing): its context is cancelled with a
	// cause matching ErrClaimLost, so that it stops before the item can be
	// handed out again. It must leave a failed heartbeat time to be retried:
	// shorter than LeaseDuration - LeaseDuration/3 - the retry interval,
	// about 57% of LeaseDuration. It must not be negative. Default (zero)
	// LeaseDuration/10, as lock.Manager.
	SafetyMargin time.Duration
	// Timeout bounds each run of the handler: its context is cancelled
	// Timeout after it started, and an error it then returns fails the item
	// with a reason saying it timed out. An item's own Timeout (Claim.
	// Timeout, set with the Timeout enqueue option) overrides it. Zero for
	// none; not negative.
	Timeout time.Duration
	// StopTimeout is how long handlers under way may run once Work's
	// context is done: Work claims nothing more at once, and StopTimeout
	// later cancels the contexts of the handlers still running (cause
	// matching ErrStopped). A handler that then returns nil completes its
	// item; one that returns anything else has its claim handed back at
	// once (snoozed for 0, no attempt spent), so that nobody waits out its
	// lease. Not negative; default DefaultStopTimeout.
	StopTimeout time.Duration
	// BaseDelay and MaxDelay are the backoff of failed items, as for Fail.
	// Defaults DefaultBaseDelay and DefaultMaxDelay.
	BaseDelay, MaxDelay time.Duration
}

// withDefaults validates w and fills its zero fields.
func (w Worker) withDefaults() (Worker, error) {
	const op = "work"
	switch {
	case w.Queue == "":
		return w, invalid(op, "queue", "must not be empty")
	case w.Handler == nil:
		return w, invalid(op, "handler", "must not be nil")
	case w.Concurrency < 0:
		return w, invalid(op, "concurrency", strconv.Itoa(w.Concurrency)+" is negative")
	case w.BatchSize < 0:
		return w, invalid(op, "batch_size", strconv.Itoa(w.BatchSize)+" is negative")
	case w.Prefetch < 0:
		return w, invalid(op, "prefetch", strconv.Itoa(w.Prefetch)+" is negative")
	case w.LeaseDuration < 0:
		return w, invalid(op, "lease_duration", w.LeaseDuration.String()+" is negative")
	case w.SafetyMargin < 0:
		return w, invalid(op, "safety_margin", w.SafetyMargin.String()+" is negative")
	case w.Timeout < 0:
		return w, invalid(op, "timeout", w.Timeout.String()+" is negative")
	case w.StopTimeout < 0:
		return w, invalid(op, "stop_timeout", w.StopTimeout.String()+" is negative")
	case w.BaseDelay < 0:
		return w, invalid(op, "base_delay", w.BaseDelay.String()+" is negative")
	case w.MaxDelay < 0:
		return w, invalid(op, "max_delay", w.MaxDelay.String()+" is negative")
	}
	w.Owner = cmp.Or(w.Owner, DefaultOwner())
	w.Concurrency = cmp.Or(w.Concurrency, 1)
	w.BatchSize = cmp.Or(w.BatchSize, w.Concurrency+w.Prefetch)
	w.LeaseDuration = cmp.Or(w.LeaseDuration, DefaultLeaseDuration)
	w.SafetyMargin = cmp.Or(w.SafetyMargin, renewal.DefaultMargin(w.LeaseDuration))
	w.StopTimeout = cmp.Or(w.StopTimeout, DefaultStopTimeout)
	if err := w.scheduleError(); err != nil {
		return w, err
	}
	w.BaseDelay = cmp.Or(w.BaseDelay, DefaultBaseDelay)
	w.MaxDelay = cmp.Or(w.MaxDelay, max(DefaultMaxDelay, w.BaseDelay))
	if w.MaxDelay < w.BaseDelay {
		return w, invalid(op, "max_delay", w.MaxDelay.String()+" is less than base_delay "+w.BaseDelay.String())
	}
	return w, nil
}

// Work runs w.Handler on w.Queue until ctx is done, with up to
// w.Concurrency handlers at once. One fetcher claims for them all: it asks
// the store to notify it of new items, claims min(idle handlers plus the
// Prefetch room, BatchSize) items in one call, hands them to handlers as
// they free up, and when nothing was claimable waits for the notification
// (it never polls; a store that can miss changes polls inside Notify).
// After a claim that came back full, the next claim, if fewer than a
// batch of slots are idle, first waits for more to free: until a batch's
// worth is idle or as long as the full claim took on the Broker's clock,
// at most 5ms, so that handlers that finish in a burst are refilled by one
// claim rather than two. A claim that came back short or empty makes the
// next one wait for nothing. While claims come back full, a batch is at
// most Concurrency items (and BatchSize), and when two batches fit in
// Concurrency + Prefetch (Prefetch at least Concurrency, or BatchSize at
// most half the sum) a second claim is sent while the first is under
// way, as soon as a batch of slots is idle, so that the handlers work one
// batch during the next one's round trip: never more than two claims at
// once, and never more items held than Concurrency + Prefetch.
// Each running handler has its claim heartbeated on the Broker's clock
// every LeaseDuration/3 (and is stopped at SafetyMargin before the claim's
// last confirmed expiry if no heartbeat confirmed it since). When the handler returns nil its
// item is completed; when it returns the error of Snooze, snoozed; when it
// returns the error of Discard, dead-lettered at once with the error's text
// as the reason; when it returns another error or panics, failed (the
// reason is the error's text, or "panic: " and the value, the panic also
// going to the Broker's panic handler; a handler past its timeout adds
// that it timed out). Every failure then goes to the error hook
// (WithErrorHook). An item
// whose claim was lost or cancelled while its handler ran is not settled:
// the store has it back already. A handler's slot takes the next item as
// soon as the handler returns, while its item is settled: at most
// Concurrency settlements are in flight besides the handlers, so a store
// across a network commits them in batches rather than one per handler.
//
// Stopping. Once ctx is done Work claims nothing more and lets the
// handlers under way run on: their contexts are not cancelled then, but
// StopTimeout later (see Worker.StopTimeout), and their items are settled
// as usual, with a context that is not ctx; claims under way are waited
// for, and the items they come back with run as the others. Work then
// returns nil, whether ctx was done before Work was called or while it
// ran, once every handler has returned.
//
// Work returns an error for a nil ctx or an invalid Worker (matching
// lease.ErrInvalidArgument and naming the field, whatever the state of
// ctx) and, once its handlers have returned, the error that stopped it if
// it was not ctx's: the Broker closed (matching lease.ErrClosed, noticed at
// once, which also cancels every handler) or the store refusing claims for
// good (closed, or bad input). Other claim errors, such as a store's
// network failing, are retried after a backoff of 100ms doubling up to 5s.
func (b *Broker) Work(ctx context.Context, w Worker) error {
	if ctx == nil {
		return invalid("work", "ctx", "must not be nil")
	}
	w, err := w.withDefaults()
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	r := newRun(b, ctx, w)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return closedError("work")
	}
	b.runs[r] = struct{}{}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.runs, r)
		b.mu.Unlock()
	}()
	return r.work(ctx)
}

// Retry delays of a claim that failed with an error that may pass.
const (
	claimRetryBase = 100 * time.Millisecond
	claimRetryMax  = 5 * time.Second
)

// work is Work's fetcher, on the caller's goroutine.
func (r *run) work(ctx context.Context) error {
	w := r.w
	held := w.Concurrency + w.Prefetch
	jobs := make(chan *job, held)
	freed := make(chan struct{}, held)
	running := make(chan struct{}, w.Concurrency)
	// A goroutine for each item held and one more per handler: a
	// handler's slot is freed as soon as it returns, and its goroutine
	// then settles the item while another runs the next one. A store
	// across a network thus pipelines its settlements (it coalesces them)
	// instead of idling every handler for a commit. The fetcher's count
	// of idle slots bounds the items held to Concurrency + Prefetch,
	// running bounds the handlers to Concurrency, and the goroutines bound
	// the settlements in flight to Concurrency.
	for range held + w.Concurrency {
		r.wg.Go(func() {
			for j := range jobs {
				running <- struct{}{}
				r.handle(j, func() { <-running; freed <- struct{}{} })
			}
		})
	}
	err := r.fetch(ctx, jobs, freed)
	close(jobs)
	r.stopAfter(err)
	r.wg.Wait()
	r.mu.Lock()
	if r.stopTimer != nil {
		r.stopTimer.Stop()
	}
	closed := r.closeCause
	r.mu.Unlock()
	r.hardStop(nil)
	if closed != nil {
		return closed
	}
	return err
}

// maxClaims is how many claims Work's fetcher has under way at once.
const maxClaims = 2

// claimed is what one claim of the fetcher came back with.
type claimed struct {
	limit int    // the items it asked for
	jobs  []*job // one per item it got
	err   error
	full  bool          // it got as many items as it asked for
	took  time.Duration // on the Broker's clock
	// ready is the store's notification of the queue, asked for as the
	// claim was sent: an empty claim's wait for more.
	ready pending
}

// fetch claims items and hands them to idle handlers until ctx is done, the
// Broker closes or a claim fails for good, and returns once no claim of
// its is under way.
//
// While the queue holds more than a claim takes (the last claim came back
// full), each claim asks for at most part items, and when the Prefetch
// room lets two such claims be held, the second is sent while the first
// is under way as soon as part slots are idle: the handlers work one batch
// during the other's round trip, rather than every slot waiting idle for
// each round trip in turn. Otherwise one claim is under way at a time, for
// every idle slot.
func (r *run) fetch(ctx context.Context, jobs chan<- *job, freed <-chan struct{}) error {
	w := r.w
	// idle is the room for more items held that no claim under way has
	// asked for.
	idle := w.Concurrency + w.Prefetch
	full := min(idle, w.BatchSize) // the largest claim
	// part is the largest claim while the queue holds more: a handler
	// each, so that the Prefetch room lets a second claim be under way.
	part := min(full, w.Concurrency)
	results := make(chan claimed, maxClaims)
	var (
		inflight int  // claims under way
		failures int  // claims failed in a row
		busy     bool // the last claim to come back was full
		fatal    error
		stopping bool
		// gather is how long the next claim may wait for more slots to
		// free (see gatherBound); zero unless the last claim came back
		// full. gathered is that wait.
		gather   time.Duration
		gathered pending
		// ready is the notification an empty claim waits for, paused
		// the end of a failed claim's backoff.
		ready, paused pending
		done          = ctx.Done()
		closing       = r.closing
	)
	defer func() { gathered.end(); ready.end(); paused.end() }()
	for {
		for drained := false; !drained; {
			select {
			case <-freed:
				idle++
			default:
				drained = true
			}
		}
		if !stopping && (ctx.Err() != nil || r.isClosed()) {
			stopping = true
			gathered.end()
			gather = 0
			ready.end()
			paused.end()
		}
		if stopping && inflight == 0 {
			return fatal
		}
		for !stopping && ready.c == nil && paused.c == nil && idle > 0 && inflight < maxClaims {
			if inflight > 0 && (!busy || idle < part) {
				break // a second claim only for a full part of a backlog
			}
			target := full
			if busy {
				target = part
			}
			if inflight == 0 && gather > 0 && idle < target {
				if gathered.c == nil {
					gathered = r.after(gather)
				}
				break
			}
			gathered.end()
			gather = 0
			limit := min(idle, target)
			r.startClaim(ctx, limit, results)
			idle -= limit
			inflight++
		}
		select {
		case <-freed:
			idle++
		case res := <-results:
			inflight--
			idle += res.limit - len(res.jobs)
			busy = res.full
			gather = 0
			if res.full && inflight == 0 {
				gather = gatherBound(res.took)
			}
			switch err := res.err; {
			case err != nil:
				res.ready.end()
				busy = false
				switch {
				case ctx.Err() != nil:
				case errors.Is(err, lease.ErrClosed) || errors.Is(err, lease.ErrInvalidArgument):
					if fatal == nil {
						fatal = err
					}
					stopping = true
				case paused.c == nil:
					failures++
					paused = r.after(Backoff(failures, claimRetryBase, claimRetryMax))
				}
			case len(res.jobs) > 0:
				res.ready.end()
				failures = 0
				for _, j := range res.jobs {
					jobs <- j
				}
			default:
				failures = 0
				if inflight == 0 && !stopping && ready.c == nil {
					ready = res.ready
				} else {
					res.ready.end()
				}
			}
		case <-ready.c:
			ready.end()
		case <-gathered.c:
			gathered.end()
			gather = 0
		case <-paused.c:
			paused.end()
		case <-done:
			done = nil
		case <-closing:
			closing = nil
		}
	}
}

// startClaim sends a claim of up to limit items on a goroutine of its own,
// which sends what it came back with to results.
func (r *run) startClaim(ctx context.Context, limit int, results chan<- claimed) {
	w := r.w
	ready, stop := r.b.store.Notify(w.Queue)
	sent := r.clock.Now()
	r.beginClaim()
	r.wg.Go(func() {
		claims, err := r.b.store.Claim(ctx, ClaimRequest{Queue: w.Queue, Owner: w.Owner,
			Limit: limit, Lease: w.LeaseDuration, Lost: r.lostFn})
		res := claimed{limit: limit, full: err == nil && len(claims) == limit,
			took: r.clock.Now().Sub(sent), ready: pending{ready, stop}}
		claims, res.err = r.b.observeClaims(claims, w.LeaseDuration, err)
		res.jobs = r.endClaim(claims, sent)
		results <- res
	})
}

// pending is a wait of the fetcher's: c is closed, or sent to, when it is
// over, and stop ends it early. The zero pending is no wait.
type pending struct {
	c    <-chan struct{}
	stop func()
}

// end stops p's wait, if any, and forgets it.
func (p *pending) end() {
	if p.stop != nil {
		p.stop()
	}
	*p = pending{}
}

// after returns a wait of d on the Broker's clock.
func (r *run) after(d time.Duration) pending {
	elapsed := make(chan struct{})
	t := r.clock.AfterFunc(d, func() { close(elapsed) })
	return pending{elapsed, func() { t.Stop() }}
}

// maxGather caps how long the fetcher waits for more slots to free before
// a claim.
const maxGather = 5 * time.Millisecond

// gatherBound returns how long the claim after a full one may wait for
// more slots to free, given how long the full one took on the Broker's
// clock: as long again, at most maxGather, and zero for a claim that took
// no time (a fake clock that did not move, or one stepped back).
//
// Why wait at all: handlers that finish at once free their slots in a
// burst right after a claim lands. Claiming on the first freed slot would
// take a few items, the rest freeing while that claim is under way, so
// every batch would cost two round trips (and, on a store that syncs each
// claim, two log flushes) where one would do. A full claim says the queue
// may hold more, so the next claim waits a little for the burst to end; a
// claim that came back short or empty says it does not, and the next one
// (a lone item's pickup) never waits. Waiting at most as long as the last
// claim took spends no more than the round trip it may save.
func gatherBound(took time.Duration) time.Duration {
	return max(min(took, maxGather), 0)
}

// handle runs the handler on j's claim, which j heartbeats meanwhile, calls
// free once the handler has returned, then settles the claim unless it was
// lost, cancelled or the Broker closed. Settling uses a context that is not
// cancelled with the handler's, so that an item whose handler finished
// during shutdown is not left to expire.
func (r *run) handle(j *job, free func()) {
	var (
		err      error
		value    any // the handler's panic
		panicked bool
	)
	if r.start(j) {
		ctx, traced := r.b.traceHandler(j)
		report := func(name string, v any, stack []byte) {
			value = v
			r.b.reportPanic(name, v, stack)
		}
		if panicked = callback.Call("work handler", report, func() { err = r.w.Handler(ctx, j.claim) }); panicked {
			err = fmt.Errorf("panic: %v", value)
		}
		traced(err)
	}
	stopped, timedOut := r.finish(j)
	free()
	if stopped {
		return // lost, cancelled, or the Broker closed
	}
	b := r.b
	bg := context.WithoutCancel(j.ctx)
	c := j.claim
	var (
		snooze  *SnoozeError
		discard *DiscardError
		out     Outcome // for the error hook; 0 when the claim was stale
	)
	switch {
	case err == nil:
		_ = b.Complete(bg, c) // a stale claim was taken back; nothing to do
		return
	case errors.As(err, &snooze):
		_ = b.Snooze(bg, c, snooze.After)
		return
	case errors.As(err, &discard):
		if b.bury(bg, c, err.Error()) == nil {
			out = DeadLettered
		}
	case errors.Is(context.Cause(j.ctx), ErrStopped):
		// Stopped by the stop timeout: hand the item back at once.
		_ = b.Snooze(bg, c, 0)
		return
	case timedOut:
		out, _ = b.Fail(bg, c, "timed out after "+j.timeout.String()+": "+err.Error(), r.w.BaseDelay, r.w.MaxDelay)
	default:
		out, _ = b.Fail(bg, c, err.Error(), r.w.BaseDelay, r.w.MaxDelay)
	}
	b.hookFailure(bg, HandlerFailure{Claim: c, Attempt: c.Attempt, Err: err, Panic: value, Panicked: panicked, Outcome: out})
}

// call runs a user callback under the module's panic policy: a panic is
// recovered and reported to the Broker's panic handler, and call reports
// whether there was one.
func (b *Broker) call(name string, f func()) (panicked bool) {
	return callback.Call(name, b.reportPanic, f)
}

func (b *Broker) reportPanic(name string, value any, stack []byte) {
	b.opts.report(name, value, stack)
}
