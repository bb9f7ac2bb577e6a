package claim

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"
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
)

// Handler processes one claimed item. Returning nil completes the item; an
// error or a panic fails it. ctx is cancelled when the handler should stop:
// when the Worker stops (ctx's parent is done), when the Broker closes
// (context.Cause matches lease.ErrClosed), when a heartbeat finds the
// service closed (that error), when the claim is lost because its lease
// expired or was revoked (context.Cause matches ErrClaimLost and
// lease.ErrStaleUse), and, with the same kind of cause, when no heartbeat
// could confirm the claim by the Worker's SafetyMargin before its last
// confirmed expiry. A lost claim's item may be handed out again at once, so
// a handler must stop touching it then; the Broker cancels ctx before the
// item can be claimed again. Work calls the handler from its Concurrency
// workers at once, so it must be safe for concurrent use.
type Handler func(ctx context.Context, c Claim) error

// Worker says how Broker.Work runs a handler on a queue. Zero fields take
// the defaults. A Worker is a plain value, safe to share.
type Worker struct {
	Queue   string  // required
	Handler Handler // required
	// Owner prefixes the owner names of the workers: worker i (from 0)
	// claims as Owner + "-" + i. Default "worker".
	Owner       string
	Concurrency int // number of workers; default 1
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
	case w.LeaseDuration < 0:
		return w, invalid(op, "lease_duration", w.LeaseDuration.String()+" is negative")
	case w.SafetyMargin < 0:
		return w, invalid(op, "safety_margin", w.SafetyMargin.String()+" is negative")
	case w.BaseDelay < 0:
		return w, invalid(op, "base_delay", w.BaseDelay.String()+" is negative")
	case w.MaxDelay < 0:
		return w, invalid(op, "max_delay", w.MaxDelay.String()+" is negative")
	}
	w.Owner = cmp.Or(w.Owner, "worker")
	w.Concurrency = cmp.Or(w.Concurrency, 1)
	w.LeaseDuration = cmp.Or(w.LeaseDuration, DefaultLeaseDuration)
	w.SafetyMargin = cmp.Or(w.SafetyMargin, renewal.DefaultMargin(w.LeaseDuration))
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

// Work runs w.Handler on w.Queue with w.Concurrency workers until ctx is
// done, then waits for the handlers under way to return and settles their
// items. Each worker claims one item at a time, waits (without polling)
// when none is visible, heartbeats on the service's clock every
// LeaseDuration/3 while the handler runs (stopping the handler at
// SafetyMargin before the claim's last confirmed expiry if no heartbeat
// confirmed it since), completes the item when the
// handler returns nil and fails it when it returns an error or panics (the
// reason is the error's text, or "panic: " and the value; the panic is also
// reported to the Broker's panic handler). An item whose handler returns
// after ctx is done is still completed or failed. An item whose claim was
// lost while its handler ran is not: it is back in the queue already.
//
// Work returns nil whenever it stops because ctx is done, whether ctx was
// done before Work was called or while it ran. It returns an error for a
// nil ctx or an invalid Worker (matching lease.ErrInvalidArgument and
// naming the field, whatever the state of ctx) and, once its workers have
// stopped, the error that stopped them if it was not ctx's: a closed Broker
// (noticed at once) or a closed service (noticed by idle workers when the
// service's Done channel closes, by a running handler at its next
// heartbeat, and by any worker at its next claim).
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for i := range w.Concurrency {
		owner := w.Owner + "-" + strconv.Itoa(i)
		wg.Go(func() {
			if err := b.workLoop(ctx, w, owner); err != nil {
				once.Do(func() { firstErr = err })
				cancel()
			}
		})
	}
	wg.Wait()
	return firstErr
}

// workLoop is one worker: claim, handle, settle, until ctx is done.
func (b *Broker) workLoop(ctx context.Context, w Worker, owner string) error {
	var j *job // ready for the next claim
	for {
		if j == nil {
			j = newJob(ctx, w)
		}
		claims, wait, err := b.claim(ctx, w.Queue, owner, 1, w.LeaseDuration, j)
		switch {
		case len(claims) > 0:
			// Handled even if ctx is done by now: the handler sees that,
			// and the item is settled rather than left to expire.
			b.handle(j, w, claims[0])
			j = nil
		case wait.qs != nil:
			// Counted as a waiter, which keeps the queue: end the wait
			// however it ends, ctx done since the claim included.
			var stop error
			select {
			case <-wait.wake:
			case <-ctx.Done():
			case <-b.svc.Done():
				stop = &lease.Error{Code: lease.CodeClosed, Op: "claim.work", Detail: "service closed"}
			}
			b.stopWaiting(wait.qs)
			if ctx.Err() != nil {
				return nil
			}
			if stop != nil {
				return stop
			}
		case ctx.Err() != nil:
			return nil
		default:
			return err
		}
	}
}

// handle runs the handler on c, which the job heartbeats meanwhile, then
// completes or fails c unless the claim was lost. Settling uses a context
// that is not cancelled with the handler's, so that an item whose handler
// finished during shutdown is not left to expire.
func (b *Broker) handle(j *job, w Worker, c Claim) {
	var err error
	// Lost already, or the Broker closed since the claim was made: the
	// item is not this worker's any more, so the handler does not run.
	if !b.endedJob(j) {
		var value any
		report := func(name string, v any, stack []byte) {
			value = v
			b.reportPanic(name, v, stack)
		}
		if callback.Call("work handler", report, func() { err = w.Handler(j.ctx, c) }) {
			err = fmt.Errorf("panic: %v", value)
		}
	}
	if b.finishJob(j) {
		return // the claim was lost, or the Broker closed
	}
	bg := context.WithoutCancel(j.ctx)
	if err == nil {
		_ = b.Complete(bg, c) // a stale claim was taken back; nothing to do
		return
	}
	_, _ = b.Fail(bg, c, err.Error(), w.BaseDelay, w.MaxDelay)
}

// call runs a user callback under the module's panic policy: a panic is
// recovered and reported to the Broker's panic handler, and call reports
// whether there was one.
func (b *Broker) call(name string, f func()) (panicked bool) {
	return callback.Call(name, b.reportPanic, f)
}

func (b *Broker) reportPanic(name string, value any, stack []byte) {
	b.opts.onPanic(&lease.PanicError{Callback: name, Value: value, Stack: stack})
}
