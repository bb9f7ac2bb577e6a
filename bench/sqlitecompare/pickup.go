package sqlitecompare

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// counter counts completions and closes reached when the count gets to
// target.
type counter struct {
	n       atomic.Int64
	target  atomic.Int64
	mu      sync.Mutex
	reached chan struct{}
}

func newCounter() *counter { return &counter{reached: make(chan struct{})} }

// await arms c for target completions in all and returns the channel
// closed when they are reached.
func (c *counter) await(target int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reached = make(chan struct{})
	c.target.Store(target)
	if c.n.Load() >= target {
		close(c.reached)
	}
	return c.reached
}

func (c *counter) add() {
	if c.n.Add(1) != c.target.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.reached:
	default:
		close(c.reached)
	}
}

// wait waits for ch, ctx or timeout, whichever comes first.
func wait(ctx context.Context, ch <-chan struct{}, timeout time.Duration, what string) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%s: not done after %s", what, timeout)
	}
}

// pickup starts cfg.PickupWorkers workers on an empty queue and enqueues
// items one at a time, each once the previous one's completion is stored
// so that the queue is idle, and returns for each measured item the time from the
// start of its enqueue call to the start of its handler. The items are
// enqueued through sys, or by child, another process on the same file,
// when child is not nil.
func pickup(ctx context.Context, cfg Config, sys System, child *childProcess) ([]time.Duration, error) {
	started := make(chan time.Time, 1)
	done := newCounter()
	obs := Observer{
		Started: func(uint64) {
			select {
			case started <- time.Now():
			default: // a second start before the harness read the first: the check below reports it
			}
		},
		Completed: done.add,
	}
	if err := sys.Start(ctx, cfg.PickupWorkers, obs); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	lat := make([]time.Duration, 0, cfg.Pickup)
	for i := range cfg.PickupWarmup + cfg.Pickup {
		reached := done.await(int64(i + 1))
		var t0 time.Time
		if child != nil {
			var err error
			if t0, err = child.enqueue(ctx, cfg.Timeout); err != nil {
				return nil, fmt.Errorf("enqueue in the other process: %w", err)
			}
		} else {
			t0 = time.Now()
			ectx, cancel := context.WithTimeout(ctx, cfg.Timeout)
			err := sys.EnqueueOne(ectx)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("enqueue: %w", err)
			}
		}
		var t1 time.Time
		t := time.NewTimer(cfg.Timeout)
		select {
		case t1 = <-started:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
			return nil, fmt.Errorf("pickup of item %d: not started after %s", i+1, cfg.Timeout)
		}
		t.Stop()
		if err := wait(ctx, reached, cfg.Timeout, fmt.Sprintf("pickup of item %d", i+1)); err != nil {
			return nil, err
		}
		// The completion stored too, the queue is idle again: the next
		// enqueue does not meet the last settlement's write.
		sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err := sys.Settled(sctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("settled: %w", err)
		}
		if i >= cfg.PickupWarmup {
			// Across processes t0 has no monotonic reading, and both are
			// compared on the host's wall clock, which they share.
			lat = append(lat, t1.Sub(t0))
		}
	}
	if len(started) != 0 || done.n.Load() != int64(cfg.PickupWarmup+cfg.Pickup) {
		return nil, fmt.Errorf("pickup: an item was handled or completed more than once (%d completions)", done.n.Load())
	}
	return lat, nil
}
