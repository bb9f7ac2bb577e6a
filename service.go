package lease

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/leasehold/lease/internal/heap"
	"github.com/leasehold/lease/internal/optcore"
	"github.com/leasehold/lease/internal/timebase"
)

// Service manages leases and the keys attached to them. Create one with New.
//
// A Service is safe for concurrent use by multiple goroutines. Observers and
// ending subscribers run outside its lock and may call back into it.
// Its operations take turns on one lock, so one Service does about one
// core's worth of them; an application that needs more can partition its
// leases (by tenant, say) over several Services, each with its own IDs and
// revisions.
type Service struct {
	opts options
	// base is the service's one reading of time: nanoseconds since its
	// epoch, never running backwards, shared through Clock with everything
	// built on the service.
	base  *timebase.Base
	clock *baseClock
	done  chan struct{} // closed by Close

	mu       sync.Mutex
	closed   bool
	lastID   ID
	revision int64
	leases   leaseTable        // live leases and the remembered ended ones
	heap     heap.Heap[*entry] // live leases by next deadline; see expiry_heap.go
	ended    endedRecord
	keys     keySpace
	audit    auditRing

	timer    Timer
	timerAt  int64 // deadline the timer is armed for
	timerGen uint64
	firing   bool // a fire loop is settling a backlog

	subs       []*subscriber
	outbox     []event
	spare      []event
	delivering bool
	pending    int         // decisions queued for the sink and not yet delivered
	dropped    uint64      // decisions that skipped the full sink buffer
	stopped    atomic.Bool // set by Close: delivery stops

	counts []purposeCounts // by Purpose: what Stats reports; see stats.go
}

type leaseState uint8

const (
	stateActive leaseState = iota
	stateExpired
	stateRevoked
)

// entry is the service's record of one lease: 64 bytes, one cache line, so
// that a lookup at random touches a single line (see table.go). Times are
// nanoseconds since the service epoch, converted to time.Time only when a
// snapshot is made; the expiry instant and the next deadline are derived
// (expires, due). The holder is kept as its bytes and a 32-bit length, 12
// bytes where a string takes 16; a lease with keep-alives keeps it in its
// keepAlive record instead, whose pointer then takes the place of the
// bytes' (holder, ka).
type entry struct {
	id ID
	// ref points to the holder's bytes, holderLen long, or, when kept, to
	// the lease's keepAlive.
	ref       unsafe.Pointer
	granted   int64 // when granted
	renewed   int64 // when last renewed (granted, if never)
	ttl       int64
	revision  int64
	holderLen uint32
	index     int32 // position in the heap; once ended, -2-slot in the ended record
	keys      int32 // number of attached keys
	purpose   Purpose
	state     leaseState
	kept      bool // has keep-alives: ref is its *keepAlive
}

// maxHolderLen is the longest holder an entry can keep.
const maxHolderLen = 1<<32 - 1

// holder returns the lease's holder.
func (e *entry) holder() string {
	if e.kept {
		return (*keepAlive)(e.ref).holder
	}
	return unsafe.String((*byte)(e.ref), e.holderLen)
}

// setHolder records h, at most maxHolderLen bytes, as the holder of a lease
// without keep-alives.
func (e *entry) setHolder(h string) {
	e.ref, e.holderLen = unsafe.Pointer(unsafe.StringData(h)), uint32(len(h))
}

// ka returns the lease's keep-alive state, or nil if it has none.
func (e *entry) ka() *keepAlive {
	if !e.kept {
		return nil
	}
	return (*keepAlive)(e.ref)
}

// setKA makes ka the lease's keep-alive state; nil removes it. The record
// takes over the holder while it is set.
func (e *entry) setKA(ka *keepAlive) {
	h := e.holder()
	if ka == nil {
		e.kept = false
		e.setHolder(h)
		return
	}
	ka.holder = h
	e.ref, e.kept = unsafe.Pointer(ka), true
}

// due returns the next instant the service must act on the lease: the next
// keep-alive renewal if it has keep-alives, its expiry otherwise.
func (e *entry) due() int64 {
	if e.kept {
		return e.ka().next
	}
	return e.expires()
}

// expires returns the instant the lease expires unless renewed.
func (e *entry) expires() int64 { return addSat(e.renewed, e.ttl) }

// New returns a Service configured by opts. An option given a value it can
// never take (a nil clock or function, inverted TTL bounds, a negative
// capacity) gets an *Error with Code CodeInvalidArgument whose Field names
// the first such option, and no Service. Use Must for a configuration
// fixed in the source, such as a test's.
func New(opts ...Option) (*Service, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return newService(o), nil
}

// buildOptions applies opts to the defaults and reports the first refused.
func buildOptions(opts []Option) (options, error) {
	o := defaultOptions()
	t := &optcore.Target[Clock, *PanicError]{Shared: &o.shared, Own: &o}
	if r := optcore.Apply(t, opts, applyOption); r != nil {
		return options{}, invalidArgument(r.Option, "New", 0, r.Detail)
	}
	o.clock = SystemClock()
	if o.shared.HasClock {
		o.clock = o.shared.Clock
	}
	o.report = o.shared.Reporter(newPanicError)
	return o, nil
}

// applyOption applies opt to the options t is for.
func applyOption(opt Option, t *optcore.Target[Clock, *PanicError]) {
	opt.apply(t.Own.(*options))
}

// newService returns a Service with the options o, already checked.
func newService(o options) *Service {
	clock := MonotonicClock(o.clock).(*baseClock)
	s := &Service{
		opts:  o,
		base:  clock.base,
		clock: clock,
		done:  make(chan struct{}),
		heap:  newExpiryHeap(),
		ended: newEndedRecord(o.endedCapacity),
		keys:  newKeySpace(),
		audit: newAuditRing(o.auditCapacity),
	}
	s.leases = newLeaseTable(s.relocated)
	return s
}

// relocated repoints the one reference the service keeps to an entry, its
// heap slot or its ended-record slot, after the lease table moved it.
func (s *Service) relocated(e *entry) {
	if e.state == stateActive {
		s.heap.At(int(e.index)).Val = e
		return
	}
	s.ended.relocated(e)
}

// Close stops the service: its timer is stopped, every keep-alive context is
// cancelled with cause ErrClosed, Done is closed, and later calls fail with
// LS_CLOSED. Leases do not expire after Close. Notifications still queued
// are dropped: after Close returns no observer or subscriber is called,
// except that a callback already running (perhaps the one calling Close)
// finishes. Close is idempotent and always returns nil.
func (s *Service) Close() error {
	s.mu.Lock()
	defer s.unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopped.Store(true)
	close(s.done)
	// Nothing queued is delivered after Close: the delivery under way, if
	// any, sees stopped before its next callback.
	clear(s.outbox)
	s.outbox = s.outbox[:0]
	s.pending = 0
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.heap.Each(func(e *entry) bool {
		if e.kept {
			endKeepAlive(e, newError(CodeClosed, "keepalive", e.id))
		}
		return true
	})
	return nil
}

// Clock returns the service's time base: a Clock whose Now is the time the
// service decides by, which never runs backwards (a step back of the
// underlying clock reads as time standing still until it catches up; a step
// forward is honoured), and whose AfterFunc(d, f) runs f once that time has
// advanced by d. Everything built on a Service (claims, locks, lock managers)
// must read time from it, so that all of them agree with the service.
func (s *Service) Clock() Clock { return s.clock }

// Done returns a channel that is closed when Close is called, for code built
// on the service that must stop with it.
func (s *Service) Done() <-chan struct{} { return s.done }

// now reads the service's time base.
func (s *Service) now() int64 { return s.base.Now() }

func (s *Service) at(n int64) time.Time { return s.base.Time(n) }

func (s *Service) snapshot(e *entry) Lease {
	// Converting a time costs a few nanoseconds, a fifth of a Use: a lease
	// never renewed reuses one conversion for both times.
	renewed := s.at(e.renewed)
	granted := renewed
	if e.granted != e.renewed {
		granted = s.at(e.granted)
	}
	l := Lease{
		ID:        e.id,
		Holder:    e.holder(),
		Purpose:   e.purpose,
		TTL:       time.Duration(e.ttl),
		GrantedAt: granted,
		RenewedAt: renewed,
		ExpiresAt: s.at(e.expires()),
		Revision:  e.revision,
	}
	if e.keys > 0 {
		l.Keys = s.keys.keysOf(e.id, int(e.keys))
	}
	return l
}

// addSat adds without overflowing, for TTLs near the maximum duration.
func addSat(a, b int64) int64 {
	if c := a + b; c >= a {
		return c
	}
	return 1<<63 - 1
}
