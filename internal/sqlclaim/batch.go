package sqlclaim

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease/claim"
)

// Call is one caller's request in a Batcher, and its answer once the
// batch that carried it has run.
type Call[Req, Res any] struct {
	// Op names the call in the error of a closed batcher.
	Op string
	// Item is the item the call acts on, 0 for none: a batch names each
	// item at most once.
	Item claim.ItemID
	// Group and Weight decide which calls share a batch: calls of one
	// group, whose weights add up to at most the batcher's Max (a heavier
	// call goes alone). Weight 0 counts as 1.
	Group  string
	Weight int
	// ToEnd makes a caller whose context ends after its call was taken
	// into a batch wait for the batch's answer, rather than return at
	// once with an unknown outcome.
	ToEnd bool
	// Req is the request; Res and Err the answer, set by the batch's run.
	Req Req
	Res Res
	Err error

	caller context.Context
	done   chan struct{}
	// byCaller: the batch of this call alone runs on its caller's
	// goroutine (BatcherConfig.CallerRuns).
	byCaller bool
}

// Caller returns the caller's context.
func (c *Call[Req, Res]) Caller() context.Context { return c.caller }

// ByCaller reports whether the call's batch, of this call alone, runs on
// its caller's goroutine (BatcherConfig.CallerRuns): the caller waits for
// its end whatever becomes of its context, so the batch must see to it
// that it ends soon once the caller's context ends, where that is right
// (see CallerBound).
func (c *Call[Req, Res]) ByCaller() bool { return c.byCaller }

// CallerBound returns the context for the statements of batch, which runs
// under ctx (the batcher's): ctx itself, or for a batch that its caller
// runs (Call.ByCaller) a context with the caller's values that ends when
// either ctx or the caller's context does. Call stop once the statements
// are done.
func CallerBound[Req, Res any](ctx context.Context, batch []*Call[Req, Res]) (bound context.Context, stop func()) {
	if len(batch) != 1 || !batch[0].byCaller {
		return ctx, func() {}
	}
	return eitherEnds(ctx, batch[0].caller)
}

// eitherEnds returns a context with b's values that ends when a or b
// does, and the function that releases it.
func eitherEnds(a, b context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(b)
	stopAfter := context.AfterFunc(a, cancel)
	return ctx, func() {
		stopAfter()
		cancel()
	}
}

// CallerErr returns the error of the caller's context once the caller gave
// up waiting, nil before. A batch may skip such a call: its caller reads
// nothing of it. A batch never runs under the caller's context, but for
// the statements of a batch its caller runs (see CallerBound).
func (c *Call[Req, Res]) CallerErr() error { return c.caller.Err() }

// BatcherConfig configures a Batcher.
type BatcherConfig struct {
	// Max is the largest total weight of a batch (at least 1).
	Max int
	// Flushers is how many batches may be under way at once (at least 1).
	Flushers int
	// CallerRuns lets a call that finds the batcher idle (started and
	// open, no call pending, no batch under way, and with Gather no caller
	// late lately) run its batch of one on the caller's goroutine: it
	// spares the hand-off to a flusher and back. The batch runs under the
	// batcher's context as any batch; the caller's is given by
	// Call.Caller, and Call.ByCaller says the batch is such a one. It
	// counts as one of the Flushers batches that may be under way: while
	// it runs, the flushers take at most Flushers-1 batches (none with one
	// flusher), and they end only after it, so nothing runs once they are
	// waited for. Its caller waits for the batch's end even when its
	// context ends meanwhile: the batch must see to it that it ends soon
	// (see CallerBound). A caller whose context has ended before is
	// answered with its error; a batch that fails because the batcher's
	// context ended, with the Closed error.
	CallerRuns bool
	// Gather lets the goroutines that are ready run before a woken
	// flusher takes its batch, so that calls sent at one moment (a
	// worker's settlement and its next claim) share it. A call that
	// arrives while a batch is under way says that its caller was a
	// moment late: for a while after, a flusher that finds one call alone
	// waits up to GatherWait for a second before it takes the batch (and
	// stops as soon as one comes). A lone caller, whose next call always
	// comes after its last batch ended, never waits.
	Gather bool
	// GatherWait is the longest wait for a second call (Gather); 0 or
	// less is DefaultGatherWait.
	GatherWait time.Duration
	// Closed is the error of a call on a closed batcher.
	Closed func(op string) error
}

// Batcher is group commit: it coalesces the calls of many goroutines into
// one batch per round trip. A flusher takes whatever is pending as one
// batch and runs it, under the batcher's own context (as does a caller
// that runs its own batch, see CallerRuns); calls that arrive meanwhile
// wait for the next batch. A caller waits for its own batch, so an answer
// without an error means the batch committed. A caller whose context ends
// stops waiting: a call not yet taken is withdrawn and changes nothing;
// one already taken is left to its batch (see Call.ToEnd).
//
// pending holds one entry per waiting caller, so it is bounded by the
// number of calling goroutines. A Batcher is safe for concurrent use.
type Batcher[Req, Res any] struct {
	cfg  BatcherConfig
	kick chan struct{} // wakes a flusher; capacity 1
	// run sends a batch and sets each call's Res or Err; an error it
	// returns is every call's.
	run func(ctx context.Context, batch []*Call[Req, Res]) error

	batches atomic.Int64
	// callerBatches counts the batches run by their callers (CallerRuns).
	callerBatches atomic.Int64
	// late is how many more times a lone call waits for a second one
	// (Gather): set when a call arrives while a batch is under way, less
	// one at each wait that ends without a second call.
	late atomic.Int32

	mu      sync.Mutex
	pending []*Call[Req, Res]
	running int // batches under way
	closed  bool
	// ctx is the flushers' context, set by Start; byCaller counts the
	// batches run by their callers (CallerRuns), added to under mu while
	// the batcher is open, for the flushers to wait for as they end.
	ctx      context.Context
	byCaller sync.WaitGroup
}

// NewBatcher returns a Batcher that sends its batches with run. Start
// starts its flushers.
func NewBatcher[Req, Res any](cfg BatcherConfig, run func(ctx context.Context, batch []*Call[Req, Res]) error) *Batcher[Req, Res] {
	cfg.Max, cfg.Flushers = max(cfg.Max, 1), max(cfg.Flushers, 1)
	if cfg.GatherWait <= 0 {
		cfg.GatherWait = DefaultGatherWait
	}
	return &Batcher[Req, Res]{cfg: cfg, kick: make(chan struct{}, 1), run: run}
}

// Start starts the batcher's flushers, counted in wg. They run the
// batches under ctx, and when ctx ends they fail every call still pending
// with the Closed error, as they do later calls.
func (b *Batcher[Req, Res]) Start(ctx context.Context, wg *sync.WaitGroup) {
	b.mu.Lock()
	b.ctx = ctx
	b.mu.Unlock()
	for range b.cfg.Flushers {
		wg.Go(func() { b.flush(ctx) })
	}
}

// Batches returns how many batches the batcher has sent.
func (b *Batcher[Req, Res]) Batches() int64 { return b.batches.Load() }

// CallerBatches returns how many of the batches their callers ran
// (CallerRuns).
func (b *Batcher[Req, Res]) CallerBatches() int64 { return b.callerBatches.Load() }

// Pending returns how many calls wait for a batch.
func (b *Batcher[Req, Res]) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// Close makes later calls fail with the Closed error; the flushers fail
// the pending ones once their context ends.
func (b *Batcher[Req, Res]) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// Do queues c and waits for its batch's answer, or for ctx.
func (b *Batcher[Req, Res]) Do(ctx context.Context, c *Call[Req, Res]) (Res, error) {
	var zero Res
	c.caller, c.done = ctx, make(chan struct{})
	c.Weight = max(c.Weight, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return zero, b.cfg.Closed(c.Op)
	}
	if b.cfg.CallerRuns && b.ctx != nil && b.running == 0 && len(b.pending) == 0 && b.late.Load() <= 0 {
		if err := ctx.Err(); err != nil {
			b.mu.Unlock()
			return zero, err
		}
		return b.runByCaller(c)
	}
	b.pending = append(b.pending, c)
	if b.cfg.Gather && b.running > 0 {
		b.late.Store(gatherRounds)
	}
	b.mu.Unlock()
	b.wake()
	select {
	case <-c.done:
		return c.Res, c.Err
	case <-ctx.Done():
	}
	b.mu.Lock()
	if i := slices.Index(b.pending, c); i >= 0 {
		b.pending = slices.Delete(b.pending, i, i+1)
		b.mu.Unlock()
		return zero, ctx.Err()
	}
	b.mu.Unlock()
	if !c.ToEnd {
		return zero, ctx.Err()
	}
	<-c.done
	return c.Res, c.Err
}

// runByCaller runs c's batch, of c alone, on the caller's goroutine under
// the flushers' context (CallerRuns); b.mu is held on entry, the batcher
// open and idle, and released.
func (b *Batcher[Req, Res]) runByCaller(c *Call[Req, Res]) (Res, error) {
	var zero Res
	b.running++
	b.byCaller.Add(1)
	defer b.byCaller.Done()
	ctx := b.ctx
	c.byCaller = true
	b.mu.Unlock()
	b.batches.Add(1)
	b.callerBatches.Add(1)
	err := b.run(ctx, []*Call[Req, Res]{c})
	b.mu.Lock()
	b.running--
	more := len(b.pending) > 0
	b.mu.Unlock()
	if more {
		// Calls that came meanwhile may wait for a flusher that found
		// Flushers batches under way.
		b.wake()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return zero, b.cfg.Closed(c.Op)
	case err != nil:
		return zero, err
	}
	return c.Res, c.Err
}

// DefaultGatherWait is how long a lone call waits for a second one when
// callers have been late (BatcherConfig.Gather): longer than a goroutine
// usually takes from being woken to sending its call, about as long as a
// commit that syncs, the most the wait can save. Under the race detector,
// which slows goroutines down about tenfold, it is ten times as long.
const DefaultGatherWait = 200 * time.Microsecond * raceSlowdown

// gatherRounds is how many waits that end without a second call a late
// arrival allows.
const gatherRounds = 16

// gather lets the goroutines that are ready run, then, while callers have
// been late, waits up to GatherWait for a second call if one is alone.
func (b *Batcher[Req, Res]) gather() {
	runtime.Gosched()
	if b.late.Load() <= 0 || !b.lone() {
		return
	}
	deadline := time.Now().Add(b.cfg.GatherWait)
	for b.lone() {
		if time.Now().After(deadline) {
			b.late.Add(-1)
			return
		}
		runtime.Gosched()
	}
}

// lone reports whether one call is pending and a flusher could take it
// (see take).
func (b *Batcher[Req, Res]) lone() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending) == 1 && b.running < b.cfg.Flushers
}

// wake tells a flusher that calls are pending.
func (b *Batcher[Req, Res]) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// take removes and returns the next batch: pending calls in arrival order
// of the first one's group, up to a total weight of Max, each item once.
// It takes none while Flushers batches are under way, one of them a
// caller's (CallerRuns): that one wakes a flusher as it ends.
func (b *Batcher[Req, Res]) take() []*Call[Req, Res] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 || b.running >= b.cfg.Flushers {
		return nil
	}
	n := min(len(b.pending), b.cfg.Max)
	batch := make([]*Call[Req, Res], 0, n)
	var seen map[claim.ItemID]struct{}
	group, weight := b.pending[0].Group, 0
	rest := b.pending[:0]
	for _, c := range b.pending {
		dup := false
		if c.Item != 0 {
			_, dup = seen[c.Item]
		}
		if dup || c.Group != group || (len(batch) > 0 && weight+c.Weight > b.cfg.Max) {
			rest = append(rest, c)
			continue
		}
		if c.Item != 0 {
			if seen == nil {
				seen = make(map[claim.ItemID]struct{}, n)
			}
			seen[c.Item] = struct{}{}
		}
		weight += c.Weight
		batch = append(batch, c)
	}
	clear(b.pending[len(rest):])
	b.pending = rest
	b.running++
	return batch
}

// flush sends batches until ctx is done, then fails every call still
// waiting with the Closed error.
func (b *Batcher[Req, Res]) flush(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			b.mu.Lock()
			b.closed = true
			left := b.pending
			b.pending = nil
			b.mu.Unlock()
			// No caller starts a batch of its own once closed.
			b.byCaller.Wait()
			for _, c := range left {
				c.Err = b.cfg.Closed(c.Op)
				close(c.done)
			}
			return
		case <-b.kick:
		}
		for {
			// Gather before every batch, the next one too: the callers
			// just answered are ready to run and send their next calls.
			if b.cfg.Gather {
				b.gather()
			}
			batch := b.take()
			if len(batch) == 0 {
				break
			}
			b.batches.Add(1)
			err := b.run(ctx, batch)
			closed := err != nil && ctx.Err() != nil
			// The batch is over before its callers hear of it: a caller's
			// next call then finds none under way (see Gather).
			b.mu.Lock()
			b.running--
			b.mu.Unlock()
			for _, c := range batch {
				switch {
				case closed:
					c.Err = b.cfg.Closed(c.Op)
				case err != nil:
					c.Err = err
				}
				close(c.done)
			}
			// Calls that arrived meanwhile may be waiting for another
			// flusher that is busy: pass the word on.
			b.wake()
		}
	}
}
