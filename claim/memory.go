package claim

import (
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/idtable"
)

// Memory is the in-process Store: items, queues and dead letters in memory,
// each claim a lease of one lease.Service. Create one with NewMemory and
// hand it to New, which then owns it.
//
// A Memory is safe for concurrent use by multiple goroutines. It runs on
// the service's time base (lease.Service.Clock): every delay, expiry and
// history time is read from it, so a leasetest.FakeClock under the service
// drives delays and lease expiries together. It learns of expired and
// revoked claim leases from the service's ending notifications (and, as a
// claim's expiry is its lease's, from its own reading of the clock, so it
// never shows an expired claim as live), and calls the claim's
// ClaimRequest.Lost before the item can be claimed again.
type Memory struct {
	svc     *lease.Service
	clock   lease.Clock // svc.Clock(): the only source of time
	epoch   time.Time   // times are kept as nanoseconds since this instant
	stopEnd func()
	watched chan struct{} // closed when the service watch has ended
	quit    chan struct{} // closed by Close, to end the service watch

	mu      sync.Mutex
	closed  bool
	svcDown bool // the service closed: no claim can be granted
	lastID  ItemID
	queues  leanMap[string, *queueState]
	lastQS  *queueState   // the queue found last
	retired []*queueState // unused queues to free, see retireIfUnused
	keys    leanMap[queueKey, *item]
	items   idtable.Table[item]      // see index.go
	byLease leanMap[lease.ID, *hold] // live claims
	missed  uint64                   // endings of claim leases not in byLease
	delayed itemHeap                 // delayed items of every queue, by VisibleAt
	claims  itemHeap                 // items whose claim is live with no call under way, by expiry

	// retention says how long finished items are kept; kept holds them,
	// completed, cancelled and dead, each in the order it finished.
	retention Retention
	kept      [3]retentionQueue
	// paused holds the paused queues and when each was paused; a queue's
	// state mirrors it while it exists.
	paused map[string]int64

	timer    lease.Timer // armed for the head of delayed
	timerAt  int64
	timerGen uint64
}

var _ Store = (*Memory)(nil)

// NewMemory returns a Memory whose claims are leases of svc. It subscribes
// to the endings of svc's leases, and watches svc's Done channel, until
// Close; when svc closes, claims fail with an error matching
// lease.ErrClosed and every Notify channel is closed. A nil svc gets a
// *lease.Error with Code lease.CodeInvalidArgument, and no Memory.
func NewMemory(svc *lease.Service) (*Memory, error) {
	if svc == nil {
		return nil, invalid("NewMemory", "svc", "service must not be nil")
	}
	clock := svc.Clock()
	m := &Memory{
		svc:     svc,
		clock:   clock,
		epoch:   clock.Now(),
		watched: make(chan struct{}),
		quit:    make(chan struct{}),
	}
	m.kept[0].state, m.kept[1].state, m.kept[2].state = Completed, Cancelled, Dead
	m.stopEnd = svc.OnEnd(m.leaseEnded)
	go m.watchService()
	return m, nil
}

// watchService wakes every waiter when the service closes, since no claim
// can be made after that.
func (m *Memory) watchService() {
	defer close(m.watched)
	select {
	case <-m.svc.Done():
	case <-m.quit:
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.svcDown = true
	for _, qs := range m.queues.m {
		qs.wakeAll()
	}
}

// Clock returns the service's time base, on which the Memory measures every
// time. New runs Work's heartbeats and timers on it.
func (m *Memory) Clock() lease.Clock { return m.clock }

// Close stops the Memory: its timer is stopped, every Notify channel is
// closed, and it no longer acts on the service's lease endings. Later calls
// fail with an error matching lease.ErrClosed, and so does a call under way
// that reaches the Memory again after Close. Leases of live claims are left
// to expire in the service, which Close does not close. Close is idempotent
// and returns nil; when it returns, nothing of the Memory runs.
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	for _, qs := range m.queues.m {
		qs.wakeAll()
	}
	m.mu.Unlock()
	close(m.quit)
	<-m.watched
	m.stopEnd()
	return nil
}

// begin starts an operation under the lock: it refuses a closed Memory,
// reads the clock once and settles everything due.
func (m *Memory) begin(op string) (int64, error) {
	if m.closed {
		return 0, closedError(op)
	}
	now := m.now()
	m.settle(now)
	return now, nil
}

// open starts, under the lock, an operation that needs no time of its own:
// like begin, but it reads the clock only when something could be due, a
// delayed item or a live claim.
func (m *Memory) open(op string) error {
	if m.closed {
		return closedError(op)
	}
	if m.delayed.Len() > 0 || m.claims.Len() > 0 {
		m.settle(m.now())
	}
	return nil
}

// settle makes due delayed items visible and takes back the items of claims
// whose lease has expired. Expiry is decided here from the claim's own
// record of ExpiresAt, which mirrors the service's exactly (both are on the
// service's time base), so the Memory never shows an expired claim as live
// even before the service's ending notification has reached it.
func (m *Memory) settle(now int64) {
	for m.delayed.Len() > 0 && m.delayedHead() <= now {
		it := m.delayed.pop()
		it.qs.delayed--
		m.makeVisible(it, it.visibleAt)
	}
	for m.claims.Len() > 0 && m.claimsHead() <= now {
		c := m.claims.pop().hold
		m.lose(c, c.expires, lease.EndExpired)
	}
}

func (m *Memory) delayedHead() int64 { at, _ := m.delayed.head(); return at }
func (m *Memory) claimsHead() int64  { at, _ := m.claims.head(); return at }

// unlock re-arms the timer for the earliest delayed item and releases the
// lock.
func (m *Memory) unlock() {
	m.rearm()
	m.mu.Unlock()
}

// rearm makes sure the timer fires no later than the earliest delayed item
// becomes visible, so waiting workers wake. Expired claims need no timer of
// ours: the service's ending notification wakes the Memory.
func (m *Memory) rearm() {
	if m.closed || m.delayed.Len() == 0 {
		return
	}
	head := m.delayedHead()
	if m.timer != nil && m.timerAt <= head {
		return
	}
	if m.timer != nil {
		m.timer.Stop()
	}
	m.timerGen++
	gen := m.timerGen
	m.timerAt = head
	m.timer = m.clock.AfterFunc(time.Duration(head-m.now()), func() { m.fire(gen) })
}

func (m *Memory) fire(gen uint64) {
	m.mu.Lock()
	defer m.unlock()
	if gen == m.timerGen {
		m.timer = nil
	}
	if !m.closed {
		m.settle(m.now())
	}
}

// leaseEnded is the Memory's subscription to the service's lease endings.
// It takes back the item of a claim whose lease expired, or was revoked by
// someone other than Settle. A claim with a call under way is only marked:
// that call's result decides.
func (m *Memory) leaseEnded(l lease.Lease, reason lease.EndReason) {
	if l.Purpose != lease.Operation {
		return // not a claim: spare the lock to the service's other users
	}
	m.mu.Lock()
	defer m.unlock()
	if m.closed {
		return
	}
	c := m.byLease.get(l.ID)
	if c == nil {
		// Perhaps a claim whose lease is being granted: let claim know.
		m.missed++
		return
	}
	if c.item.hold != c {
		return
	}
	if c.busy > 0 {
		// The call under way decides; when it finds the claim lost, it
		// takes the expiry instant, or its own time for a revocation.
		c.ended, c.endedAt = reason, m.nanos(l.ExpiresAt)
		return
	}
	at := m.nanos(l.ExpiresAt)
	if reason == lease.EndRevoked {
		at = m.now()
	} else if c.expires <= at {
		// Take back every claim expired by then, as a call that settles
		// does: by expiry, then item. Items then come back (and die) in
		// one order whoever notices first, the notification or a call,
		// which a replica applying a log to its Memory needs.
		m.settle(at)
		return
	}
	m.claims.remove(c.item)
	m.lose(c, at, reason)
}

// lose takes back the item of a claim whose lease ended without Settle:
// visible at once (at the instant the lease ended), or dead when the claim
// was its last attempt. The claim's Lost function is called first, so that
// a Work handler running on it is told to stop before anyone can claim the
// item again. c must not be in the claims heap.
func (m *Memory) lose(c *hold, at int64, reason lease.EndReason) {
	if c.lost != nil {
		c.lost(c.ref(), lost(c.ref(), reason))
	}
	it := c.item
	m.release(c)
	it.history = append(it.history, Failure{Attempt: c.attempt, Owner: c.owner, At: m.at(at), Reason: "lease " + reason.String(), Lost: true})
	if it.attempts >= it.max {
		m.makeDead(it, at)
		return
	}
	m.makeVisible(it, at)
}

// release detaches claim c from its item, which leaves the Claimed state.
func (m *Memory) release(c *hold) {
	it := c.item
	it.hold = nil
	it.qs.claimed--
	if c.lease != 0 {
		m.byLease.delete(c.lease)
	}
}

func (m *Memory) makeVisible(it *item, at int64) {
	it.state = Visible
	it.visibleAt = at
	it.qs.push(at, it)
	it.qs.signal()
}

// place makes an item visible at at, or delayed until then if at is after
// now.
func (m *Memory) place(it *item, at, now int64) {
	if at <= now {
		m.makeVisible(it, at)
		return
	}
	it.state = Delayed
	it.visibleAt = at
	it.qs.delayed++
	m.delayed.push(at, it)
}

func (m *Memory) makeDead(it *item, at int64) {
	it.state = Dead
	it.deadAt = at
	it.qs.addDead(it)
	if m.retention.Dead > 0 {
		m.kept[2].push(it, at)
	}
}

// remove deletes an item that is in no heap, queue or claim, and its queue
// if that was its last item. The record may live on in the Refs of old
// claims and in its queue's FIFO, so it lets go of everything but its ID.
func (m *Memory) remove(it *item) {
	qs := it.qs
	m.forget(it.id)
	if it.key != "" {
		m.keys.delete(queueKey{qs.name, it.key})
	}
	switch it.state {
	case Dead:
		qs.removeDead(it)
	case Completed:
		qs.completed--
	case Cancelled:
		qs.cancelled--
	}
	m.retireIfUnused(qs)
	*it = item{id: it.id, index: -1}
}

// findQueue returns the named queue, or nil. Calls mostly name the queue
// of the call before, so the last one found is tried first.
func (m *Memory) findQueue(name string) *queueState {
	if qs := m.lastQS; qs != nil && qs.name == name {
		return qs
	}
	qs := m.queues.get(name)
	if qs != nil {
		m.lastQS = qs
	}
	return qs
}

// queue returns the named queue, creating it.
func (m *Memory) queue(name string) *queueState {
	qs := m.findQueue(name)
	if qs == nil {
		qs = &queueState{name: name}
		_, qs.paused = m.paused[name]
		m.queues.put(name, qs)
		m.lastQS = qs
	}
	return qs
}

// retireIfUnused notes qs for freeing if it holds nothing and nobody waits
// on it. Queues used once (one per tenant, say) then cost nothing once
// drained, while a queue that drains and fills again at once, as a queue
// whose workers keep up does, keeps its state: retired queues are freed in
// batches, by freeRetired, if they are still unused by then.
func (m *Memory) retireIfUnused(qs *queueState) {
	if qs.retired || !qs.unused() {
		return
	}
	qs.retired = true
	m.retired = append(m.retired, qs)
	if len(m.retired) >= retireBatch {
		m.freeRetired()
	}
}

// retireBatch bounds the queues retired and not yet freed.
const retireBatch = 256

// freeRetired frees the retired queues that are still unused. Nothing
// refers to an unused queue but the Memory's map: its items are gone, and a
// caller of Notify counts as a waiter until it stops.
func (m *Memory) freeRetired() {
	for _, qs := range m.retired {
		qs.retired = false
		if !qs.unused() {
			continue
		}
		m.queues.delete(qs.name)
		if m.lastQS == qs {
			m.lastQS = nil
		}
	}
	clear(m.retired)
	m.retired = m.retired[:0]
}
