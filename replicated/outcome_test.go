package replicated

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// Writers on every node of a three-node cluster on TCP grant leases while
// leadership is handed from node to node under them. No call whose
// context is alive gets an error: a write raft refuses while a transfer is
// under way goes to the next leader, and one whose leader lost leadership
// while committing it is settled by the node; every grant acknowledged is
// in the cluster exactly once.
func TestWritesAcrossLeadershipTransfers(t *testing.T) {
	c := newCluster(t, clusterOpts{size: 3, stores: boltStores, transport: tcpTransport, insecure: true, raft: patientRaft})
	ctx := ctxT(t)
	c.leader()
	const writers = 24
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		mu      sync.Mutex
		granted = map[lease.ID]int{}
		errs    []error
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := c.nodes[w%3]
			for !stop.Load() {
				l, err := n.Grant(ctx, "h", lease.Operation, time.Hour)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					granted[l.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	uncertain := func() (sum int64) {
		for _, n := range c.nodes {
			sum += n.uncertainEntries.Load()
		}
		return sum
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(granted) + len(errs)
	}
	for i := range 10 {
		// Let the writers fill the pipeline again before the next move.
		for before := count(); count() < before+200; {
			runtime.Gosched()
		}
		l := c.leader()
		err := c.nodes[l].TransferLeadership(ctx, "")
		if err != nil {
			t.Logf("transfer %d: %v", i, err)
		}
		c.leaderOtherThan(l)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("entries settled after a lost leadership: %d; grants: %d; errors: %d", uncertain(), len(granted), len(errs))
	require.Zero(t, len(errs), "errors, the first: %v", errs[:min(len(errs), 3)])

	list, err := c.nodes[c.leader()].List(ctx)
	require.NoError(t, err)
	assert.Len(t, list, len(granted), "every grant acknowledged, and nothing else, is in the cluster")
	for id, times := range granted {
		assert.Equal(t, 1, times, "lease %d acknowledged twice", id)
	}
}

// A write whose outcome the node could not settle before the caller's
// context ended gets ErrOutcomeUnknown: a *lease.Error with
// CodeOutcomeUnknown that also matches raft's ErrLeadershipLost and the
// context's error.
func TestOutcomeUnknownError(t *testing.T) {
	err := outcomeUnknown("grant", context.DeadlineExceeded)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, CodeOutcomeUnknown, le.Code)
	assert.Equal(t, "replicated", le.Package)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "[LS_OUTCOME_UNKNOWN]")
}

// gatedLog is a log store whose appends of commands can be held, after
// or instead of storing them, while a test moves the cluster around them.
type gatedLog struct {
	raft.LogStore
	mu      sync.Mutex
	mode    gateMode
	holding chan struct{} // closed when an append is held
	release chan struct{} // closed to let it go
}

type gateMode int

const (
	gateOpen   gateMode = iota
	gateStore           // store the entries, then hold the append
	gateRefuse          // hold the append, then refuse it
)

func (g *gatedLog) arm(mode gateMode) {
	g.mu.Lock()
	g.mode, g.holding, g.release = mode, make(chan struct{}), make(chan struct{})
	g.mu.Unlock()
}

// open lets a held append go and opens the gate.
func (g *gatedLog) open() {
	g.mu.Lock()
	g.mode = gateOpen
	close(g.release)
	g.mu.Unlock()
}

var errGateRefused = errors.New("the test refused this append")

func (g *gatedLog) StoreLogs(logs []*raft.Log) error {
	g.mu.Lock()
	mode, holding, release := g.mode, g.holding, g.release
	commands := slices.ContainsFunc(logs, func(l *raft.Log) bool { return len(l.Extensions) > 0 })
	if mode != gateOpen && commands {
		g.mode = gateOpen // hold one append only
	}
	g.mu.Unlock()
	if mode == gateOpen || !commands {
		return g.LogStore.StoreLogs(logs)
	}
	var err error
	if mode == gateStore {
		err = g.LogStore.StoreLogs(logs)
	}
	close(holding)
	<-release
	if mode == gateRefuse {
		return errGateRefused
	}
	return err
}

func (g *gatedLog) StoreLog(l *raft.Log) error { return g.StoreLogs([]*raft.Log{l}) }

// newGatedCluster is a three-node cluster (raft's in-memory transport,
// whose heartbeats wait in line behind a held append) whose log stores
// the test holds.
func newGatedCluster(t *testing.T) (*cluster, []*gatedLog) {
	gates := make([]*gatedLog, 3)
	c := newCluster(t, clusterOpts{size: 3, stores: memStores, transport: inmemTransport, raft: patientRaft,
		wrapLog: func(i int, s raft.LogStore) raft.LogStore {
			gates[i] = &gatedLog{LogStore: s}
			return gates[i]
		}})
	c.leader()
	return c, gates
}

// holdFollowers makes both followers of leader l hold the next append of
// commands (storing it first when mode says so), runs write on l, waits
// until l's raft gives the entry up (leadership lost while committing it:
// the followers answer nothing, heartbeats included), then lets the
// followers go. It returns write's outcome.
func holdFollowers[T any](t *testing.T, c *cluster, gates []*gatedLog, mode gateMode, write func(n *Node) (T, error)) (T, error) {
	l := c.leader()
	var followers []*gatedLog
	for i, g := range gates {
		if i != l {
			g.arm(mode)
			followers = append(followers, g)
		}
	}
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := write(c.nodes[l])
		done <- answer{v, err}
	}()
	for _, g := range followers {
		select {
		case <-g.holding:
		case <-time.After(waitLimit):
			t.Fatal("the followers never got the entry")
		}
	}
	deadline := time.After(waitLimit)
	for c.nodes[l].uncertainEntries.Load() == 0 {
		select {
		case <-deadline:
			t.Fatal("the leader kept its place")
		case <-c.changes():
		case <-time.After(10 * time.Millisecond):
		}
	}
	for _, g := range followers {
		g.open()
	}
	select {
	case a := <-done:
		return a.v, a.err
	case <-time.After(waitLimit):
		t.Fatal("the write never returned")
		panic("unreachable")
	}
}

// A write whose leader lost leadership while committing it, and which the
// next leader committed (both followers stored it), returns its real
// result: the lease it granted, which the cluster has, once.
func TestUncertainWriteCommittedByTheNextLeader(t *testing.T) {
	c, gates := newGatedCluster(t)
	ctx := ctxT(t)
	l, err := holdFollowers(t, c, gates, gateStore, func(n *Node) (lease.Lease, error) {
		return n.Grant(ctx, "h", lease.Operation, time.Hour)
	})
	require.NoError(t, err)
	list, err := c.nodes[c.leader()].List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, l.ID, list[0].ID)
}

// A write whose leader lost leadership while committing it, and which no
// follower stored, is dropped by the next leader: the node says so with a
// NotLeaderError (nothing was applied; the cluster has no such lease).
// (When the old leader wins the election, it commits the write itself,
// and the call returns its result.)
func TestUncertainWriteDroppedByTheNextLeader(t *testing.T) {
	c, gates := newGatedCluster(t)
	ctx := ctxT(t)
	_, err := holdFollowers(t, c, gates, gateRefuse, func(n *Node) (lease.Lease, error) {
		return n.Grant(ctx, "h", lease.Operation, time.Hour)
	})
	want := 1 // the old leader won the election and committed it
	if err != nil {
		require.ErrorIs(t, err, ErrNotLeader, "a dropped write is reported as never applied")
		want = 0
	}
	list, lerr := c.nodes[c.leader()].List(ctx)
	require.NoError(t, lerr)
	require.Len(t, list, want)
	// Either way the cluster takes writes, and has each once.
	nl := c.leader()
	_, err = c.nodes[nl].Grant(ctx, "h", lease.Operation, time.Hour)
	require.NoError(t, err)
}

// A write whose outcome is still unknown when the caller's context ends
// gets ErrOutcomeUnknown, which also matches the context's error.
func TestUncertainWriteContextEnds(t *testing.T) {
	c, gates := newGatedCluster(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	l := c.leader()
	for i, g := range gates {
		if i != l {
			g.arm(gateStore)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.nodes[l].Grant(ctx, "h", lease.Operation, time.Hour)
		done <- err
	}()
	deadline := time.After(waitLimit)
	for c.nodes[l].uncertainEntries.Load() == 0 {
		select {
		case <-deadline:
			t.Fatal("the leader kept its place")
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	err := <-done
	for i, g := range gates {
		if i != l {
			g.open()
		}
	}
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.ErrorIs(t, err, context.Canceled)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, CodeOutcomeUnknown, le.Code)
}

// A claim store call takes the same path: an Enqueue whose leader lost
// leadership while committing it, and which the next leader committed,
// returns the items it enqueued, which the cluster has once.
func TestUncertainClaimCallCommittedByTheNextLeader(t *testing.T) {
	c, gates := newGatedCluster(t)
	ctx := ctxT(t)
	items, err := holdFollowers(t, c, gates, gateStore, func(n *Node) ([]claim.Item, error) {
		s, err := NewClaimStore(n)
		if err != nil {
			return nil, err
		}
		defer func() { _ = s.Close() }()
		return s.Enqueue(ctx, []claim.NewItem{{Queue: "q", MaxAttempts: 1}})
	})
	require.NoError(t, err)
	require.Len(t, items, 1)
	s, err := NewClaimStore(c.nodes[c.leader()])
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	counts, err := s.Counts(ctx, "q")
	require.NoError(t, err)
	assert.Equal(t, 1, counts.Visible, "%+v", counts)
	got, err := s.Lookup(ctx, items[0].ID)
	require.NoError(t, err)
	assert.Equal(t, items[0].ID, got.ID)
}
