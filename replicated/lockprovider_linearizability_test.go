package replicated

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

// The model of one lock, with leases that outlast the test, so none
// expires: who holds it (its token, 0 for nobody) and the highest token it
// was granted with. A client that does not know whether its acquisition
// took effect may have left the lock held by a token nobody knows
// (heldUnknown), which a read of the holder then names.

type lockOpKind uint8

const (
	lkAcquire lockOpKind = iota
	lkRelease
	lkRenew
	lkHolder
)

func (k lockOpKind) String() string {
	return [...]string{"acquire", "release", "renew", "holder"}[k]
}

type lockIn struct {
	kind  lockOpKind
	name  string
	token uint64 // release, renew
}

type lockOut struct {
	unknown bool   // the call failed: it may or may not have taken effect
	token   uint64 // acquire: granted (0: held); holder: the holder (0: none)
	ok      bool   // renew: renewed
}

const heldUnknown = math.MaxUint64

type lockState struct{ holder, last uint64 }

func (s lockState) step(in lockIn, out lockOut) []any {
	if out.unknown {
		next := []any{s}
		switch {
		case in.kind == lkAcquire && s.holder == 0:
			next = append(next, lockState{heldUnknown, s.last})
		case in.kind == lkRelease && s.holder == in.token:
			next = append(next, lockState{0, s.last})
		}
		return next
	}
	switch in.kind {
	case lkAcquire:
		if out.token == 0 {
			return when(s.holder != 0, s)
		}
		return when(s.holder == 0 && out.token > s.last, lockState{out.token, out.token})
	case lkRelease:
		if s.holder == in.token {
			return []any{lockState{0, s.last}}
		}
		return []any{s}
	case lkRenew:
		return when(out.ok == (s.holder == in.token), s)
	default: // lkHolder
		if s.holder == heldUnknown {
			return when(out.token > s.last, lockState{out.token, out.token})
		}
		return when(out.token == s.holder, s)
	}
}

// when returns next as the only state if ok, and no state otherwise.
func when(ok bool, next lockState) []any {
	if ok {
		return []any{next}
	}
	return nil
}

var lockModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byName := map[string][]porcupine.Operation{}
		var names []string
		for _, op := range history {
			n := op.Input.(lockIn).name
			if _, ok := byName[n]; !ok {
				names = append(names, n)
			}
			byName[n] = append(byName[n], op)
		}
		var out [][]porcupine.Operation
		for _, n := range names {
			out = append(out, byName[n])
		}
		return out
	},
	Init: func() []any { return []any{lockState{}} },
	Step: func(state, input, output any) []any {
		return state.(lockState).step(input.(lockIn), output.(lockOut))
	},
	Equal: func(a, b any) bool { return a.(lockState) == b.(lockState) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(lockIn), output.(lockOut)
		return fmt.Sprintf("%v(%s, %d) -> %+v", in.kind, in.name, in.token, out)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%+v", state.(lockState)) },
}

// Acquisitions, releases, renewals and reads of the holder of three locks,
// from four clients through every node in turn, across the loss of the
// leader, form a linearizable history: never two holders, tokens that
// grow, a renewal that keeps working after the leader change.
func TestLockProviderLinearizableAcrossFailover(t *testing.T) {
	c := lockCluster(t, 3)
	first := c.leader()
	ps := make([]*LockProvider, len(c.nodes))
	for i := range c.nodes {
		ps[i] = lockOn(t, c, i)
	}
	const clients, opsPerClient = 4, 40
	names := []string{"l0", "l1", "l2"}
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		done    atomic.Int64
		start   = time.Now()
	)
	now := func() int64 { return int64(time.Since(start)) }
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(cl), 2))
			exec := fmt.Sprintf("client-%d", cl)
			held := map[string]lock.Lease{}
			for range opsPerClient {
				name := names[rng.IntN(len(names))]
				in := lockIn{name: name}
				l, holds := held[name]
				r := rng.IntN(4)
				switch {
				case holds && r < 2:
					in.kind, in.token = lkRelease, l.Token
				case holds && r == 2:
					in.kind, in.token = lkRenew, l.Token
				case r == 3:
					in.kind = lkHolder
				default:
					in.kind = lkAcquire
				}
				p := ps[runningNode(c, rng)]
				call := now()
				out, got := runLockOp(p, in, exec, l)
				ret := now()
				if out.unknown {
					ret = math.MaxInt64
				}
				switch {
				case got != nil:
					held[name] = *got
				case in.kind == lkRelease, in.kind == lkRenew && !out.unknown && !out.ok:
					delete(held, name)
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
				if done.Add(1) == clients*opsPerClient/3 {
					close(killed)
				}
			}
		})
	}
	<-killed
	c.stop(first)
	wg.Wait()
	unknown := 0
	for _, op := range history {
		if op.Output.(lockOut).unknown {
			unknown++
		}
	}
	t.Logf("%d operations, %d of unknown outcome", len(history), unknown)
	model := lockModel.ToModel()
	require.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(model, history, 20*time.Second), "history of %d operations", len(history))

	// The check has teeth: a second grant of a name's first token is caught.
	firstToken := map[string]uint64{}
	mutated := false
	for i, op := range history {
		in, out := op.Input.(lockIn), op.Output.(lockOut)
		if in.kind != lkAcquire || out.unknown || out.token == 0 {
			continue
		}
		if tok, ok := firstToken[in.name]; ok {
			out.token = tok
			history[i].Output = out
			mutated = true
			break
		}
		firstToken[in.name] = out.token
	}
	require.True(t, mutated, "no name was granted twice")
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(model, history, 20*time.Second))
}

// runningNode returns a random node that is up.
func runningNode(c *cluster, rng *rand.Rand) int {
	for {
		if i := rng.IntN(len(c.nodes)); c.node(i) != nil {
			return i
		}
	}
}

// runLockOp runs one operation as client exec, holding l when the
// operation is on its holding, and returns its outcome and the lease it
// now holds, if it got or renewed one.
func runLockOp(p *LockProvider, in lockIn, exec string, l lock.Lease) (lockOut, *lock.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const d = time.Minute // outlasts the test: nothing expires
	switch in.kind {
	case lkAcquire:
		got, err := p.Acquire(ctx, in.name, exec, d)
		if err != nil {
			return lockOut{unknown: true}, nil
		}
		if got == nil {
			return lockOut{}, nil
		}
		return lockOut{token: got.Token}, got
	case lkRelease:
		if err := p.Release(ctx, []lock.Lease{l}); err != nil {
			return lockOut{unknown: true}, nil
		}
		return lockOut{}, nil
	case lkRenew:
		got, err := p.Renew(ctx, []lock.Lease{l}, d)
		if err != nil {
			return lockOut{unknown: true}, nil
		}
		if len(got) == 0 {
			return lockOut{}, nil
		}
		return lockOut{ok: true}, &got[0]
	default:
		h, ok, err := p.Holder(ctx, in.name)
		switch {
		case err != nil:
			return lockOut{unknown: true}, nil
		case !ok:
			return lockOut{}, nil
		}
		return lockOut{token: h.Token}, nil
	}
}
