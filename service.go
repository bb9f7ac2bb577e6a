package lease

import (
	"cmp"
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/leasehold/lease/internal/heap"
	"github.com/leasehold/lease/internal/timebase"
)

// Service manages leases and the keys attached to them. Create one with New.
//
// A Service is safe for concurrent use by multiple goroutines. Hooks, audit
// sinks and ending subscribers run outside its lock and may call back into it.
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

// New returns a Service configured by opts. Options that are programmer
// errors (a nil clock, inverted TTL bounds, negative capacities) panic in the
// option constructors, not here.
func New(opts ...Option) *Service {
	o := defaultOptions()
	for _, opt := range opts {
		opt.apply(&o)
	}
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
// are dropped: after Close returns no hook, subscriber or sink is called,
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

// Grant creates a lease for holder with the given purpose and TTL. holder
// must not be empty nor longer than 4 GiB, purpose must be valid and ttl
// positive and within the service's TTL bounds; otherwise it returns
// LS_INVALID_ARGUMENT naming the field and nothing changes.
func (s *Service) Grant(ctx context.Context, holder string, purpose Purpose, ttl time.Duration) (Lease, error) {
	return s.grant(ctx, "grant", holder, purpose, ttl, "", nil)
}

// GrantWithKey grants a lease like Grant and attaches key to it with value,
// atomically, only if key is absent. If key is present (attached to a live
// lease or to none) it returns an error matching ErrKeyExists whose LeaseID
// is the lease holding key (0 for none), and nothing changes. It is the
// create-if-absent primitive that exclusive locks are built on.
func (s *Service) GrantWithKey(ctx context.Context, holder string, purpose Purpose, ttl time.Duration, key string, value []byte) (Lease, error) {
	if key == "" {
		return Lease{}, invalidArgument("key", "grant", 0, "must not be empty")
	}
	return s.grant(ctx, "grant", holder, purpose, ttl, key, value)
}

func (s *Service) grant(ctx context.Context, op, holder string, purpose Purpose, ttl time.Duration, key string, value []byte) (Lease, error) {
	if err := checkContext(ctx, op, 0); err != nil {
		return Lease{}, err
	}
	if err := s.checkGrant(op, holder, purpose, ttl); err != nil {
		return Lease{}, err
	}
	trace := s.traceID(ctx)
	if key != "" {
		value = cloneBytes(value)
	}
	s.mu.Lock()
	defer s.unlock()
	now, err := s.begin(op, 0)
	if err != nil {
		return Lease{}, err
	}
	if key != "" {
		if it, found := s.keys.get(key); found {
			err := &Error{Code: CodeKeyExists, Op: op, LeaseID: it.lease, Key: key}
			s.decide(trace, now, ActionGrant, nil, 0, err, "key exists")
			return Lease{}, err
		}
	}
	s.lastID++
	s.revision++
	e := s.leases.add(s.lastID)
	*e = entry{
		id:       s.lastID,
		revision: s.revision,
		purpose:  purpose,
	}
	e.setHolder(holder)
	s.setTimes(e, now, int64(ttl))
	e.granted = now
	s.heap.Push(e.expires(), uint64(e.id), e)
	if key != "" {
		s.keys.put(key, value, e.id)
		e.keys = 1
	}
	s.decide(trace, now, ActionGrant, e, e.id, nil, "granted")
	s.counted(purpose).granted++
	s.rearm(now)
	return s.snapshot(e), nil
}

func (s *Service) checkGrant(op, holder string, purpose Purpose, ttl time.Duration) error {
	switch {
	case holder == "":
		return invalidArgument("holder", op, 0, "must not be empty")
	case uint64(len(holder)) > maxHolderLen:
		return invalidArgument("holder", op, 0, "is longer than 4 GiB")
	case !purpose.Valid():
		return invalidArgument("purpose", op, 0, purpose.String()+" is not a valid purpose")
	}
	if err := s.checkTTL(op, 0, ttl); err != nil {
		return err
	}
	return nil
}

func (s *Service) checkTTL(op string, id ID, ttl time.Duration) *Error {
	switch {
	case ttl <= 0:
		return invalidArgument("ttl", op, id, ttl.String()+" is not positive")
	case ttl < s.opts.minTTL || ttl > s.opts.maxTTL:
		return invalidArgument("ttl", op, id, ttl.String()+" is outside ["+s.opts.minTTL.String()+", "+s.opts.maxTTL.String()+"]")
	}
	return nil
}

// Renew extends an active lease to now+TTL. An expired lease gets
// LS_EXPIRED, a revoked one LS_ALREADY_REVOKED, an ID never issued
// LS_NOT_FOUND; renewing an ended lease is never allowed.
func (s *Service) Renew(ctx context.Context, id ID) (Lease, error) {
	return s.renewOp(ctx, id, 0)
}

// RenewTTL is Renew with a new TTL: the lease's TTL becomes ttl and it
// expires at now+ttl. ttl is checked like Grant's.
func (s *Service) RenewTTL(ctx context.Context, id ID, ttl time.Duration) (Lease, error) {
	if err := s.checkTTL("renew", id, ttl); err != nil {
		return Lease{}, err
	}
	return s.renewOp(ctx, id, ttl)
}

func (s *Service) renewOp(ctx context.Context, id ID, ttl time.Duration) (Lease, error) {
	op, err := s.openLease(ctx, "renew", ActionRenew, "renew refused", id, false)
	if err != nil {
		return Lease{}, err
	}
	defer s.unlock()
	if ttl == 0 {
		ttl = time.Duration(op.e.ttl)
	}
	s.renew(op.e, op.now, int64(ttl))
	s.decide(op.trace, op.now, ActionRenew, op.e, id, nil, "renewed")
	s.rearm(op.now)
	return s.snapshot(op.e), nil
}

// renew extends a live lease from now.
func (s *Service) renew(e *entry, now, ttl int64) {
	old := e.due()
	s.revision++
	s.setTimes(e, now, ttl)
	if e.kept {
		e.ka().next = addSat(now, keepAliveInterval(ttl))
	}
	s.setDue(e, old)
	s.counted(e.purpose).renewed++
}

// setTimes records a grant or renewal at now for ttl.
func (s *Service) setTimes(e *entry, now, ttl int64) {
	e.ttl = ttl
	e.renewed = now
}

// setDue moves e's heap slot after its deadline changed from old. A later
// deadline leaves the heap alone (settle re-keys the slot when it
// surfaces); only an earlier one must move the slot up now.
func (s *Service) setDue(e *entry, old int64) {
	// slot key <= old, so a deadline that did not move earlier needs no
	// look at the slot at all (which, with a million leases, is a cache miss).
	if i, due := int(e.index), e.due(); due < old && due < s.heap.At(i).Key {
		s.heap.At(i).Key = due
		s.heap.Fix(i)
	}
}

// Use checks that the lease is active and was granted for purpose, and
// returns it. An ended lease gets LS_STALE_USE, another purpose
// LS_PURPOSE_MISMATCH (with Expected and Actual set on the *Error). Use
// changes no lease, key or revision; like every operation on a lease it
// records its decision in the audit trail. It does not allocate unless the
// lease has keys. A Use on a lease that is not due answers without settling
// other leases' expiries first, so it does not wait for a burst of them; its
// decision may then precede expiry decisions with an earlier time in the
// audit trail.
func (s *Service) Use(ctx context.Context, id ID, purpose Purpose) (Lease, error) {
	if !purpose.Valid() {
		return Lease{}, invalidArgument("purpose", "use", id, purpose.String()+" is not a valid purpose")
	}
	op, err := s.openLease(ctx, "use", ActionUse, "use refused", id, true)
	if err != nil {
		return Lease{}, err
	}
	defer s.unlock()
	if op.e.purpose != purpose {
		err := &Error{Code: CodePurposeMismatch, Op: "use", LeaseID: id, Expected: purpose, Actual: op.e.purpose}
		s.decide(op.trace, op.now, ActionUse, op.e, id, err, "use refused")
		return Lease{}, err
	}
	s.decide(op.trace, op.now, ActionUse, op.e, id, nil, "used")
	return s.snapshot(op.e), nil
}

// Revoke ends an active lease and deletes its keys atomically. The returned
// Lease's Keys are exactly the keys deleted.
func (s *Service) Revoke(ctx context.Context, id ID) (Lease, error) {
	op, err := s.openLease(ctx, "revoke", ActionRevoke, "revoke refused", id, false)
	if err != nil {
		return Lease{}, err
	}
	defer s.unlock()
	l := s.end(op.e, op.now, EndRevoked, op.trace)
	s.rearm(op.now)
	return l, nil
}

// Info returns the lease if it is active, and the error Renew would return
// otherwise. Like Use, it does not wait for other leases' expiries when its
// lease is not due.
func (s *Service) Info(id ID) (Lease, error) {
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.beginOne("info", id); err != nil {
		return Lease{}, err
	}
	e, lerr := s.lookup("info", id, false)
	if lerr != nil {
		return Lease{}, lerr
	}
	return s.snapshot(e), nil
}

// List returns the active leases ordered by ID. It returns nil after Close.
func (s *Service) List() []Lease {
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("list", 0); err != nil {
		return nil
	}
	live := make([]*entry, 0, s.heap.Len())
	s.heap.Each(func(e *entry) bool {
		live = append(live, e)
		return true
	})
	slices.SortFunc(live, func(a, b *entry) int { return cmp.Compare(a.id, b.id) })
	out := make([]Lease, len(live))
	for i, e := range live {
		out[i] = s.snapshot(e)
	}
	return out
}

// ActiveCount returns the number of active leases (0 after Close).
func (s *Service) ActiveCount() int {
	s.mu.Lock()
	defer s.unlock()
	if _, err := s.begin("count", 0); err != nil {
		return 0
	}
	return s.heap.Len()
}

// Revision returns the service revision: a counter that grows on every state
// change (grant, renew, revoke, expire, put, delete).
func (s *Service) Revision() int64 {
	s.mu.Lock()
	defer s.unlock()
	_, _ = s.begin("revision", 0) // settles what is due; a closed service keeps its last revision
	return s.revision
}

// Audit returns the retained decisions, oldest first. The slice is a copy.
func (s *Service) Audit() []Decision {
	s.mu.Lock()
	defer s.unlock()
	_, _ = s.begin("audit", 0) // settles what is due; a closed service keeps its trail
	return s.audit.snapshot(s.base)
}

// begin starts an operation under the lock: it refuses a closed service,
// reads the clock once and settles everything due.
func (s *Service) begin(op string, id ID) (int64, error) {
	if s.closed {
		return 0, newError(CodeClosed, op, id)
	}
	now := s.now()
	s.settle(now)
	return now, nil
}

// beginOne is begin for a call that reads one lease and changes nothing
// (Use, Info). If that lease is active and not due, nothing the rest of the
// backlog settles can change its answer, so the call answers at once
// instead of settling others' expiries first: during a burst it does not
// wait for the burst. Otherwise it settles everything due, like begin.
func (s *Service) beginOne(op string, id ID) (int64, error) {
	if s.closed {
		return 0, newError(CodeClosed, op, id)
	}
	now := s.now()
	if e := s.leases.get(id); e == nil || e.state != stateActive || e.due() <= now {
		s.settle(now)
	}
	return now, nil
}

// leaseOp is an operation on one active lease, started by openLease.
type leaseOp struct {
	e     *entry
	now   int64
	trace string
}

// openLease starts an operation on lease id: it checks ctx, takes the lock,
// settles what is due and finds the lease. On success the lock is held and
// the caller releases it with s.unlock. Use (stale true) changes nothing and
// settles only if its own lease is due (beginOne). A lease that is not active is
// refused: the refusal is audited under action and the lock released.
func (s *Service) openLease(ctx context.Context, op string, action Action, refused string, id ID, stale bool) (leaseOp, error) {
	if err := checkContext(ctx, op, id); err != nil {
		return leaseOp{}, err
	}
	trace := s.traceID(ctx)
	s.mu.Lock()
	var now int64
	var err error
	if stale {
		now, err = s.beginOne(op, id)
	} else {
		now, err = s.begin(op, id)
	}
	if err != nil {
		s.unlock()
		return leaseOp{}, err
	}
	e, lerr := s.lookup(op, id, stale)
	if lerr != nil {
		s.decide(trace, now, action, e, id, lerr, refused)
		s.unlock()
		return leaseOp{}, lerr
	}
	return leaseOp{e, now, trace}, nil
}

// lookup finds an active lease or returns the error the operation table
// gives for its state. For Use (stale true) every ended state is stale use.
func (s *Service) lookup(op string, id ID, stale bool) (*entry, *Error) {
	e := s.leases.get(id)
	var code Code
	var reason EndReason
	switch {
	case e != nil && e.state == stateActive:
		return e, nil
	case e != nil && e.state == stateRevoked:
		code, reason = CodeAlreadyRevoked, EndRevoked
	case e != nil || (id != 0 && id <= s.lastID):
		code, reason = CodeExpired, EndExpired // expired, or ended and no longer remembered
	default:
		return nil, newError(CodeNotFound, op, id)
	}
	if stale {
		code = CodeStaleUse
	}
	return e, endedError(code, op, id, reason)
}

// settle expires or keep-alive-renews every lease due at or before now, in
// deadline order.
func (s *Service) settle(now int64) { s.settleSome(now, math.MaxInt) }

// settleSome settles like settle but stops once it has done budget units of
// work (see fireWork) and reports whether any due remain.
func (s *Service) settleSome(now int64, budget int) (more bool) {
	for s.heap.Len() > 0 && s.heap.At(0).Key <= now {
		if budget <= 0 {
			return true
		}
		e := s.heap.At(0).Val
		if e.kept && e.ka().next <= now && !e.ka().live() {
			e.setKA(nil) // every keep-alive's parent is done: left to expire
		}
		if due := e.due(); s.heap.At(0).Key < due {
			// Surfaced early after a renewal: re-key and look again.
			s.heap.At(0).Key = due
			s.heap.Fix(0)
			continue
		}
		budget -= endWork(e)
		if e.kept && e.ka().next <= now {
			// Renewed at the instant it was due, like an expiry is decided
			// at its deadline: a late timer or a stalled process changes
			// nothing, and decisions stay in time order. After a stall
			// spanning many renewals only the last one is made: each would
			// have landed before the lease expired, so the last decides
			// the state, and the catch-up costs one renewal, not one per
			// missed interval.
			at, trace := e.ka().next, e.ka().regs[0].traceID
			if every := keepAliveInterval(e.ttl); now-at >= every {
				at += (now - at) / every * every
			}
			s.renew(e, at, e.ttl)
			s.decide(trace, at, ActionRenew, e, e.id, nil, "renewed by keep-alive")
			continue
		}
		s.end(e, e.expires(), EndExpired, "")
	}
	return false
}

// end removes a live lease with its keys, remembers how it ended, records
// the decision and queues the notifications. at is the decision time: the
// expiry instant for an expiry.
func (s *Service) end(e *entry, at int64, reason EndReason, trace string) Lease {
	s.heap.Remove(int(e.index))
	wanted := s.wantsEnd(reason)
	var deleted []string
	if e.keys > 0 {
		// The deleted keys are wanted by Revoke's caller and by listeners;
		// an expiry nobody listens to need not collect them.
		deleted = s.keys.deleteLease(e.id, int(e.keys), reason == EndRevoked || wanted)
		e.keys = 0
	}
	s.revision++
	action, code := ActionExpire, CodeExpired
	e.state = stateExpired
	if reason == EndRevoked {
		action, code = ActionRevoke, CodeAlreadyRevoked
		e.state = stateRevoked
	}
	if e.kept {
		endKeepAlive(e, endedError(code, "keepalive", e.id, reason))
	}
	evicted := s.ended.add(e)
	s.countEnd(e.purpose, reason)
	reasonText := "revoked"
	if reason == EndExpired {
		reasonText = "expired"
	}
	s.decide(trace, at, action, e, e.id, nil, reasonText)
	l := s.snapshot(e)
	l.Keys = deleted
	if wanted {
		ev := l
		if reason == EndRevoked {
			ev = ownKeys(l) // the caller of Revoke gets deleted; the event needs its own
		}
		s.outbox = append(s.outbox, event{kind: eventEnd, lease: ev, reason: reason, subs: s.subs})
	}
	if evicted != nil {
		// Last: deleting from the table may move entries, e among them.
		s.leases.delete(evicted.id)
	}
	return l
}

// rearm makes sure the timer fires no later than the earliest deadline. A
// timer armed earlier than needed is left alone: it fires, finds nothing due
// and re-arms, which is cheaper than re-arming on every renew.
func (s *Service) rearm(now int64) {
	if s.closed || s.heap.Len() == 0 {
		return
	}
	head := s.heap.At(0).Key
	if s.timer != nil && s.timerAt <= head {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timerGen++
	gen := s.timerGen
	s.timerAt = head
	s.timer = s.opts.clock.AfterFunc(time.Duration(head-now), func() { s.fire(gen) })
}

// fireWork is how much work a timer callback does before it releases the
// lock and delivers the notifications of the leases it settled. A burst of
// a million expiries then never holds the lock for long nor queues more
// than a batch of events at once, and calls get in between batches: a call
// about one lease that is not due answers at once (beginOne); any other
// call settles what is left itself first, so nothing due is ever observed
// as active. Work is counted rather than leases because a lease's keys cost
// more to delete than the lease itself: counting leases, a batch of leases
// with keys held the lock several times longer than one without. A batch
// takes about 0.2 ms, the wait it can add to a call.
const fireWork = 384

// keyWork is the work of deleting one key, in units of settling one lease
// without keys.
const keyWork = 4

// endWork returns the work of settling e.
func endWork(e *entry) int { return 1 + keyWork*int(e.keys) }

// fire is the timer callback: it settles what is due, a batch at a time,
// until nothing due is left. One fire loop runs at a time (s.firing): a
// second one would settle while the first delivers, queueing the whole
// burst's events unbounded. Between batches it yields, because Go's mutex
// lets the goroutine that unlocks take the lock straight back before a
// waiter that was woken runs: without the yield a call would wait for the
// whole burst.
func (s *Service) fire(gen uint64) {
	s.mu.Lock()
	if gen == s.timerGen {
		s.timer = nil
	}
	if s.closed || s.firing {
		// Another fire loop is settling; it re-arms the timer when done.
		s.mu.Unlock()
		return
	}
	s.firing = true
	// The heap keeps its array until the loop ends, instead of copying it
	// into a smaller one a dozen times on the way down, each a stall of
	// milliseconds for a call waiting on the lock.
	s.heap.Hold()
	delivering := false
	defer func() {
		if delivering {
			// A panic escaped delivery (a panic handler that panics): the
			// timer takes over what remains, as it would have from the
			// start.
			s.mu.Lock()
			s.stopFiring()
			s.rearm(s.now())
			s.mu.Unlock()
		}
	}()
	for {
		now := s.now()
		if !s.settleSome(now, fireWork) {
			s.stopFiring()
			s.rearm(now)
			s.unlock()
			return
		}
		delivering = true
		s.unlock()
		delivering = false
		runtime.Gosched() // a caller woken by unlock runs now, on this P
		s.relock()
		if s.closed {
			s.stopFiring()
			s.mu.Unlock()
			return
		}
	}
}

// stopFiring ends a fire loop. Called with the lock held.
func (s *Service) stopFiring() {
	s.firing = false
	s.heap.Release()
}

// relockSpins bounds how many times relock tries the lock, yielding in
// between, before it waits in line.
const relockSpins = 64

// relock takes the lock for the fire loop's next batch. Waiting in
// sync.Mutex's line would not do: a caller calling in a loop re-takes the
// lock each time before the woken fire loop runs, until the mutex turns
// fair after 1 ms, so every batch would cost a millisecond. Trying and
// yielding takes the lock in one of the caller's gaps instead.
func (s *Service) relock() {
	for range relockSpins {
		if s.mu.TryLock() {
			return
		}
		runtime.Gosched()
	}
	s.mu.Lock()
}

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

// decide records an audit decision and queues it for the sink.
func (s *Service) decide(trace string, at int64, action Action, e *entry, id ID, err *Error, reason string) {
	if s.opts.observer != nil && (err != nil || action != ActionUse) && s.observes(action, err) {
		s.observe(at, action, e, id, err)
	}
	sink := s.opts.auditSink != nil
	var scratch auditRecord
	rec := &scratch
	if r := s.audit.claim(); r != nil {
		rec = r // written in place: this runs on every Use
	} else if !sink {
		return
	}
	*rec = auditRecord{id: id, action: action, reason: reason, trace: trace, at: at, revision: s.revision, err: err}
	if e != nil {
		rec.holder = e.holder()
	}
	if sink {
		s.queueDecision(rec.decision(s.base))
	}
}

func checkContext(ctx context.Context, op string, id ID) error {
	if ctx == nil {
		return invalidArgument("ctx", op, id, "must not be nil")
	}
	return ctx.Err()
}

// addSat adds without overflowing, for TTLs near the maximum duration.
func addSat(a, b int64) int64 {
	if c := a + b; c >= a {
		return c
	}
	return 1<<63 - 1
}
