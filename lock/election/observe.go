package election

import (
	"context"
	"sync"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Observe follows the election: it returns a channel that receives the
// leader when Observe is called, if there is one, and then each new leader
// (a new Token) as it is seen, in order, until ctx is done, when the
// channel is closed. A leader that loses its lease with nobody to replace
// it is not reported; its successor is. The channel holds one leader: a
// reader that falls behind misses the leaders in between and receives the
// latest one, never an older one after a newer one.
//
// On a provider that can watch a lock's holder (a lockprovider.HolderWatcher, such as
// the etcd provider) Observe follows the watch, on a goroutine of its own:
// a change is seen as soon as the provider reports it. A watch that fails
// (the provider is unreachable) is started again after the poll interval
// (WithPollInterval), timed on the Election's clock. Once ctx is done the
// watch ends, the goroutine closes the channel and exits.
//
// On any other provider Observe asks who leads every poll interval, on a
// timer of the Election's clock (so inside Advance on a
// leasetest.FakeClock): a change is seen within one interval, and a
// leadership shorter than that may go unseen. A failed poll is tried again
// at the next one. Observe then starts no goroutine of its own: once ctx
// is done, a context.AfterFunc stops the polls, waits for one under way and
// closes the channel, after which nothing runs.
func (e *Election) Observe(ctx context.Context) (<-chan Leader, error) {
	if ctx == nil {
		return nil, invalid("observe", "ctx", "must not be nil")
	}
	if w, ok := e.provider.(lockprovider.HolderWatcher); ok {
		return e.watch(ctx, w), nil
	}
	o := &observer{e: e, ctx: ctx, out: make(chan Leader, 1)}
	o.wg.Add(1) // the first poll, run here
	o.poll()
	context.AfterFunc(ctx, o.stop)
	return o.out, nil
}

// observer is one Observe: a chain of polls, each armed by the last.
type observer struct {
	e   *Election
	ctx context.Context
	out chan Leader
	// wg counts the armed timer and the poll under way, so that stop
	// closes out only once no poll can send on it.
	wg sync.WaitGroup

	mu      sync.Mutex
	timer   lease.Timer
	stopped bool
	last    uint64 // the token of the leader last sent; 0 for none
}

// poll asks who leads, sends a new leader, and arms the next poll. It runs
// counted in wg.
func (o *observer) poll() {
	defer o.wg.Done()
	h, ok, err := o.e.inspector.Holder(o.ctx, o.e.name)
	if err == nil && ok && h.Token > o.last { // only poll touches last
		o.last = h.Token
		offer(o.out, leaderOf(h))
	}
	o.mu.Lock()
	if o.stopped {
		o.mu.Unlock()
		return
	}
	o.wg.Add(1) // while this poll is counted, so never racing stop's Wait from zero
	o.mu.Unlock()
	// The clock is called with no lock held: it may be the user's.
	t := o.e.opts.clock.AfterFunc(o.e.opts.poll, o.poll)
	o.mu.Lock()
	if o.stopped {
		o.mu.Unlock()
		if t.Stop() {
			o.wg.Done()
		}
		return
	}
	o.timer = t
	o.mu.Unlock()
}

// offer puts l in out, replacing a leader the reader has not taken yet:
// the channel never blocks its sender, who must be the only one.
func offer(out chan Leader, l Leader) {
	for {
		select {
		case out <- l:
			return
		default:
		}
		select {
		case <-out:
		default:
		}
	}
}

// stop ends the polls, waits for one under way, and closes the channel.
func (o *observer) stop() {
	o.mu.Lock()
	o.stopped = true
	t := o.timer
	o.timer = nil
	o.mu.Unlock()
	if t != nil && t.Stop() {
		o.wg.Done()
	}
	o.wg.Wait()
	close(o.out)
}
