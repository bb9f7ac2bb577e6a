package lease

import (
	"context"
	"runtime/debug"
	"slices"
	"sync/atomic"

	"github.com/leasehold/lease/internal/callback"
)

// Notifications (audit observer calls and ending subscriptions, the expiry
// hook among them) are queued under the service lock and delivered after it is released, by one
// goroutine at a time, so they arrive in the order the service decided them
// and user code never runs under the lock. A hook that calls back into the
// service only queues more notifications, which the same delivery loop picks
// up after the hook returns.
//
// The rules every callback of the service follows:
//   - a panic is recovered and reported to the panic handler, and delivery
//     goes on: the other callbacks still see the event;
//   - nothing queued is delivered once Close has been called;
//   - each callback gets its own copy of a lease's Keys;
//   - decisions waiting for the audit observer are bounded (WithObserverBuffer);
//     past the bound they skip it and are counted.

type eventKind uint8

const (
	eventDecision eventKind = iota + 1
	eventEnd
)

type event struct {
	kind     eventKind
	decision Decision
	lease    Lease
	reason   EndReason
	subs     []*subscriber // the subscribers when the event was queued
}

type subscriber struct {
	fn      func(Lease, EndReason)
	stopped atomic.Bool
}

// OnEnd subscribes fn to lease endings: it is called with every lease that
// expires or is revoked after OnEnd returns, in the order the leases ended,
// outside the service's lock, with Keys set to the keys that were deleted
// (a copy of its own). fn may call back into the service. A panic in fn is
// recovered and reported to the service's panic handler, and the other
// subscribers still see the ending. The returned stop function
// unsubscribes; fn is not called after stop returns unless a call is
// already under way. A nil fn subscribes nothing: the stop returned does
// nothing.
//
// The claim package is built on OnEnd.
func (s *Service) OnEnd(fn func(l Lease, reason EndReason)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	sub := &subscriber{fn: fn}
	s.mu.Lock()
	subs := make([]*subscriber, 0, len(s.subs)+1)
	s.subs = append(append(subs, s.subs...), sub) // copy on write: queued events keep their own slice
	s.mu.Unlock()
	return func() {
		sub.stopped.Store(true)
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.subs {
			if x == sub {
				subs := make([]*subscriber, 0, len(s.subs)-1)
				s.subs = append(append(subs, s.subs[:i]...), s.subs[i+1:]...)
				return
			}
		}
	}
}

// DroppedDecisions returns how many decisions skipped the audit observer
// (WithAuditObserver) because WithObserverBuffer's bound was reached while it
// was slow or blocked.
// They are still in the audit ring (Audit) if it has room.
func (s *Service) DroppedDecisions() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// wantsEnd reports whether an ending must be queued as an event.
func (s *Service) wantsEnd() bool {
	return len(s.subs) > 0
}

// queueDecision queues d for the audit observer unless its buffer is
// full. Called with the lock held.
func (s *Service) queueDecision(d Decision) {
	if s.pending >= s.opts.observerBuffer {
		s.dropped++
		return
	}
	s.pending++
	s.outbox = append(s.outbox, event{kind: eventDecision, decision: d})
}

// keepSpare bounds the event buffer kept for reuse: after a burst of a
// million expiries the buffers go back to this size instead of keeping the
// burst's memory.
const keepSpare = 1024

// unlock releases the service lock and, unless another goroutine is already
// delivering, delivers the queued notifications.
func (s *Service) unlock() {
	h := s.opts.observer
	if s.delivering || (len(s.outbox) == 0 && (h == nil || len(h.queue) == 0)) {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	delivered := false
	defer func() {
		if !delivered {
			s.abandonDelivery()
		}
	}()
	if len(s.outbox) == 0 {
		s.deliverObservedOnly(h)
		delivered = true
		return
	}
	batch := takeQueue(&s.outbox, &s.spare)
	var obs []observed
	if h != nil {
		obs = takeQueue(&h.queue, &h.spare)
	}
	s.mu.Unlock()
	s.deliver(batch, obs)
	delivered = true
}

// abandonDelivery runs when a panic escapes a delivery, which only a panic
// handler that panics itself can cause: the panic goes on to the caller,
// but the service does not stay stuck in a delivery that will never end.
// The batch under way is lost; what is still queued goes out with the next
// call's unlock, and the buffers' counts are taken from what is queued.
// Called without the lock.
func (s *Service) abandonDelivery() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delivering = false
	s.pending = 0
	for i := range s.outbox {
		if s.outbox[i].kind == eventDecision {
			s.pending++
		}
	}
	if h := s.opts.observer; h != nil {
		h.pending = len(h.queue)
		h.early.Store(0)
	}
}

// deliverObservedOnly is deliver for the common case with an observer:
// nothing is queued but the observer's records. Called with the lock held
// and delivering set; it releases the lock.
func (s *Service) deliverObservedOnly(h *observerHook) {
	obs := takeQueue(&h.queue, &h.spare)
	s.mu.Unlock()
	s.deliverObserved(obs)
	s.mu.Lock()
	h.pending -= len(obs)
	if !s.closed && len(s.outbox) == 0 && len(h.queue) == 0 {
		if cap(obs) <= keepSpare {
			h.spare = obs[:0]
		}
		s.delivering = false
		s.mu.Unlock()
		return
	}
	if s.closed {
		s.finishDelivery(nil, obs)
		s.mu.Unlock()
		return
	}
	batch, obs := s.takeQueued(nil, obs) // queued meanwhile, by the observer or by others
	s.mu.Unlock()
	s.deliver(batch, obs)
}

// deliver delivers batch with the observer's records obs, merged in the
// order they were queued, and then whatever was queued meanwhile, until
// nothing is left or the service is closed.
func (s *Service) deliver(batch []event, obs []observed) {
	h := s.opts.observer
	for {
		decisions := 0 // leaving the sink's buffer with this batch
		next := 0      // the first record of obs not yet delivered
		var early int64
		for i := range batch {
			if next < len(obs) && int(obs[next].pos) <= i {
				end := next + 1
				for end < len(obs) && int(obs[end].pos) <= i {
					end++
				}
				s.deliverObserved(obs[next:end])
				// batch[i] may block (a slow sink): the records delivered
				// no longer wait, and make room for new ones meanwhile.
				early += int64(end - next)
				h.early.Add(int64(end - next))
				next = end
			}
			if batch[i].kind == eventDecision {
				decisions++
			}
			if !s.stopped.Load() {
				s.dispatch(&batch[i])
			}
		}
		if next < len(obs) {
			s.deliverObserved(obs[next:])
		}
		clear(batch)
		s.mu.Lock()
		s.pending -= decisions
		if h != nil {
			h.pending -= len(obs)
			if early > 0 {
				h.early.Add(-early)
			}
		}
		if s.closed || (len(s.outbox) == 0 && (h == nil || len(h.queue) == 0)) {
			s.finishDelivery(batch, obs)
			s.mu.Unlock()
			return
		}
		batch, obs = s.takeQueued(batch, obs)
		s.mu.Unlock()
	}
}

// takeQueued takes what was queued during a delivery as the next batch and
// keeps the delivered buffers, if not too large, for the queues. Called
// with the lock held.
func (s *Service) takeQueued(done []event, doneObs []observed) ([]event, []observed) {
	batch := swapQueue(&s.outbox, done)
	if h := s.opts.observer; h != nil {
		return batch, swapQueue(&h.queue, doneObs)
	}
	return batch, nil
}

// finishDelivery ends a delivery: it drops whatever is queued (there is
// nothing unless the service is closed) and keeps the delivered buffers,
// if not too large, as spares. Called with the lock held.
func (s *Service) finishDelivery(done []event, doneObs []observed) {
	resetQueue(&s.outbox, &s.spare, done)
	s.pending = 0
	if h := s.opts.observer; h != nil {
		resetQueue(&h.queue, &h.spare, doneObs)
		h.pending = 0
	}
	s.delivering = false
}

// takeQueue returns the queue *q for delivery and gives *q the spare
// buffer.
func takeQueue[T any](q, spare *[]T) []T {
	batch := *q
	*q = (*spare)[:0]
	*spare = nil
	return batch
}

// swapQueue returns the queue *q for delivery and gives *q the buffer of
// the batch just delivered, unless it grew too large.
func swapQueue[T any](q *[]T, done []T) []T {
	batch := *q
	*q = nil
	if cap(done) <= keepSpare {
		*q = done[:0]
	}
	return batch
}

// resetQueue empties the queue *q, letting its buffer go if it grew too
// large, and keeps the buffer of the batch just delivered as *spare unless
// it did.
func resetQueue[T any](q, spare *[]T, done []T) {
	clear(*q)
	*q = (*q)[:0]
	if cap(done) <= keepSpare {
		*spare = done[:0]
	}
	if cap(*q) > keepSpare {
		*q = nil
	}
}

// dispatch delivers one event under the panic policy.
func (s *Service) dispatch(ev *event) {
	switch ev.kind {
	case eventDecision:
		callback.Call("audit observer", s.reportPanic, func() { s.opts.auditSink(ev.decision) })
	case eventEnd:
		// The event owns its Keys (end made them for it): the last
		// callback may have them, every other one gets a copy.
		for i, sub := range ev.subs {
			if s.stopped.Load() {
				return
			}
			if sub.stopped.Load() {
				continue
			}
			l := ev.lease
			if i < len(ev.subs)-1 {
				l = ownKeys(l)
			}
			callback.Call("end subscriber", s.reportPanic, func() { sub.fn(l, ev.reason) })
		}
	}
}

// ownKeys gives l a copy of its Keys, so that no callback or caller can
// change what another sees.
func ownKeys(l Lease) Lease {
	if len(l.Keys) > 0 {
		l.Keys = slices.Clone(l.Keys)
	}
	return l
}

// traceID reads the trace ID of ctx for a decision, under the panic policy:
// a panicking trace-ID function is reported and the decision has none.
func (s *Service) traceID(ctx context.Context) (id string) {
	if !s.opts.customTrace {
		return TraceIDFromContext(ctx) // ours: cannot panic, needs no guard
	}
	defer func() {
		if v := recover(); v != nil {
			id = ""
			s.reportPanic("trace id", v, debug.Stack())
		}
	}()
	return s.opts.traceID(ctx)
}
