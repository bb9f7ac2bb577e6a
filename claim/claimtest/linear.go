package claimtest

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasehold/lease/claim"
)

type linKind uint8

const (
	linEnqueue linKind = iota + 1
	linClaim
	linExtend
	linSettle
	linCancel
	linRequeueDead
	linDeleteDead
	linLookup
	linCounts
)

func (k linKind) String() string {
	return [...]string{"?", "enqueue", "claim", "extend", "settle", "cancel", "requeue_dead", "delete_dead", "lookup", "counts"}[k]
}

// linInput is one call of the Linearizable clause.
type linInput struct {
	kind     linKind
	queue    string
	owner    string
	key      string // enqueue
	priority int    // enqueue
	ref      claim.Ref
	how      claim.Settle
	id       claim.ItemID
}

// linOutput is what the call returned, as far as the model can tell.
type linOutput struct {
	err      errClass
	id       claim.ItemID // enqueue
	ref      claim.Ref    // claim; zero when nothing was claimed
	state    claim.State  // lookup
	attempts int
	history  int
	counts   claim.Counts
	msg      string // the text of an unexpected error
}

// recorder collects the operations of concurrent clients.
type recorder struct {
	clock   atomic.Int64 // orders calls and returns across goroutines
	mu      sync.Mutex
	history []porcupine.Operation
}

func newRecorder() *recorder { return &recorder{} }

func (r *recorder) add(client int, in linInput, out linOutput, call int64) {
	op := porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: r.clock.Add(1)}
	r.mu.Lock()
	r.history = append(r.history, op)
	r.mu.Unlock()
}

// check fails the clause unless the history is linearizable. On failure it
// logs the longest order of calls the model accepts, the model's state
// after it, and the earliest calls left, one of which no order admits.
func (r *recorder) check(e *env, order claimOrder) {
	e.Helper()
	m := linModel(order)
	res, info := porcupine.CheckOperationsVerbose(m, r.history, 20*time.Second)
	if res == porcupine.Ok {
		return
	}
	e.Errorf("history of %d operations is %s against the model of the Store contract", len(r.history), res)
	var longest []porcupine.Operation
	for _, partition := range info.PartialLinearizationsOperations() {
		for _, ops := range partition {
			if len(ops) > len(longest) {
				longest = ops
			}
		}
	}
	state := m.Init()
	for _, op := range longest {
		_, state = m.Step(state, op.Input, op.Output)
	}
	const context = 30
	e.Logf("the longest order the model accepts has %d calls; its last:", len(longest))
	for _, op := range longest[max(0, len(longest)-context):] {
		e.Logf("  [%d, %d] client %d: %s", op.Call, op.Return, op.ClientId, m.DescribeOperation(op.Input, op.Output))
	}
	e.Logf("the model's state then: %s", m.DescribeState(state))
	done := map[int64]bool{}
	for _, op := range longest {
		done[op.Call] = true
	}
	var left []porcupine.Operation
	for _, op := range r.history {
		if !done[op.Call] {
			left = append(left, op)
		}
	}
	slices.SortFunc(left, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	e.Logf("the earliest calls left, one of which cannot come next:")
	for _, op := range left[:min(10, len(left))] {
		e.Logf("  [%d, %d] client %d: %s", op.Call, op.Return, op.ClientId, m.DescribeOperation(op.Input, op.Output))
	}
}

// linModel is the model as porcupine wants it: states are *model values
// that no step changes.
func linModel(order claimOrder) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return newModel(time.Time{}) },
		Step: func(state, input, output any) (bool, any) {
			m := state.(*model).clone()
			in, out := input.(linInput), output.(linOutput)
			return linStep(m, in, out, order), m
		},
		Equal: func(a, b any) bool { return a.(*model).key() == b.(*model).key() },
		Hash: func(s any) uint64 {
			h := fnv.New64a()
			_, _ = h.Write([]byte(s.(*model).key()))
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(linInput), output.(linOutput)
			return fmt.Sprintf("%v(key %q prio %d ref %v how %v id %d) -> %+v", in.kind, in.key, in.priority, in.ref, in.how, in.id, out)
		},
		DescribeState: func(s any) string { return s.(*model).key() },
	}
}

// linStep applies one call to m and reports whether its output is one the
// contract allows.
func linStep(m *model, in linInput, out linOutput, order claimOrder) bool {
	switch in.kind {
	case linEnqueue:
		if out.err != errNone {
			return false
		}
		_, class, bad := m.enqueue([]claim.NewItem{{Queue: in.queue, Key: in.key, Priority: in.priority, MaxAttempts: 100}}, []claim.ItemID{out.id})
		return class == errNone && bad == ""
	case linClaim:
		if out.err != errNone {
			return false
		}
		var got []claim.Claim
		if out.ref != (claim.Ref{}) {
			got = []claim.Claim{{Item: out.ref.Item, Ref: out.ref}}
		}
		_, _, bad := m.claim(claim.ClaimRequest{Queue: in.queue, Owner: in.owner, Limit: 1, Lease: long}, got, order)
		return bad == ""
	case linExtend:
		_, class := m.extend(in.ref, long)
		return class == out.err
	case linSettle:
		return m.settle(claim.Settlement{Ref: in.ref, How: in.how, Reason: in.owner}) == out.err
	case linCancel:
		return m.cancel(in.queue, in.id) == out.err
	case linRequeueDead:
		_, class := m.requeueDead(in.queue, in.id)
		return class == out.err
	case linDeleteDead:
		return m.deleteDead(in.queue, in.id) == out.err
	case linLookup:
		it, class := m.lookup(in.id)
		return class == out.err && it.State == out.state && it.Attempts == out.attempts && len(it.History) == out.history
	case linCounts:
		c, class := m.counts(in.queue)
		return class == out.err && c == out.counts
	}
	return false
}
