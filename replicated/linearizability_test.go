package replicated

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// The model: leases whose TTLs outlast the test, so none expires and the
// state is which IDs were issued and which were revoked. A client does not
// know an operation's instant, so time plays no part.

type lkind uint8

const (
	kGrant lkind = iota
	kRenew
	kRevoke
	kInfo
)

type linInput struct {
	kind lkind
	id   lease.ID // renew, revoke, info
}

type linOutput struct {
	unknown bool // the outcome is unknown: the call may or may not have taken effect
	id      lease.ID
	code    lease.Code // "" for success
}

// linState is immutable: status[i] is lease i+1's state, 'a' active or 'r'
// revoked.
type linState struct{ status string }

func (s linState) step(in linInput, out linOutput) (bool, linState) {
	n := lease.ID(len(s.status))
	switch in.kind {
	case kGrant:
		return out.code == "" && out.id == n+1, linState{s.status + "a"}
	default:
		var want lease.Code
		switch {
		case in.id == 0 || in.id > n:
			want = lease.CodeNotFound
		case s.status[in.id-1] == 'r':
			want = lease.CodeAlreadyRevoked
		}
		if out.code != want || (want == "" && out.id != in.id) {
			return false, s
		}
		if in.kind == kRevoke && want == "" {
			b := []byte(s.status)
			b[in.id-1] = 'r'
			return true, linState{string(b)}
		}
		return true, s
	}
}

var leaseModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{linState{}} },
	Step: func(state, input, output interface{}) []interface{} {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		if out.unknown {
			// Either it never took effect, or it did with some outcome.
			next := []interface{}{s}
			switch in.kind {
			case kGrant:
				next = append(next, linState{s.status + "a"})
			case kRevoke:
				if in.id > 0 && int(in.id) <= len(s.status) && s.status[in.id-1] == 'a' {
					b := []byte(s.status)
					b[in.id-1] = 'r'
					next = append(next, linState{string(b)})
				}
			}
			return next
		}
		ok, nextState := s.step(in, out)
		if !ok {
			return nil
		}
		return []interface{}{nextState}
	},
	Equal: func(a, b interface{}) bool { return a.(linState) == b.(linState) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(linInput), output.(linOutput)
		return fmt.Sprintf("%v(%d) -> %+v", in.kind, in.id, out)
	},
	DescribeState: func(state interface{}) string { return strings.Clone(state.(linState).status) },
}

// Grants, renewals, revocations and linearizable reads from four clients,
// across the loss of the leader, form a linearizable history.
func TestLinearizableAcrossFailover(t *testing.T) {
	c := newCluster(t, clusterOpts{})
	first := c.leader()
	const clients, opsPerClient = 4, 40
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		issued  []lease.ID
		done    atomic.Int64
		start   = time.Now()
	)
	now := func() int64 { return int64(time.Since(start)) }
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(cl), 1))
			for range opsPerClient {
				in := linInput{kind: kGrant}
				if r := rng.IntN(10); r >= 4 {
					in.kind = []lkind{kRenew, kRevoke, kInfo}[r%3]
					mu.Lock()
					if len(issued) > 0 && rng.IntN(8) > 0 {
						in.id = issued[rng.IntN(len(issued))]
					} else {
						in.id = lease.ID(rng.IntN(100) + 1) // perhaps never issued
					}
					mu.Unlock()
				}
				call := now()
				out := runLin(t, c, in)
				ret := now()
				if out.unknown {
					ret = math.MaxInt64
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
				if in.kind == kGrant && !out.unknown {
					issued = append(issued, out.id)
				}
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
	model := leaseModel.ToModel()
	require.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(model, history, 20*time.Second), "history of %d operations", len(history))
	t.Logf("%d operations, linearizable", len(history))

	// The check has teeth: a grant answering an ID out of turn is caught.
	for i, op := range history {
		if out := op.Output.(linOutput); op.Input.(linInput).kind == kGrant && !out.unknown {
			out.id += 1000
			history[i].Output = out
			break
		}
	}
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(model, history, 20*time.Second))
}

func (k lkind) String() string { return [...]string{"grant", "renew", "revoke", "info"}[k] }

// runLin runs one operation on whichever node leads, retrying where it is
// sure the operation did not take effect (no leader, or not the leader).
func runLin(t *testing.T, c *cluster, in linInput) linOutput {
	deadline := time.After(waitLimit)
	for {
		changed := c.changes()
		for i := range c.nodes {
			n := c.node(i)
			if n == nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			var (
				l   lease.Lease
				err error
			)
			switch in.kind {
			case kGrant:
				l, err = n.Grant(ctx, "client", lease.Operation, time.Hour)
			case kRenew:
				l, err = n.Renew(ctx, in.id)
			case kRevoke:
				l, err = n.Revoke(ctx, in.id)
			case kInfo:
				l, err = n.Info(ctx, in.id)
			}
			cancel()
			if errors.Is(err, ErrNotLeader) {
				continue // it never entered the log
			}
			var le *lease.Error
			switch {
			case err == nil:
				return linOutput{id: l.ID}
			case errors.As(err, &le) && le.Code != lease.CodeClosed:
				return linOutput{code: le.Code}
			default: // leadership lost, node closed, timed out
				return linOutput{unknown: true}
			}
		}
		select {
		case <-changed:
		case <-deadline:
			require.FailNow(t, "no leader took the operation")
		}
	}
}
