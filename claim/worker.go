package claim

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold/lease"
)

// Defaults of a Worker's zero fields.
const (
	DefaultLeaseDuration = 30 * time.Second
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = time.Hour
)

// Handler processes one claimed item. Returning nil completes the item; an
// error or a panic fails it. ctx is cancelled when the Worker stops or the
// claim is lost (context.Cause then matches lease.ErrStaleUse).
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
	// every LeaseDuration/3 while the handler runs. Default
	// DefaultLeaseDuration.
	LeaseDuration time.Duration
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
	case w.BaseDelay < 0:
		return w, invalid(op, "base_delay", w.BaseDelay.String()+" is negative")
	case w.MaxDelay < 0:
		return w, invalid(op, "max_delay", w.MaxDelay.String()+" is negative")
	}
	w.Owner = cmp.Or(w.Owner, "worker")
	w.Concurrency = cmp.Or(w.Concurrency, 1)
	w.LeaseDuration = cmp.Or(w.LeaseDuration, DefaultLeaseDuration)
	w.BaseDelay = cmp.Or(w.BaseDelay, DefaultBaseDelay)
	w.MaxDelay = cmp.Or(w.MaxDelay, max(DefaultMaxDelay, w.BaseDelay))
	if w.MaxDelay < w.BaseDelay {
		return w, invalid(op, "max_delay", w.MaxDelay.String()+" is less than base_delay "+w.BaseDelay.String())
	}
	return w, nil
}

// Work runs w.Handler on w.Queue with w.Concurrency workers until ctx is
// done, then waits for the handlers under way to return and settles their
// items before returning nil. Each worker claims one item at a time, waits
// (without polling) when none is visible, heartbeats on the service's clock
// every LeaseDuration/3 while the handler runs, completes the item when the
// handler returns nil and fails it when it returns an error or panics (the
// reason is the error's text or "panic: " and the value). An item whose
// handler returns after ctx is done is still completed or failed. Work returns an error for an invalid
// Worker and, once its workers have stopped, the error that stopped them if
// it was not ctx's: a closed Broker (noticed at once) or a closed service
// (noticed at the next claim; close the Broker first).
func (b *Broker) Work(ctx context.Context, w Worker) error {
	if err := checkContext(ctx, "work"); err != nil {
		return err
	}
	w, err := w.withDefaults()
	if err != nil {
		return err
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
	for {
		claims, wait, err := b.claim(ctx, w.Queue, owner, 1, w.LeaseDuration, true)
		switch {
		case len(claims) > 0:
			// Handled even if ctx is done by now: the handler sees that,
			// and the item is settled rather than left to expire.
			b.handle(ctx, w, claims[0])
		case wait.qs != nil:
			// Counted as a waiter, which keeps the queue: end the wait
			// however it ends, ctx done since the claim included.
			select {
			case <-wait.wake:
			case <-ctx.Done():
			}
			b.stopWaiting(wait.qs)
			if ctx.Err() != nil {
				return nil
			}
		case ctx.Err() != nil:
			return nil
		default:
			return err
		}
	}
}

// handle runs the handler on c with heartbeats, then completes or fails c.
// Settling uses a context that is not cancelled with ctx, so that an item
// whose handler finished during shutdown is not left to expire.
func (b *Broker) handle(ctx context.Context, w Worker, c Claim) {
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	bg := context.WithoutCancel(ctx)
	hb := &heartbeat{b: b, ctx: bg, cancel: cancel, claim: c, d: w.LeaseDuration,
		every: max(w.LeaseDuration/3, 1)}
	hb.start()
	err := runHandler(hctx, w.Handler, c)
	if hb.stop() {
		return // the claim was lost: its item is back in the queue already
	}
	if err == nil {
		_ = b.Complete(bg, c) // a stale claim was taken back; nothing to do
		return
	}
	_, _ = b.Fail(bg, c, err.Error(), w.BaseDelay, w.MaxDelay)
}

// runHandler calls h, turning a panic into an error.
func runHandler(ctx context.Context, h Handler, c Claim) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h(ctx, c)
}

// heartbeat extends a claim every interval on the Broker's clock while its
// handler runs. Each beat arms the next, so no goroutine waits in between.
type heartbeat struct {
	b      *Broker
	ctx    context.Context
	cancel context.CancelCauseFunc
	d      time.Duration
	every  time.Duration

	wg      sync.WaitGroup // beats armed or running
	mu      sync.Mutex
	claim   Claim
	stopped bool
	lost    bool // a heartbeat failed
	timer   lease.Timer
}

func (h *heartbeat) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.arm()
}

// arm schedules the next beat; h.mu is held.
func (h *heartbeat) arm() {
	h.wg.Add(1)
	h.timer = h.b.clock.AfterFunc(h.every, h.beat)
}

func (h *heartbeat) beat() {
	defer h.wg.Done()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	c, err := h.b.Heartbeat(h.ctx, h.claim, h.d)
	if err != nil {
		h.lost = true
		h.cancel(err) // the claim is lost (or the Broker closed): stop the handler
		return
	}
	h.claim = c
	h.arm()
}

// stop cancels the pending beat, waits for one under way and reports
// whether a heartbeat failed.
func (h *heartbeat) stop() (lost bool) {
	h.mu.Lock()
	h.stopped = true
	if !h.lost && h.timer.Stop() {
		h.wg.Done()
	}
	lost = h.lost
	h.mu.Unlock()
	h.wg.Wait()
	return lost
}
