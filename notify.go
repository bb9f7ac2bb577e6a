package lease

import "sync/atomic"

// Notifications (audit sink calls, expiry hooks and ending subscriptions) are
// queued under the service lock and delivered after it is released, by one
// goroutine at a time, so they arrive in the order the service decided them
// and user code never runs under the lock. A hook that calls back into the
// service only queues more notifications, which the same delivery loop picks
// up after the hook returns.

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
// outside the service's lock, with Keys set to the keys that were deleted.
// fn may call back into the service. The returned stop function unsubscribes;
// fn is not called after stop returns unless a call is already under way.
//
// The lock and claim packages are built on OnEnd.
func (s *Service) OnEnd(fn func(l Lease, reason EndReason)) (stop func()) {
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

// wantsEnd reports whether an ending must be queued as an event.
func (s *Service) wantsEnd(reason EndReason) bool {
	return len(s.subs) > 0 || (reason == EndExpired && s.opts.onExpire != nil)
}

// unlock releases the service lock and, unless another goroutine is already
// delivering, delivers the queued notifications.
func (s *Service) unlock() {
	if len(s.outbox) == 0 || s.delivering {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	batch := s.outbox
	s.outbox = s.spare[:0]
	s.spare = nil
	s.mu.Unlock()
	s.deliver(batch)
}

func (s *Service) deliver(batch []event) {
	i := 0
	done := false
	defer func() {
		if done {
			return
		}
		// A hook panicked: keep the events after it for the next delivery
		// and let the panic continue with its own stack.
		s.mu.Lock()
		rest := append([]event(nil), batch[i+1:]...)
		s.outbox = append(rest, s.outbox...)
		s.delivering = false
		s.mu.Unlock()
	}()
	for {
		for i = 0; i < len(batch); i++ {
			s.dispatch(&batch[i])
		}
		clear(batch)
		s.mu.Lock()
		if len(s.outbox) == 0 {
			s.spare = batch[:0]
			s.delivering = false
			done = true
			s.mu.Unlock()
			return
		}
		batch, s.outbox = s.outbox, batch[:0]
		s.mu.Unlock()
	}
}

func (s *Service) dispatch(ev *event) {
	switch ev.kind {
	case eventDecision:
		s.opts.auditSink(ev.decision)
	case eventEnd:
		if ev.reason == EndExpired && s.opts.onExpire != nil {
			s.opts.onExpire(ev.lease)
		}
		for _, sub := range ev.subs {
			if !sub.stopped.Load() {
				sub.fn(ev.lease, ev.reason)
			}
		}
	}
}
