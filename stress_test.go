package lease_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The stress tests run random operations from several goroutines while
// another advances a FakeClock in small steps, then check the service's
// invariants once everything is quiet. They are bounded in operations, and
// a guard timer turns a deadlock into a failure instead of a hang.

const stressGuard = 30 * time.Second

// stressLedger records what the stress goroutines and the hooks observed.
type stressLedger struct {
	t  *testing.T
	mu sync.Mutex

	granted []lease.ID // every ID issued, for picking and for the final check
	ends    map[lease.ID]int
	reasons map[lease.ID]lease.EndReason
	endKeys map[lease.ID][]string
	// onExpire counts the expiry subscriber's calls; lastExpiry is the ExpiresAt of
	// the latest expiry seen by each hook, which must never go back.
	onExpire     map[lease.ID]int
	lastExpiry   [2]time.Time // 0: OnEnd, 1: the expiry subscriber
	revokedKeys  map[lease.ID][]string
	revokeCalled map[lease.ID]bool
}

func newStressLedger(t *testing.T) *stressLedger {
	return &stressLedger{
		t:            t,
		ends:         map[lease.ID]int{},
		reasons:      map[lease.ID]lease.EndReason{},
		endKeys:      map[lease.ID][]string{},
		onExpire:     map[lease.ID]int{},
		revokedKeys:  map[lease.ID][]string{},
		revokeCalled: map[lease.ID]bool{},
	}
}

func (g *stressLedger) addGranted(id lease.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.granted = append(g.granted, id)
}

// pick returns a random issued ID, or 0 when there is none yet.
func (g *stressLedger) pick(r *rand.Rand) lease.ID {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.granted) == 0 {
		return 0
	}
	return g.granted[r.IntN(len(g.granted))]
}

func (g *stressLedger) revoked(l lease.Lease) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revokeCalled[l.ID] {
		g.t.Errorf("lease %d revoked twice", l.ID)
	}
	g.revokeCalled[l.ID] = true
	g.revokedKeys[l.ID] = l.Keys
}

// expiryOrder checks that hook i sees expiries in non-decreasing ExpiresAt.
func (g *stressLedger) expiryOrder(i int, l lease.Lease) {
	if l.ExpiresAt.Before(g.lastExpiry[i]) {
		g.t.Errorf("hook %d: lease %d expiring at %v reported after one expiring at %v", i, l.ID, l.ExpiresAt, g.lastExpiry[i])
	}
	g.lastExpiry[i] = l.ExpiresAt
}

// onEnd is the OnEnd subscriber.
func (g *stressLedger) onEnd(l lease.Lease, reason lease.EndReason) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ends[l.ID]++
	if g.ends[l.ID] > 1 {
		g.t.Errorf("lease %d ended %d times", l.ID, g.ends[l.ID])
	}
	g.reasons[l.ID] = reason
	g.endKeys[l.ID] = l.Keys
	if reason == lease.EndExpired {
		g.expiryOrder(0, l)
	}
}

// expireHook is the expiry subscriber (onExpired).
func (g *stressLedger) expireHook(l lease.Lease) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.onExpire[l.ID]++
	g.expiryOrder(1, l)
}

// check verifies the invariants on a quiet service.
func (g *stressLedger) check(t *testing.T, s *lease.Service) {
	t.Helper()
	// Read the service before taking g.mu: a call may settle an expiry,
	// whose hooks take g.mu.
	list := mustList(t, s)
	count := s.ActiveCount()
	kvs := mustScan(t, s, "", 0)
	g.mu.Lock()
	defer g.mu.Unlock()

	require.Equal(t, count, len(list), "ActiveCount == len(List())")
	active := map[lease.ID]lease.Lease{}
	for i, l := range list {
		if i > 0 {
			require.Less(t, list[i-1].ID, l.ID, "List is ordered by ID")
		}
		active[l.ID] = l
	}

	for _, id := range g.granted {
		_, live := active[id]
		switch n := g.ends[id]; {
		case n > 1:
			t.Errorf("lease %d ended %d times", id, n)
		case n == 0 && !live:
			t.Errorf("lease %d is neither active nor ended", id)
		case n == 1 && live:
			t.Errorf("lease %d is listed but ended as %s", id, g.reasons[id])
		}
		expired := g.ends[id] == 1 && g.reasons[id] == lease.EndExpired
		if want := map[bool]int{true: 1, false: 0}[expired]; g.onExpire[id] != want {
			t.Errorf("lease %d: expiry subscriber called %d times, want %d", id, g.onExpire[id], want)
		}
		if g.revokeCalled[id] {
			assert.Equal(t, lease.EndRevoked, g.reasons[id], "lease %d", id)
			assert.Equal(t, g.revokedKeys[id], g.endKeys[id], "lease %d: OnEnd's keys are the keys Revoke deleted", id)
		}
	}
	require.Len(t, active, len(list))

	byLease := map[lease.ID][]string{}
	for _, kv := range kvs {
		if kv.LeaseID == 0 {
			continue
		}
		if _, ok := active[kv.LeaseID]; !ok {
			t.Errorf("key %q attached to lease %d, which is not active", kv.Key, kv.LeaseID)
		}
		byLease[kv.LeaseID] = append(byLease[kv.LeaseID], kv.Key)
	}
	for _, l := range list {
		assert.Equal(t, byLease[l.ID], l.Keys, "lease %d: its keys are the keys Scan shows attached to it", l.ID)
	}
}

// stressCode fails the test unless err is nil or carries one of codes.
func stressCode(t *testing.T, op string, err error, codes ...lease.Code) {
	if err != nil && !slices.Contains(codes, lease.CodeOf(err)) {
		t.Errorf("%s: unexpected error %v", op, err)
	}
}

// runGuarded runs f and fails the test if it has not returned within the
// guard time, which in these tests can only mean a deadlock. f runs on
// another goroutine, so it must report failures with t.Errorf, not require.
func runGuarded(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	guard := time.NewTimer(stressGuard)
	defer guard.Stop()
	select {
	case <-done:
	case <-guard.C:
		t.Fatalf("not done after %v: deadlock", stressGuard)
	}
}

// tick advances clk in small steps until stop is closed, checking that the
// revision it reads never decreases.
func tick(t *testing.T, s *lease.Service, clk *leasetest.FakeClock, stop <-chan struct{}) {
	var rev int64
	for {
		select {
		case <-stop:
			return
		default:
		}
		clk.Advance(2 * time.Millisecond)
		if r := s.Revision(); r < rev {
			t.Errorf("clock goroutine: revision went from %d to %d", rev, r)
		} else {
			rev = r
		}
	}
}

// stressWorker runs ops random operations on s.
func stressWorker(t *testing.T, s *lease.Service, g *stressLedger, w, ops int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(w)))
	holder := fmt.Sprintf("w%d", w)
	purposes := []lease.Purpose{lease.Operation, lease.StateWrite, lease.MigrationHandoff}
	var (
		rev, grantRev int64
		lastID        lease.ID
		keepAlives    []context.CancelFunc
	)
	defer func() {
		for _, cancel := range keepAlives {
			cancel()
		}
	}()
	key := func() string { return fmt.Sprintf("k/%02d", r.IntN(24)) }
	gone := []lease.Code{lease.CodeExpired, lease.CodeAlreadyRevoked}
	for range ops {
		op := r.IntN(10)
		id := g.pick(r)
		if id == 0 && (op >= 2 && op <= 4 || op == 8) {
			op = 0 // nothing granted yet
		}
		switch op {
		case 0, 1:
			ttl := time.Duration(3+r.IntN(40)) * time.Millisecond
			l, err := s.Grant(ctx, holder, purposes[r.IntN(3)], ttl)
			if err != nil {
				t.Errorf("grant: %v", err)
				continue
			}
			if l.ID <= lastID || l.Revision <= grantRev {
				t.Errorf("%s: grant gave ID %d revision %d after ID %d revision %d", holder, l.ID, l.Revision, lastID, grantRev)
			}
			lastID, grantRev = l.ID, l.Revision
			g.addGranted(l.ID)
			if r.IntN(2) == 0 {
				stressCode(t, "put", s.Put(ctx, key(), []byte(holder), l.ID), gone...)
			}
		case 2:
			_, err := s.Renew(ctx, id)
			stressCode(t, "renew", err, gone...)
		case 3:
			_, err := s.Use(ctx, id, purposes[r.IntN(3)])
			stressCode(t, "use", err, lease.CodePurposeMismatch, lease.CodeStaleUse)
		case 4:
			l, err := s.Revoke(ctx, id)
			stressCode(t, "revoke", err, gone...)
			if err == nil {
				g.revoked(l)
			}
		case 5:
			if r.IntN(4) == 0 {
				id = 0 // a key of no lease
			}
			stressCode(t, "put", s.Put(ctx, key(), []byte(holder), id), gone...)
		case 6:
			_, err := s.Delete(ctx, key())
			stressCode(t, "delete", err)
		case 7:
			_, _, _ = mustGet(t, s, key())
			kvs := mustScan(t, s, "k/", 1+r.IntN(8))
			if !slices.IsSortedFunc(kvs, func(a, b lease.KeyValue) int { return strings.Compare(a.Key, b.Key) }) {
				t.Errorf("scan out of order: %v", kvs)
			}
		case 8:
			parent, cancel := context.WithCancel(ctx)
			if _, err := s.KeepAlive(parent, id); err != nil {
				cancel()
				stressCode(t, "keepalive", err, gone...)
				continue
			}
			keepAlives = append(keepAlives, cancel)
		case 9:
			if len(keepAlives) > 0 {
				i := r.IntN(len(keepAlives))
				keepAlives[i]()
				keepAlives = slices.Delete(keepAlives, i, i+1)
			}
		}
		if got := s.Revision(); got < rev {
			t.Errorf("%s: revision went from %d to %d", holder, rev, got)
		} else {
			rev = got
		}
	}
}

// sameDecision reports whether a and b are the same decision.
func sameDecision(a, b lease.Decision) bool {
	ta, tb := a.Timestamp, b.Timestamp
	a.Timestamp, b.Timestamp = time.Time{}, time.Time{}
	return a == b && ta.Equal(tb)
}

// runStress runs the workers and the clock goroutine to completion, then
// waits until the service is quiet. It must run in a synctest bubble: a
// cancelled keep-alive lets go of its lease on a goroutine of its own, which
// may settle expiries and deliver their notifications after the workers
// have returned, and only the bubble can tell when that has finished.
func runStress(t *testing.T, s *lease.Service, clk *leasetest.FakeClock, g *stressLedger, workers, ops int, seed uint64) {
	t.Helper()
	runGuarded(t, func() {
		stop := make(chan struct{})
		var clock, wg sync.WaitGroup
		clock.Go(func() { tick(t, s, clk, stop) })
		for w := range workers {
			wg.Go(func() { stressWorker(t, s, g, w, ops, seed) })
		}
		wg.Wait()
		close(stop)
		clock.Wait()
	})
	synctest.Wait()
}

// revokeAll ends every active lease so each granted lease has ended.
func revokeAll(t *testing.T, s *lease.Service, g *stressLedger) {
	t.Helper()
	for _, l := range mustList(t, s) {
		ended, err := s.Revoke(ctx, l.ID)
		require.NoError(t, err)
		g.revoked(ended)
	}
	require.Zero(t, s.ActiveCount())
	for _, kv := range mustScan(t, s, "", 0) {
		require.Zero(t, kv.LeaseID, "key %q outlived its lease", kv.Key)
	}
}

func TestStressConcurrentOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			workers = 4
			ops     = 2500
			seed    = 20260101
		)
		g := newStressLedger(t)
		log := &auditLog{}
		s, clk := newService(t, lease.WithEndedCapacity(16),
			lease.WithAuditCapacity(1<<16), auditFunc(log.sink),
			// Room for every decision: the check below wants them all
			// in the sink, however far behind its delivery runs.
			lease.WithObserverBuffer(1<<16))
		onExpired(s, g.expireHook)
		defer s.OnEnd(g.onEnd)()

		runStress(t, s, clk, g, workers, ops, seed)
		g.check(t, s)

		// The sink saw the decisions in the order the service made them: the
		// order Audit keeps, in which time and revision never go back.
		trail, sunk := s.Audit(), log.all()
		require.Less(t, len(sunk), 1<<16, "the ring kept every decision")
		require.Len(t, trail, len(sunk))
		for i, d := range trail {
			// Compared one by one: a diff of thousands of decisions is slow.
			if !sameDecision(d, sunk[i]) {
				t.Fatalf("decision %d: Audit has %+v, the sink got %+v", i, d, sunk[i])
			}
			if i == 0 {
				continue
			}
			prev := trail[i-1]
			if d.Timestamp.Before(prev.Timestamp) || d.Revision < prev.Revision {
				t.Fatalf("decision %d (%s of lease %d at %v, revision %d) goes back from decision %d (%s of lease %d at %v, revision %d)",
					i, d.Action, d.LeaseID, d.Timestamp, d.Revision, i-1, prev.Action, prev.LeaseID, prev.Timestamp, prev.Revision)
			}
		}
		g.mu.Lock()
		granted, expired := len(g.granted), len(g.onExpire)
		g.mu.Unlock()
		require.Positive(t, expired, "some leases expired during the run")
		t.Logf("%d leases granted, %d expired, %d active at the end", granted, expired, s.ActiveCount())

		revokeAll(t, s, g)
		g.check(t, s)
	})
}

// TestStressReentrantHooks runs hooks and a sink that call back into the
// service (granting, revoking, putting) while workers operate.
func TestStressReentrantHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			workers = 3
			ops     = 600
			seed    = 7
		)
		g := newStressLedger(t)
		var (
			s      *lease.Service
			budget atomic.Int64 // bounds the chain of hook-made changes
			rmu    sync.Mutex
			rr     = rand.New(rand.NewPCG(seed, 99))
		)
		const reactions = 400
		budget.Store(reactions)
		pick := func() lease.ID {
			rmu.Lock()
			defer rmu.Unlock()
			return g.pick(rr)
		}
		react := func(id lease.ID) {
			if budget.Add(-1) < 0 {
				return
			}
			l, err := s.Grant(ctx, "hook", lease.Operation, 5*time.Millisecond)
			if err != nil {
				t.Errorf("grant from hook: %v", err)
				return
			}
			g.addGranted(l.ID)
			stressCode(t, "put from hook", s.Put(ctx, fmt.Sprintf("k/%02d", id%24), nil, l.ID), lease.CodeExpired, lease.CodeAlreadyRevoked)
			stressCode(t, "put from hook", s.Put(ctx, "hook/free", nil, 0))
			ended, err := s.Revoke(ctx, pick())
			stressCode(t, "revoke from hook", err, lease.CodeExpired, lease.CodeAlreadyRevoked)
			if err == nil {
				g.revoked(ended)
			}
			_ = s.Audit()
		}
		s, clk := newService(t,
			lease.WithEndedCapacity(32),
			lease.WithAuditCapacity(256),
			auditFunc(func(d lease.Decision) {
				_, _ = s.Info(ctx, d.LeaseID)
				_, _, _ = mustGet(t, s, "hook/free")
				_ = s.ActiveCount()
			}),
		)
		onExpired(s, func(l lease.Lease) {
			g.expireHook(l)
			react(l.ID)
		})
		defer s.OnEnd(func(l lease.Lease, reason lease.EndReason) {
			g.onEnd(l, reason)
			if reason == lease.EndRevoked {
				react(l.ID)
			}
		})()

		runStress(t, s, clk, g, workers, ops, seed)
		require.Less(t, budget.Load(), int64(reactions-50), "the hooks called back into the service")
		g.check(t, s)
		budget.Store(-reactions) // no new leases from the hooks while revoking all
		revokeAll(t, s, g)
		g.check(t, s)
	})
}
