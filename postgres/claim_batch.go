package postgres

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/leasehold/lease/claim"
)

// batchCall is one caller's request in a claimBatcher, and its answer once
// done is closed.
type batchCall[Req, Res any] struct {
	item  claim.ItemID // 0 for a call on no item
	token uint64
	// group and weight decide which calls share a batch: calls of one
	// group, whose weights add up to at most the batcher's max (a heavier
	// call goes alone).
	group  string
	weight int
	req    Req
	res    Res
	err    error
	done   chan struct{}
}

// claimBatcher coalesces the calls of many goroutines into one statement
// per round trip (group commit): its flusher sends whatever is pending as
// one batch, and once that batch has committed, sends what arrived
// meanwhile. A caller waits for its own batch, so an answer without an
// error means the batch committed. A batch names each item at most once;
// a second call on an item waits for the next batch, so one statement never
// changes a row twice. A batch holds calls of one group only (Claim calls
// of one queue), up to a total weight.
//
// pending holds one entry per waiting caller, so it is bounded by the
// number of goroutines calling.
type claimBatcher[Req, Res any] struct {
	max int
	op  string
	// flushers is how many batches may be under way at once, each on
	// its own connection: while one waits for its commit to reach the
	// disk, the next is sent.
	flushers int
	kick     chan struct{} // wakes the flusher; capacity 1
	// run sends calls as one statement and sets each call's res or err; an
	// error it returns is every call's.
	run func(ctx context.Context, calls []*batchCall[Req, Res]) error

	// statements counts the batches sent, for tests.
	statements atomic.Int64

	mu      sync.Mutex
	pending []*batchCall[Req, Res]
	running int // batches under way
	closed  bool
}

func newClaimBatcher[Req, Res any](op string, max, flushers int, run func(context.Context, []*batchCall[Req, Res]) error) *claimBatcher[Req, Res] {
	return &claimBatcher[Req, Res]{max: max, op: op, flushers: flushers, kick: make(chan struct{}, 1), run: run}
}

// start starts the batcher's flushers, counted in wg, until ctx is done.
func (b *claimBatcher[Req, Res]) start(ctx context.Context, wg *sync.WaitGroup) {
	for range b.flushers {
		wg.Go(func() { b.flush(ctx) })
	}
}

// do queues req for the claim r and waits for its batch's answer, or for
// ctx. A call withdrawn before its batch was sent changes nothing; one
// whose batch was under way when ctx ended has an unknown outcome.
func (b *claimBatcher[Req, Res]) do(ctx context.Context, r claim.Ref, req Req) (Res, error) {
	return b.call(ctx, &batchCall[Req, Res]{item: r.Item, token: r.Token, weight: 1, req: req})
}

// call queues c and waits for its batch's answer, as do.
func (b *claimBatcher[Req, Res]) call(ctx context.Context, c *batchCall[Req, Res]) (Res, error) {
	var zero Res
	c.done = make(chan struct{})
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return zero, claimClosed(b.op)
	}
	if b.running == 0 && len(b.pending) == 0 {
		// Nothing else under way: send the call from here, which spares
		// two hand-offs between goroutines on an idle store. Calls that
		// arrive meanwhile queue for the flusher as usual.
		b.running++
		b.mu.Unlock()
		b.statements.Add(1)
		err := b.run(ctx, []*batchCall[Req, Res]{c})
		b.mu.Lock()
		b.running--
		more := len(b.pending) > 0
		b.mu.Unlock()
		if more {
			b.wake()
		}
		if err != nil {
			return zero, err
		}
		return c.res, c.err
	}
	b.pending = append(b.pending, c)
	b.mu.Unlock()
	b.wake()
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	if i := slices.Index(b.pending, c); i >= 0 {
		b.pending = slices.Delete(b.pending, i, i+1)
	}
	b.mu.Unlock()
	return zero, ctx.Err()
}

// wake tells a flusher that calls are pending.
func (b *claimBatcher[Req, Res]) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// take removes and returns the next batch: pending calls in arrival order
// of the first one's group, up to a total weight of max, each item once.
func (b *claimBatcher[Req, Res]) take() []*batchCall[Req, Res] {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		return nil
	}
	n := min(len(b.pending), b.max)
	batch := make([]*batchCall[Req, Res], 0, n)
	seen := make(map[claim.ItemID]struct{}, n)
	group, weight := b.pending[0].group, 0
	rest := b.pending[:0]
	for _, c := range b.pending {
		_, dup := seen[c.item]
		if dup || c.group != group || (len(batch) > 0 && weight+c.weight > b.max) {
			rest = append(rest, c)
			continue
		}
		if c.item != 0 {
			seen[c.item] = struct{}{}
		}
		weight += c.weight
		batch = append(batch, c)
	}
	clear(b.pending[len(rest):])
	b.pending = rest
	b.running++
	return batch
}

// flush sends batches until ctx is done, then fails every call still
// waiting with a closed error.
func (b *claimBatcher[Req, Res]) flush(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			b.mu.Lock()
			b.closed = true
			left := b.pending
			b.pending = nil
			b.mu.Unlock()
			for _, c := range left {
				c.err = claimClosed(b.op)
				close(c.done)
			}
			return
		case <-b.kick:
		}
		for {
			batch := b.take()
			if len(batch) == 0 {
				break
			}
			b.statements.Add(1)
			err := b.run(ctx, batch)
			if err != nil && ctx.Err() != nil {
				err = claimClosed(b.op)
			}
			for _, c := range batch {
				if err != nil {
					c.err = err
				}
				close(c.done)
			}
			b.mu.Lock()
			b.running--
			b.mu.Unlock()
			// Calls that arrived meanwhile may be waiting for another
			// flusher that is busy: pass the word on.
			b.wake()
		}
	}
}
