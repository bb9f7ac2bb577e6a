package sqlclaim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimstore"
)

// Dialect is what a database supplies to an Engine: each step of a flow
// as one round trip (or one write of a shared transaction) on that
// database. The engine has checked the input and the store's state
// before calling any of them. The engine passes every error of a step
// through Fail, but for the caller's context's own error. A Dialect must
// be safe for concurrent use.
type Dialect interface {
	// Enqueue stores items (at least one) in one transaction and sets
	// out[i] to what items[i] became.
	Enqueue(ctx context.Context, items []claim.NewItem, out []claim.Item) error
	// Claim claims items of req.Queue as claim.Store's Claim says.
	Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error)
	// Extend extends the claim r and returns its new expiry, or the zero
	// time if r is not live.
	Extend(ctx context.Context, r claim.Ref, d time.Duration) (time.Time, error)
	// Settle settles st.Ref and reports whether it was live.
	Settle(ctx context.Context, st claim.Settlement) (bool, error)
	// Cancel cancels the item id of queue and says what it found.
	Cancel(ctx context.Context, queue string, id claim.ItemID) (Cancelled, error)
	// Change applies ch to the item id of queue and returns the item as
	// it became, with false when the item is not one ch applies to.
	Change(ctx context.Context, ch Change, queue string, id claim.ItemID) (claim.Item, bool, error)
	// DeleteDead deletes the dead item id of queue and reports whether
	// there was one.
	DeleteDead(ctx context.Context, queue string, id claim.ItemID) (bool, error)
	// Lookup returns the item id, with false when there is none.
	Lookup(ctx context.Context, id claim.ItemID) (claim.Item, bool, error)
	// List returns a page of items as claim.Store's List says.
	List(ctx context.Context, q claim.Query) ([]claim.Item, error)
	// Counts returns the counts of queue's items by state.
	Counts(ctx context.Context, queue string) (claim.Counts, error)
	// Pause pauses queue (paused true) or resumes it.
	Pause(ctx context.Context, queue string, paused bool) error
	// Queues returns a page of queues as claim.QueueLister says.
	Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error)
	// Clean deletes up to limit rows whose retention passed and returns
	// how many.
	Clean(ctx context.Context, limit int) (int, error)
	// Tracking tells the dialect that the engine tracks Lost functions of
	// claims, so that it may start listening for the Cancel calls of
	// other processes.
	Tracking()
	// Closed is the error of a call of op on a closed store.
	Closed(op string) error
	// Fail is the error a call of op returns for err, an error of one of
	// the dialect's steps: err itself when it is the store's own already.
	Fail(op string, err error) error
}

// Change is a change of one item that returns it.
type Change int

const (
	// RequeueDead makes a dead item visible with no attempts used.
	RequeueDead Change = iota + 1
	// RetryNow makes a waiting item visible now.
	RetryNow
)

// Cancelled is what Dialect.Cancel found: whether the item was in the
// queue, and whether it was under a live claim, with that claim's token.
type Cancelled struct {
	Found, Live bool
	Token       uint64
}

// Config is the part of a store an Engine needs besides its Dialect.
type Config struct {
	// Checks checks every call's input, naming the store's package.
	Checks claimstore.Checker
	// Closed is the store's closed flag: the engine reads it at the start
	// of every call and sets it in Close.
	Closed *atomic.Bool
	// Now is the clock a claim's expiry is on, and Margin how long after
	// its expiry (as Now tells it) a claim is forgotten by the Lost
	// registry: a margin covers a database clock ahead of Now.
	Now    func() time.Time
	Margin time.Duration
}

// Engine runs the flows of claim.Store over a Dialect: the checks every
// call starts with, the store's closed state, the mapping of what the
// dialect found to claim's errors, and the Lost functions of the live
// claims this store made. It is safe for concurrent use by multiple
// goroutines; no Lost function runs after Close returns.
type Engine struct {
	d      Dialect
	checks claimstore.Checker
	closed *atomic.Bool
	now    func() time.Time
	margin time.Duration

	mu sync.Mutex // guards lost and lostPrune; closed is set under it
	// lost holds the Lost functions of this store's live claims that have
	// one, with their expiry, so that Cancel can call them. Entries leave
	// when the claim is settled, found stale, or cancelled; expired ones
	// are pruned as the map grows past twice the size it had after the
	// last pruning.
	lost      map[claim.Ref]lostClaim
	lostPrune int
	// tracked is len(lost), set under mu: a store whose callers set no
	// Lost function settles and extends without taking mu.
	tracked   atomic.Int64
	callbacks sync.WaitGroup // Lost functions running
}

type lostClaim struct {
	fn      func(claim.Ref, error)
	expires time.Time
	// settling counts this store's Settle calls on the claim under way:
	// one of them may have removed the row, so that its absence is not
	// taken for a Cancel.
	settling int
}

// New returns an Engine running its flows over d.
func New(d Dialect, cfg Config) *Engine {
	return &Engine{d: d, checks: cfg.Checks, closed: cfg.Closed, now: cfg.Now, margin: cfg.Margin,
		lost: map[claim.Ref]lostClaim{}, lostPrune: 64}
}

// Begin checks what every call of op needs: a context that is not nil or
// done, and an open store.
func (e *Engine) Begin(ctx context.Context, op string) error {
	if ctx == nil {
		return e.checks.Invalid("claims."+op, "ctx", "must not be nil")
	}
	if e.closed.Load() {
		return e.d.Closed(op)
	}
	return ctx.Err()
}

// Stale is the error of a call of op on the claim r that is not live.
func (e *Engine) Stale(op string, r claim.Ref) *lease.Error {
	return e.checks.StaleClaim("claims."+op, r)
}

// Close marks the store closed, runs stop (which ends the store's
// goroutines), and waits for the Lost functions running.
func (e *Engine) Close(stop func()) {
	e.mu.Lock()
	e.closed.Store(true)
	e.mu.Unlock()
	stop()
	e.callbacks.Wait()
}

// call runs the flow of one call of op: the checks every call starts with
// (Begin, then check, given the op's name as errors give it), then step,
// whose error goes through fail.
func call[T any](e *Engine, ctx context.Context, op string, check func(op string) error, step func() (T, error)) (T, error) {
	var zero T
	if err := e.Begin(ctx, op); err != nil {
		return zero, err
	}
	if err := check("claims." + op); err != nil {
		return zero, err
	}
	v, err := step()
	if err != nil {
		return zero, e.fail(ctx, op, err)
	}
	return v, nil
}

// fail is the error of a call of op for err, an error of the dialect's:
// the caller's context's own error as it is, any other through the
// dialect's Fail.
func (e *Engine) fail(ctx context.Context, op string, err error) error {
	if err == ctx.Err() {
		return err
	}
	return e.d.Fail(op, err)
}

// Enqueue is claim.Store's Enqueue over the dialect.
func (e *Engine) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	return e.EnqueueWith(ctx, items, e.d.Enqueue)
}

// EnqueueWith is Enqueue storing the items with store rather than the
// dialect's Enqueue: in a caller's transaction, say.
func (e *Engine) EnqueueWith(ctx context.Context, items []claim.NewItem, store func(ctx context.Context, items []claim.NewItem, out []claim.Item) error) ([]claim.Item, error) {
	check := func(op string) error { return e.checks.NewItems(op, items) }
	return call(e, ctx, "enqueue", check, func() ([]claim.Item, error) {
		out := make([]claim.Item, len(items))
		if len(items) == 0 {
			return out, nil
		}
		return out, store(ctx, items, out)
	})
}

// Claim is claim.Store's Claim: the dialect's, and the Lost function
// tracked.
func (e *Engine) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	check := func(op string) error { return e.checks.ClaimRequest(op, req) }
	out, err := call(e, ctx, "claim", check, func() ([]claim.Claim, error) { return e.d.Claim(ctx, req) })
	if err == nil && req.Lost != nil && len(out) > 0 {
		e.track(out, req.Lost)
	}
	return out, err
}

// Extend is claim.Store's Extend.
func (e *Engine) Extend(ctx context.Context, r claim.Ref, d time.Duration) (time.Time, error) {
	const op = "extend"
	check := func(op string) error { return e.checks.Extend(op, r, d) }
	expires, err := call(e, ctx, op, check, func() (time.Time, error) { return e.d.Extend(ctx, r, d) })
	switch {
	case err != nil:
		return time.Time{}, err
	case expires.IsZero():
		e.untrack(r)
		return time.Time{}, e.Stale(op, r)
	}
	e.retrack(r, expires)
	return expires, nil
}

// Settle is claim.Store's Settle.
func (e *Engine) Settle(ctx context.Context, st claim.Settlement) error {
	const op = "settle"
	check := func(op string) error { return e.checks.Settlement(op, st) }
	settled, err := call(e, ctx, op, check, func() (bool, error) {
		e.settling(st.Ref, 1)
		defer e.settling(st.Ref, -1)
		return e.d.Settle(ctx, st)
	})
	if err != nil {
		return err
	}
	e.untrack(st.Ref)
	if !settled {
		return e.Stale(op, st.Ref)
	}
	return nil
}

// Cancel is claim.Store's Cancel: the claim it ends, if this store made
// it, has its Lost function called.
func (e *Engine) Cancel(ctx context.Context, queue string, id claim.ItemID) error {
	const op = "cancel"
	check := func(op string) error { return e.checks.Item(op, queue, id) }
	c, err := call(e, ctx, op, check, func() (Cancelled, error) { return e.d.Cancel(ctx, queue, id) })
	switch {
	case err != nil:
		return err
	case !c.Found:
		return &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	case c.Live:
		e.Lose(claim.Ref{Item: id, Token: c.Token}, op)
	}
	return nil
}

// RequeueDead is claim.Store's RequeueDead.
func (e *Engine) RequeueDead(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return e.change(ctx, "requeue_dead", RequeueDead, queue, id)
}

// RetryNow is claim.Retrier's RetryNow.
func (e *Engine) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return e.change(ctx, "retry_now", RetryNow, queue, id)
}

// found is an item a dialect's step looked for, and whether it was there.
type found struct {
	it claim.Item
	ok bool
}

func (e *Engine) change(ctx context.Context, op string, ch Change, queue string, id claim.ItemID) (claim.Item, error) {
	check := func(op string) error { return e.checks.Item(op, queue, id) }
	f, err := call(e, ctx, op, check, func() (found, error) {
		it, ok, err := e.d.Change(ctx, ch, queue, id)
		return found{it, ok}, err
	})
	if err == nil && !f.ok {
		err = &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return f.it, err
}

// DeleteDead is claim.Store's DeleteDead.
func (e *Engine) DeleteDead(ctx context.Context, queue string, id claim.ItemID) error {
	const op = "delete_dead"
	check := func(op string) error { return e.checks.Item(op, queue, id) }
	ok, err := call(e, ctx, op, check, func() (bool, error) { return e.d.DeleteDead(ctx, queue, id) })
	if err == nil && !ok {
		err = &claim.NotFoundError{Op: op, Queue: queue, Item: id}
	}
	return err
}

// Lookup is claim.Store's Lookup.
func (e *Engine) Lookup(ctx context.Context, id claim.ItemID) (claim.Item, error) {
	const op = "lookup"
	check := func(op string) error { return e.checks.ID(op, id) }
	f, err := call(e, ctx, op, check, func() (found, error) {
		it, ok, err := e.d.Lookup(ctx, id)
		return found{it, ok}, err
	})
	if err == nil && !f.ok {
		err = &claim.NotFoundError{Op: op, Item: id}
	}
	return f.it, err
}

// List is claim.Store's List.
func (e *Engine) List(ctx context.Context, q claim.Query) ([]claim.Item, error) {
	check := func(op string) error { return e.checks.Query(op, q) }
	return call(e, ctx, "list", check, func() ([]claim.Item, error) { return e.d.List(ctx, q) })
}

// Counts is claim.Store's Counts.
func (e *Engine) Counts(ctx context.Context, queue string) (claim.Counts, error) {
	check := func(op string) error { return e.checks.Name(op, "queue", queue) }
	return call(e, ctx, "counts", check, func() (claim.Counts, error) { return e.d.Counts(ctx, queue) })
}

// Pause is claim.Pauser's Pause.
func (e *Engine) Pause(ctx context.Context, queue string) error {
	return e.pause(ctx, "pause", queue, true)
}

// Resume is claim.Pauser's Resume.
func (e *Engine) Resume(ctx context.Context, queue string) error {
	return e.pause(ctx, "resume", queue, false)
}

func (e *Engine) pause(ctx context.Context, op, queue string, paused bool) error {
	check := func(op string) error { return e.checks.Name(op, "queue", queue) }
	_, err := call(e, ctx, op, check, func() (struct{}, error) { return struct{}{}, e.d.Pause(ctx, queue, paused) })
	return err
}

// Queues is claim.QueueLister's Queues.
func (e *Engine) Queues(ctx context.Context, q claim.QueueQuery) ([]claim.QueueInfo, error) {
	check := func(op string) error { return e.checks.QueueQuery(op, q) }
	return call(e, ctx, "queues", check, func() ([]claim.QueueInfo, error) { return e.d.Queues(ctx, q) })
}

// Clean is claim.Cleaner's Clean.
func (e *Engine) Clean(ctx context.Context, limit int) (int, error) {
	check := func(op string) error { return e.checks.Limit(op, limit) }
	return call(e, ctx, "clean", check, func() (int, error) { return e.d.Clean(ctx, limit) })
}

// track records the Lost function of claims.
func (e *Engine) track(claims []claim.Claim, fn func(claim.Ref, error)) {
	e.mu.Lock()
	if e.closed.Load() {
		e.mu.Unlock()
		return
	}
	for _, c := range claims {
		e.lost[c.Ref] = lostClaim{fn: fn, expires: c.ExpiresAt}
	}
	if len(e.lost) >= 2*e.lostPrune {
		cut := e.now().Add(-e.margin)
		for r, l := range e.lost {
			if !l.expires.After(cut) {
				delete(e.lost, r)
			}
		}
		e.lostPrune = max(64, len(e.lost))
	}
	e.tracked.Store(int64(len(e.lost)))
	e.mu.Unlock()
	e.d.Tracking()
}

// untrack forgets the Lost function of r, if any.
func (e *Engine) untrack(r claim.Ref) {
	if e.tracked.Load() == 0 {
		return
	}
	e.mu.Lock()
	delete(e.lost, r)
	e.tracked.Store(int64(len(e.lost)))
	e.mu.Unlock()
}

// retrack updates the expiry of a tracked claim.
func (e *Engine) retrack(r claim.Ref, expires time.Time) {
	if e.tracked.Load() == 0 {
		return
	}
	e.mu.Lock()
	if l, ok := e.lost[r]; ok {
		l.expires = expires
		e.lost[r] = l
	}
	e.mu.Unlock()
}

// settling counts a Settle of the tracked claim r starting (1) or ending
// (-1); a claim that is not tracked is left alone.
func (e *Engine) settling(r claim.Ref, d int) {
	if e.tracked.Load() == 0 {
		return
	}
	e.mu.Lock()
	if l, ok := e.lost[r]; ok {
		l.settling += d
		e.lost[r] = l
	}
	e.mu.Unlock()
}

// Tracked is a claim whose Lost function the engine holds.
type Tracked struct {
	Ref     claim.Ref
	Expires time.Time
}

// Tracked returns the claims whose Lost functions the engine holds.
func (e *Engine) Tracked() []Tracked {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Tracked, 0, len(e.lost))
	for r, l := range e.lost {
		out = append(out, Tracked{Ref: r, Expires: l.expires})
	}
	return out
}

// LoseRemoved calls the Lost function of r, a claim whose item was found
// removed, unless a Settle of it is under way: that Settle may have
// removed it, says how the claim ended, and its caller needs no Lost.
func (e *Engine) LoseRemoved(r claim.Ref, op string) {
	e.mu.Lock()
	settling := e.lost[r].settling > 0
	e.mu.Unlock()
	if !settling {
		e.Lose(r, op)
	}
}

// Lose calls, once, the Lost function of r, a claim ended by Cancel; a
// claim not tracked, or a closed store, calls nothing.
func (e *Engine) Lose(r claim.Ref, op string) {
	e.mu.Lock()
	l, ok := e.lost[r]
	if !ok || e.closed.Load() {
		e.mu.Unlock()
		return
	}
	delete(e.lost, r)
	e.tracked.Store(int64(len(e.lost)))
	e.callbacks.Add(1)
	e.mu.Unlock()
	defer e.callbacks.Done()
	// The cause matches claim.ErrCancelled and lease.ErrStaleUse, and is a
	// *lease.Error for errors.As.
	l.fn(r, fmt.Errorf("%w: %w", e.Stale(op, r), claim.ErrCancelled))
}

// Store is what a store running on the engine is: a claimstore.Store with
// the capabilities whose flows the engine runs.
type Store interface {
	claimstore.Store
	claimstore.Cleaner
	claimstore.Pauser
	claimstore.QueueLister
	claimstore.Retrier
}
