package claimtest

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// workers is how many goroutines contend: enough to keep every core busy
// and to queue some behind them.
func workers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// testConcurrentClaimers: goroutines claim (in batches of one to three) and
// settle the items of one queue together; every item is retried once and
// then completed, so each is claimed exactly twice, never by two live
// claims at once, and the queue ends empty.
func testConcurrentClaimers(e *env) {
	q := queue(0)
	n := e.scale(400, 60)
	var items []claim.NewItem
	for i := range n {
		items = append(items, newItem(q, strconv.Itoa(i)))
	}
	e.enqueue(items...)
	var (
		mu      sync.Mutex
		claims  = map[claim.ItemID][]int{} // the attempts of each item's claims
		live    = map[claim.ItemID]bool{}
		overlap atomic.Int32
		wg      sync.WaitGroup
		failed  atomic.Pointer[string]
	)
	fail := func(msg string) { failed.CompareAndSwap(nil, &msg) }
	start := make(chan struct{})
	for w := range workers() {
		wg.Go(func() {
			<-start
			owner := "w" + strconv.Itoa(w)
			for failed.Load() == nil {
				got, err := e.s.Claim(e.ctx, claim.ClaimRequest{Queue: q, Owner: owner, Limit: 1 + w%3, Lease: long})
				if err != nil {
					fail("Claim: " + err.Error())
					return
				}
				if len(got) == 0 {
					return
				}
				for _, c := range got {
					mu.Lock()
					if live[c.Item] {
						overlap.Add(1)
					}
					live[c.Item] = true
					claims[c.Item] = append(claims[c.Item], c.Attempt)
					mu.Unlock()
				}
				for _, c := range got {
					how := claim.SettleComplete
					if c.Attempt == 1 {
						how = claim.SettleRetry
					}
					mu.Lock()
					live[c.Item] = false
					mu.Unlock()
					if err := e.s.Settle(e.ctx, claim.Settlement{Ref: c.Ref, How: how, Reason: "once"}); err != nil {
						fail("Settle: " + err.Error())
						return
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if msg := failed.Load(); msg != nil {
		e.Fatal(*msg)
	}
	require.Zero(e, overlap.Load(), "an item had two live claims at once")
	require.Len(e, claims, n, "every item was claimed")
	for id, attempts := range claims {
		assert.Equal(e, []int{1, 2}, attempts, "item %d: claimed exactly twice, attempts 1 then 2", id)
	}
	assert.Equal(e, claim.Counts{}, e.counts(q), "the queue ends empty")
}

// testLinearizable: goroutines enqueue (with and without keys), claim,
// extend, settle, cancel, requeue, delete and inspect the items of one
// queue, with their live and their stale claims, and the recorded history
// must be linearizable against the model. Leases outlast the clause, so
// only the calls change anything. With a fake clock (which stands still
// here) Claim must take exactly the first item in claim order; on a real
// clock any claimable items, possibly none (see anySubset).
func testLinearizable(e *env) {
	n := e.scale(5, 3)
	perWorker := e.scale(50, 25)
	order := exactOrder
	if !e.fake() {
		order = anySubset
	}
	q := queue(0)
	rec := newRecorder()
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			c := client{e: e, q: q, owner: "w" + strconv.Itoa(w), rng: rng, rec: rec, id: w}
			for range perWorker {
				c.step()
			}
		})
	}
	wg.Wait()
	rec.check(e, order)
}

// client is one goroutine of the Linearizable clause: what it enqueued and
// claimed, which it picks its next calls from.
type client struct {
	e      *env
	q      string
	owner  string
	rng    *rand.Rand
	rec    *recorder
	id     int
	known  []claim.ItemID
	claims []claim.Ref // live or stale, newest last
}

func (c *client) pickID() claim.ItemID {
	if len(c.known) == 0 {
		return 1
	}
	return c.known[c.rng.IntN(len(c.known))]
}

func (c *client) pickRef() claim.Ref {
	if c.rng.IntN(4) > 0 {
		return c.claims[len(c.claims)-1]
	}
	return c.claims[c.rng.IntN(len(c.claims))]
}

// step makes one random call and records it.
func (c *client) step() {
	e, ctx := c.e, c.e.ctx
	in := linInput{queue: c.q, owner: c.owner}
	k := c.rng.IntN(20)
	switch {
	case k < 4 || len(c.known) == 0:
		in.kind = linEnqueue
		if c.rng.IntN(2) == 0 {
			in.key = "k" + strconv.Itoa(c.rng.IntN(3))
		}
		in.priority = c.rng.IntN(2)
	case k < 9 || len(c.claims) == 0:
		in.kind = linClaim
	case k < 10:
		in.kind, in.ref = linExtend, c.pickRef()
	case k < 14:
		in.kind, in.ref = linSettle, c.pickRef()
		in.how = claim.Settle(1 + c.rng.IntN(4))
	case k < 15:
		in.kind, in.id = linCancel, c.pickID()
	case k < 16:
		in.kind, in.id = linRequeueDead, c.pickID()
	case k < 17:
		in.kind, in.id = linDeleteDead, c.pickID()
	case k < 19:
		in.kind, in.id = linLookup, c.pickID()
	default:
		in.kind = linCounts
	}
	call := c.rec.clock.Add(1)
	var out linOutput
	var err error
	switch in.kind {
	case linEnqueue:
		var got []claim.Item
		got, err = e.s.Enqueue(ctx, []claim.NewItem{{Queue: c.q, Key: in.key, Priority: in.priority, MaxAttempts: 100}})
		if len(got) == 1 {
			out.id = got[0].ID
			c.known = append(c.known, got[0].ID)
		}
	case linClaim:
		var got []claim.Claim
		got, err = e.s.Claim(ctx, claim.ClaimRequest{Queue: c.q, Owner: c.owner, Limit: 1, Lease: long})
		if len(got) == 1 {
			out.ref = got[0].Ref
			c.known = append(c.known, got[0].Item)
			c.claims = append(c.claims, got[0].Ref)
		}
	case linExtend:
		_, err = e.s.Extend(ctx, in.ref, long)
	case linSettle:
		err = e.s.Settle(ctx, claim.Settlement{Ref: in.ref, How: in.how, Reason: c.owner})
	case linCancel:
		err = e.s.Cancel(ctx, c.q, in.id)
	case linRequeueDead:
		_, err = e.s.RequeueDead(ctx, c.q, in.id)
	case linDeleteDead:
		err = e.s.DeleteDead(ctx, c.q, in.id)
	case linLookup:
		var it claim.Item
		it, err = e.s.Lookup(ctx, in.id)
		out.state, out.attempts, out.history = it.State, it.Attempts, len(it.History)
	case linCounts:
		out.counts, err = e.s.Counts(ctx, c.q)
	}
	out.err = classify(err)
	if out.err == errOther {
		out.msg = err.Error()
	}
	c.rec.add(c.id, in, out, call)
}
