package claim

import (
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/idtable"
)

// Broker holds named work queues whose claims are leases of one
// lease.Service. Create one with New.
//
// A Broker is safe for concurrent use by multiple goroutines. It runs on the
// service's time base (lease.Service.Clock), so a leasetest.FakeClock under
// the service drives its delays, heartbeats and lease expiries together.
type Broker struct {
	svc     *lease.Service
	clock   lease.Clock // svc.Clock(): the only source of time
	epoch   time.Time   // times are kept as nanoseconds since this instant
	opts    options
	stopEnd func()

	mu      sync.Mutex
	closed  bool
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
	jobs    map[*job]struct{}        // Work handlers whose claim is live

	timer    lease.Timer // armed for the head of delayed
	timerAt  int64
	timerGen uint64
}

// New returns a Broker whose claims are leases of svc. It subscribes to the
// endings of svc's leases until Close. It panics if svc is nil.
func New(svc *lease.Service, opts ...Option) *Broker {
	if svc == nil {
		panic("claim: New: nil service")
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt.apply(&o)
	}
	clock := svc.Clock()
	b := &Broker{
		svc:   svc,
		clock: clock,
		epoch: clock.Now(),
		opts:  o,
		jobs:  make(map[*job]struct{}),
	}
	b.stopEnd = svc.OnEnd(b.leaseEnded)
	return b
}

// Close stops the Broker. When it returns, nothing of the Broker runs any
// more: its timer and every heartbeat are stopped, the context of every
// running Work handler is cancelled with a cause matching lease.ErrClosed,
// no further claim is handed to a handler, and the Broker no longer acts on
// the service's lease endings. Work returns once its handlers have; later
// calls fail with an error matching lease.ErrClosed, and a call under way
// that reaches the Broker again after Close returns that error too. Leases
// of live claims are left to expire in the service, which Close does not
// close. Close is idempotent and returns nil.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	cause := closedError("work")
	for j := range b.jobs {
		b.stopJob(j, cause)
	}
	for _, qs := range b.queues.m {
		qs.signal()
	}
	b.mu.Unlock()
	b.stopEnd()
	return nil
}

// begin starts an operation under the lock: it refuses a closed Broker,
// reads the clock once and settles everything due.
func (b *Broker) begin(op string) (int64, error) {
	if b.closed {
		return 0, closedError(op)
	}
	now := b.now()
	b.settle(now)
	return now, nil
}

// open starts, under the lock, an operation that needs no time of its own:
// like begin, but it reads the clock only when something could be due, a
// delayed item or a live claim.
func (b *Broker) open(op string) error {
	if b.closed {
		return closedError(op)
	}
	if b.delayed.Len() > 0 || b.claims.Len() > 0 {
		b.settle(b.now())
	}
	return nil
}

// settle makes due delayed items visible and takes back the items of claims
// whose lease has expired. Expiry is decided here from the claim's own
// record of ExpiresAt, which mirrors the service's exactly (both are on the
// service's time base), so the Broker never shows an expired claim as live
// even before the service's ending notification has reached it.
func (b *Broker) settle(now int64) {
	for b.delayed.Len() > 0 && b.delayedHead() <= now {
		it := b.delayed.pop()
		it.qs.delayed--
		b.makeVisible(it, it.visibleAt)
	}
	for b.claims.Len() > 0 && b.claimsHead() <= now {
		c := b.claims.pop().hold
		b.lose(c, c.expires, lease.EndExpired)
	}
}

func (b *Broker) delayedHead() int64 { at, _ := b.delayed.head(); return at }
func (b *Broker) claimsHead() int64  { at, _ := b.claims.head(); return at }

// unlock re-arms the timer for the earliest delayed item and releases the
// lock.
func (b *Broker) unlock() {
	b.rearm()
	b.mu.Unlock()
}

// rearm makes sure the timer fires no later than the earliest delayed item
// becomes visible, so waiting workers wake. Expired claims need no timer of
// ours: the service's ending notification wakes the Broker.
func (b *Broker) rearm() {
	if b.closed || b.delayed.Len() == 0 {
		return
	}
	head := b.delayedHead()
	if b.timer != nil && b.timerAt <= head {
		return
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.timerGen++
	gen := b.timerGen
	b.timerAt = head
	b.timer = b.clock.AfterFunc(time.Duration(head-b.now()), func() { b.fire(gen) })
}

func (b *Broker) fire(gen uint64) {
	b.mu.Lock()
	defer b.unlock()
	if gen == b.timerGen {
		b.timer = nil
	}
	if !b.closed {
		b.settle(b.now())
	}
}

// leaseEnded is the Broker's subscription to the service's lease endings.
// It takes back the item of a claim whose lease expired, or was revoked by
// someone other than Complete or Fail. A claim with a call under way is only
// marked: that call's result decides.
func (b *Broker) leaseEnded(l lease.Lease, reason lease.EndReason) {
	if l.Purpose != lease.Operation {
		return // not a claim: spare the lock to the service's other users
	}
	b.mu.Lock()
	defer b.unlock()
	if b.closed {
		return
	}
	c := b.byLease.get(l.ID)
	if c == nil {
		// Perhaps a claim whose lease is being granted: let claim know.
		b.missed++
		return
	}
	if c.item.hold != c {
		return
	}
	if c.busy > 0 {
		// The call under way decides; when it finds the claim lost, it
		// takes the expiry instant, or its own time for a revocation.
		c.ended, c.endedAt = reason, b.nanos(l.ExpiresAt)
		return
	}
	at := b.nanos(l.ExpiresAt)
	if reason == lease.EndRevoked {
		at = b.now()
	}
	b.claims.remove(c.item)
	b.lose(c, at, reason)
}

// lose takes back the item of a claim whose lease ended without Complete or
// Fail: visible at once (at the instant the lease ended), or dead when the
// claim was its last attempt. A Work handler running on the claim has its
// context cancelled first, so it is told to stop before anyone can claim
// the item again. c must not be in the claims heap.
func (b *Broker) lose(c *hold, at int64, reason lease.EndReason) {
	if c.job != nil {
		b.stopJob(c.job, lost(c, reason))
	}
	it := c.item
	b.release(c)
	it.history = append(it.history, Failure{Attempt: c.attempt, Owner: c.owner, At: b.at(at), Reason: "lease " + reason.String(), Lost: true})
	if it.attempts >= it.max {
		b.makeDead(it, at)
		return
	}
	b.makeVisible(it, at)
}

// release detaches claim c from its item, which leaves the Claimed state.
func (b *Broker) release(c *hold) {
	it := c.item
	it.hold = nil
	it.qs.claimed--
	if c.lease != 0 {
		b.byLease.delete(c.lease)
	}
}

func (b *Broker) makeVisible(it *item, at int64) {
	it.state = Visible
	it.visibleAt = at
	it.qs.ready.push(at, it)
	it.qs.signal()
}

// place makes an item visible at at, or delayed until then if at is after
// now.
func (b *Broker) place(it *item, at, now int64) {
	if at <= now {
		b.makeVisible(it, at)
		return
	}
	it.state = Delayed
	it.visibleAt = at
	it.qs.delayed++
	b.delayed.push(at, it)
}

func (b *Broker) makeDead(it *item, at int64) {
	it.state = Dead
	it.deadAt = at
	it.qs.addDead(it)
}

// remove deletes an item that is in no heap and no claim, and its queue if
// that was its last item. The record may live on in the Refs of old claims,
// so it lets go of everything but its ID.
func (b *Broker) remove(it *item) {
	qs := it.qs
	b.forget(it.id)
	if it.key != "" {
		b.keys.delete(queueKey{qs.name, it.key})
	}
	if it.state == Dead {
		qs.removeDead(it)
	}
	b.retireIfUnused(qs)
	*it = item{id: it.id, index: -1}
}

// findQueue returns the named queue, or nil. Calls mostly name the queue
// of the call before, so the last one found is tried first.
func (b *Broker) findQueue(name string) *queueState {
	if qs := b.lastQS; qs != nil && qs.name == name {
		return qs
	}
	qs := b.queues.get(name)
	if qs != nil {
		b.lastQS = qs
	}
	return qs
}

// queue returns the named queue, creating it.
func (b *Broker) queue(name string) *queueState {
	qs := b.findQueue(name)
	if qs == nil {
		qs = &queueState{name: name}
		b.queues.put(name, qs)
		b.lastQS = qs
	}
	return qs
}

// retireIfUnused notes qs for freeing if it holds nothing and nobody waits
// on it. Queues used once (one per tenant, say) then cost nothing once
// drained, while a queue that drains and fills again at once, as a queue
// whose workers keep up does, keeps its state: retired queues are freed in
// batches, by freeRetired, if they are still unused by then.
func (b *Broker) retireIfUnused(qs *queueState) {
	if qs.retired || !qs.unused() {
		return
	}
	qs.retired = true
	b.retired = append(b.retired, qs)
	if len(b.retired) >= retireBatch {
		b.freeRetired()
	}
}

// retireBatch bounds the queues retired and not yet freed.
const retireBatch = 256

// freeRetired frees the retired queues that are still unused. Nothing
// refers to an unused queue but the Broker's map: its items are gone, and a
// worker about to wait on it counts as a waiter.
func (b *Broker) freeRetired() {
	for _, qs := range b.retired {
		qs.retired = false
		if !qs.unused() {
			continue
		}
		b.queues.delete(qs.name)
		if b.lastQS == qs {
			b.lastQS = nil
		}
	}
	clear(b.retired)
	b.retired = b.retired[:0]
}
