package claim

import (
	"slices"
	"strconv"
	"time"

	"github.com/leasehold/lease"
)

// Outcome is what Fail did with the item, a plain value safe to share.
type Outcome uint8

// The outcomes of Fail.
const (
	Requeued     Outcome = iota + 1 // back in the queue, after a backoff delay
	DeadLettered                    // out of attempts: moved to the dead letters
)

// String returns "requeued" or "dead_lettered".
func (o Outcome) String() string {
	switch o {
	case Requeued:
		return "requeued"
	case DeadLettered:
		return "dead_lettered"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// item is the Memory's record of one item.
type item struct {
	id        ItemID
	qs        *queueState
	kind      string
	tags      []string
	metadata  []byte
	key       string
	payload   []byte
	state     State
	priority  uint8
	attempts  int
	max       int
	timeout   time.Duration
	enqueued  int64 // times in nanoseconds since the Memory's epoch
	visibleAt int64
	deadAt    int64
	finished  int64 // when it became Completed or Cancelled
	// index is the item's position in its heap, or in its queue's dead
	// letters while Dead; -1 when in neither (in a FIFO, say).
	index   int
	hold    *hold // the current claim while Claimed
	history []Failure
}

// hold is one claim of an item: the lease that backs it and the calls on
// the core under way for it. The Memory's lock is never held across a call
// on the lease.Service (its hooks run on the caller's goroutine and may call
// the Memory), so a claim records what is in flight instead.
type hold struct {
	item    *item
	lease   lease.ID // 0 while the lease is being granted
	owner   string
	attempt int
	expires int64 // nanoseconds since the Memory's epoch
	// busy counts extends and settles under way on the core. A busy claim
	// is out of the claims heap: the call's result decides.
	busy      int
	beats     int              // extends under way
	beatsDone uint64           // extends finished
	settling  bool             // a Settle owns the claim
	ended     lease.EndReason  // set when the lease ended while busy
	endedAt   int64            // when it ended
	lost      func(Ref, error) // the claim request's Lost, if any
}

// ref returns the claim's Ref.
func (h *hold) ref() Ref { return Ref{Item: h.item.id, Token: uint64(h.lease)} }

// queueState is one named queue. It exists while the queue has items in any
// state or a caller of Notify waiting on it, and is freed some time after
// it has neither (see Memory.retireIfUnused).
type queueState struct {
	name string
	// ready holds the visible items of priority 0, the usual one; higher
	// levels are made on first use.
	ready   readyQueue
	levels  *[MaxPriority]readyQueue // priorities 1 to MaxPriority
	visible int
	delayed int // its items in the Memory's delayed heap
	claimed int
	// completed and cancelled count its finished items, which the
	// Memory's retention queues hold.
	completed, cancelled int
	dead                 []*item       // dead letters, each at its index
	wake                 chan struct{} // closed when an item may have become visible
	waiters              int           // Notify callers waiting on wake
	paused               bool          // hands out no claims and wakes nobody
	retired              bool          // in the Memory's list of queues to free
}

// level returns the ready queue of priority p, making it if need be.
func (qs *queueState) level(p uint8) *readyQueue {
	if p == 0 {
		return &qs.ready
	}
	if qs.levels == nil {
		qs.levels = new([MaxPriority]readyQueue)
	}
	return &qs.levels[p-1]
}

// push makes it visible in its priority's ready queue.
func (qs *queueState) push(at int64, it *item) {
	qs.level(it.priority).push(at, it)
	qs.visible++
}

// pop removes and returns the first visible item in claim order: the
// lowest priority level that has one, in its order. qs.visible must be
// positive.
func (qs *queueState) pop() *item {
	qs.visible--
	if qs.ready.Len() > 0 {
		return qs.ready.pop()
	}
	for i := range qs.levels {
		if r := &qs.levels[i]; r.Len() > 0 {
			it := r.pop()
			if qs.visible == 0 {
				qs.levels = nil // give back the levels a burst of priorities made
			}
			return it
		}
	}
	panic("claim: queue count out of step")
}

// drop removes the visible item it from its ready queue.
func (qs *queueState) drop(it *item) {
	qs.visible--
	qs.level(it.priority).drop(it)
	if qs.visible == 0 && qs.levels != nil {
		qs.levels = nil // give back the levels a burst of priorities made
	}
}

// unused reports whether the queue holds nothing and nobody waits on it.
func (qs *queueState) unused() bool {
	return qs.visible == 0 && qs.delayed == 0 && qs.claimed == 0 && len(qs.dead) == 0 && qs.waiters == 0 &&
		qs.completed == 0 && qs.cancelled == 0
}

// addDead adds a dead letter.
func (qs *queueState) addDead(it *item) {
	it.index = len(qs.dead)
	qs.dead = append(qs.dead, it)
}

// removeDead removes the dead letter it.
func (qs *queueState) removeDead(it *item) {
	i, last := it.index, len(qs.dead)-1
	qs.dead[i] = qs.dead[last]
	qs.dead[i].index = i
	qs.dead[last] = nil
	qs.dead = shrink(qs.dead[:last])
	it.index = -1
}

// signal wakes the callers waiting for this queue, unless it is paused.
func (qs *queueState) signal() {
	if !qs.paused {
		qs.wakeAll()
	}
}

// wakeAll wakes the callers waiting for this queue, paused or not: the
// Memory or its service closed, or the queue resumed.
func (qs *queueState) wakeAll() {
	if qs.wake != nil {
		close(qs.wake)
		qs.wake = nil
	}
}

func (qs *queueState) counts() Counts {
	return Counts{Visible: qs.visible, Delayed: qs.delayed, Claimed: qs.claimed, Dead: len(qs.dead),
		Completed: qs.completed, Cancelled: qs.cancelled}
}

// queueKey is an idempotency key of a queue.
type queueKey struct{ queue, key string }

func (m *Memory) snapshot(it *item) Item {
	x := Item{
		ID:          it.id,
		Queue:       it.qs.name,
		Kind:        it.kind,
		Tags:        slices.Clone(it.tags),
		Metadata:    clone(it.metadata),
		Key:         it.key,
		Payload:     clone(it.payload),
		State:       it.state,
		Attempts:    it.attempts,
		MaxAttempts: it.max,
		Priority:    int(it.priority),
		Timeout:     it.timeout,
		EnqueuedAt:  m.at(it.enqueued),
		History:     append([]Failure(nil), it.history...),
	}
	switch it.state {
	case Visible, Delayed:
		x.VisibleAt = m.at(it.visibleAt)
	case Dead:
		x.DeadAt = m.at(it.deadAt)
	case Completed, Cancelled:
		x.FinishedAt = m.at(it.finished)
	}
	return x
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
