package lease_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

func TestExpiryIsExactAtTheBoundary(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 10*time.Second)
	require.NoError(t, s.Put(ctx, "k", []byte("v"), l.ID))
	require.Equal(t, t0.Add(10*time.Second), l.ExpiresAt)

	clk.Advance(10*time.Second - time.Nanosecond)
	_, err := s.Use(ctx, l.ID, lease.Operation)
	require.NoError(t, err, "active one nanosecond before ExpiresAt")
	_, _, found := mustGet(t, s, "k")
	require.True(t, found)

	clk.Advance(time.Nanosecond)
	_, err = s.Use(ctx, l.ID, lease.Operation)
	requireCode(t, err, lease.CodeStaleUse, lease.ErrStaleUse)
	_, _, found = mustGet(t, s, "k")
	require.False(t, found, "expired at now == ExpiresAt")
}

// TestExpiryWithoutTimer checks that no call observes an expired lease or its
// keys as present even though no timer ever fires.
func TestExpiryWithoutTimer(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	var expired []lease.ID
	s := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk))))
	onExpired(s, func(l lease.Lease) { expired = append(expired, l.ID) })
	defer s.Close()
	a := grant(t, s, lease.Operation, time.Second)
	b := grant(t, s, lease.Operation, time.Hour)
	require.NoError(t, s.Put(ctx, "a/1", nil, a.ID))
	require.NoError(t, s.Put(ctx, "b/1", nil, b.ID))

	clk.Set(t0.Add(time.Second))
	checks := map[string]func() any{
		"Info":        func() any { _, err := s.Info(ctx, a.ID); return lease.CodeOf(err) },
		"ActiveCount": func() any { return s.ActiveCount() },
		"List":        func() any { return len(mustList(t, s)) },
		"Get":         func() any { _, _, ok := mustGet(t, s, "a/1"); return ok },
		"Scan":        func() any { return len(mustScan(t, s, "a/", 0)) },
	}
	want := map[string]any{"Info": lease.CodeExpired, "ActiveCount": 1, "List": 1, "Get": false, "Scan": 0}
	for name, check := range checks {
		require.Equal(t, want[name], check(), name)
	}
	require.Equal(t, []lease.ID{a.ID}, expired, "the expiry hook ran on the next call")
}

func TestOneTimerForTheEarliestDeadline(t *testing.T) {
	s, clk := newService(t)
	for i := range 100 {
		grant(t, s, lease.Operation, time.Duration(100-i)*time.Second)
	}
	require.Equal(t, 1, clk.Pending(), "one timer, however many leases")
	next, ok := clk.NextDeadline()
	require.True(t, ok)
	require.Equal(t, t0.Add(time.Second), next, "armed for the earliest deadline")

	clk.Advance(50 * time.Second)
	require.Equal(t, 50, s.ActiveCount())
	require.Equal(t, 1, clk.Pending())
	next, _ = clk.NextDeadline()
	require.Equal(t, t0.Add(51*time.Second), next)
}

// TestHooksRunInDeadlineOrder grants leases out of deadline order and checks
// that expiry hooks and ending subscribers see them by deadline, ties by ID.
func TestHooksRunInDeadlineOrder(t *testing.T) {
	var hooked, subscribed []lease.ID
	s, clk := newService(t)
	onExpired(s, func(l lease.Lease) { hooked = append(hooked, l.ID) })
	stop := s.OnEnd(func(l lease.Lease, r lease.EndReason) {
		require.Equal(t, lease.EndExpired, r)
		subscribed = append(subscribed, l.ID)
	})
	defer stop()
	ttls := []time.Duration{5, 3, 9, 3, 1, 7, 5}
	ids := make([]lease.ID, len(ttls))
	for i, ttl := range ttls {
		ids[i] = grant(t, s, lease.Operation, ttl*time.Second).ID
	}
	clk.Advance(10 * time.Second)
	want := []lease.ID{ids[4], ids[1], ids[3], ids[0], ids[6], ids[5], ids[2]}
	require.Equal(t, want, hooked)
	require.Equal(t, want, subscribed)
}

func TestOnEndReportsReasonAndDeletedKeys(t *testing.T) {
	type ending struct {
		id     lease.ID
		reason lease.EndReason
		keys   []string
	}
	var got []ending
	s, clk := newService(t)
	stop := s.OnEnd(func(l lease.Lease, r lease.EndReason) { got = append(got, ending{l.ID, r, l.Keys}) })
	a := grant(t, s, lease.Operation, time.Second)
	b := grant(t, s, lease.Operation, time.Minute)
	require.NoError(t, s.Put(ctx, "a", nil, a.ID))
	require.NoError(t, s.Put(ctx, "b2", nil, b.ID))
	require.NoError(t, s.Put(ctx, "b1", nil, b.ID))
	clk.Advance(time.Second)
	_, err := s.Revoke(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, []ending{{a.ID, lease.EndExpired, []string{"a"}}, {b.ID, lease.EndRevoked, []string{"b1", "b2"}}}, got)

	stop()
	c := grant(t, s, lease.Operation, time.Second)
	_, err = s.Revoke(ctx, c.ID)
	require.NoError(t, err)
	require.Len(t, got, 2, "no calls after stop")
}

func TestEndedRecordIsBounded(t *testing.T) {
	s, clk := newService(t, lease.WithEndedCapacity(2))
	revoked := grant(t, s, lease.Operation, time.Hour)
	_, err := s.Revoke(ctx, revoked.ID)
	require.NoError(t, err)
	_, err = s.Renew(ctx, revoked.ID)
	requireCode(t, err, lease.CodeAlreadyRevoked, lease.ErrAlreadyRevoked)

	// Two more endings evict the revoked lease from the record.
	for range 2 {
		grant(t, s, lease.Operation, time.Second)
	}
	clk.Advance(time.Second)

	_, err = s.Renew(ctx, revoked.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
	_, err = s.Info(ctx, revoked.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
	_, err = s.Use(ctx, revoked.ID, lease.Operation)
	requireCode(t, err, lease.CodeStaleUse, lease.ErrStaleUse)
	_, err = s.Revoke(ctx, revoked.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
	_, err = s.Info(ctx, revoked.ID+3)
	requireCode(t, err, lease.CodeNotFound, lease.ErrNotFound)
	_, err = s.Info(ctx, 0)
	requireCode(t, err, lease.CodeNotFound, lease.ErrNotFound)
}

func TestEndedRecordOfZero(t *testing.T) {
	s, _ := newService(t, lease.WithEndedCapacity(0))
	l := grant(t, s, lease.Operation, time.Hour)
	_, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	_, err = s.Revoke(ctx, l.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
}

// TestRevisionGrowsOnEveryStateChange walks through each kind of change.
func TestRevisionGrowsOnEveryStateChange(t *testing.T) {
	s, clk := newService(t)
	rev := s.Revision()
	step := func(name string, changes bool, f func()) {
		t.Helper()
		f()
		if changes {
			require.Greater(t, s.Revision(), rev, name)
		} else {
			require.Equal(t, rev, s.Revision(), name)
		}
		rev = s.Revision()
	}
	var l lease.Lease
	step("grant", true, func() { l = grant(t, s, lease.Operation, time.Minute) })
	require.Equal(t, rev, l.Revision, "a lease records the revision of its grant")
	step("renew", true, func() { _, _ = s.Renew(ctx, l.ID) })
	step("use", false, func() { _, _ = s.Use(ctx, l.ID, lease.Operation) })
	step("info", false, func() { _, _ = s.Info(ctx, l.ID) })
	step("put", true, func() { require.NoError(t, s.Put(ctx, "k", nil, l.ID)) })
	step("get", false, func() { mustGet(t, s, "k") })
	step("delete", true, func() { _, _ = s.Delete(ctx, "k") })
	step("delete absent", false, func() { _, _ = s.Delete(ctx, "k") })
	step("refused renew", false, func() { _, _ = s.Renew(ctx, 99) })
	step("expire", true, func() { clk.Advance(time.Minute) })
	step("grant again", true, func() { l = grant(t, s, lease.Operation, time.Minute) })
	step("revoke", true, func() { _, _ = s.Revoke(ctx, l.ID) })
}

func TestIDsIncrease(t *testing.T) {
	s, _ := newService(t)
	var last lease.ID
	for range 10 {
		l := grant(t, s, lease.Operation, time.Minute)
		require.Greater(t, l.ID, last)
		last = l.ID
		_, err := s.Revoke(ctx, l.ID)
		require.NoError(t, err)
	}
}

func TestRenewExtendsFromNow(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.StateWrite, 10*time.Second)
	clk.Advance(4 * time.Second)
	r, err := s.Renew(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, t0.Add(14*time.Second), r.ExpiresAt)
	require.Equal(t, t0.Add(4*time.Second), r.RenewedAt)
	require.Equal(t, t0, r.GrantedAt)
	require.Equal(t, l.Revision, r.Revision)
	require.Equal(t, 6*time.Second, l.Remaining(clk.Now()))
	require.Equal(t, 10*time.Second, r.Remaining(clk.Now()))

	r, err = s.RenewTTL(ctx, l.ID, 2*time.Second)
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, r.TTL)
	require.Equal(t, t0.Add(6*time.Second), r.ExpiresAt, "a shorter TTL moves the deadline earlier")
	clk.Advance(2 * time.Second)
	_, err = s.Info(ctx, l.ID)
	requireCode(t, err, lease.CodeExpired, lease.ErrExpired)
}

func TestGrantWithKeyIsCreateIfAbsent(t *testing.T) {
	s, clk := newService(t)
	a, err := s.GrantWithKey(ctx, "a", lease.Operation, time.Second, "lock/x", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, []string{"lock/x"}, a.Keys)

	rev := s.Revision()
	_, err = s.GrantWithKey(ctx, "b", lease.Operation, time.Second, "lock/x", []byte("b"))
	requireCode(t, err, lease.CodeKeyExists, lease.ErrKeyExists)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, a.ID, le.LeaseID, "the error names the holder's lease")
	require.Equal(t, rev, s.Revision())
	require.Equal(t, 1, s.ActiveCount())

	clk.Advance(time.Second)
	b, err := s.GrantWithKey(ctx, "b", lease.Operation, time.Second, "lock/x", []byte("b"))
	require.NoError(t, err, "free once the holder's lease expired")
	require.Greater(t, b.Revision, a.Revision)
	v, id, ok := mustGet(t, s, "lock/x")
	require.True(t, ok)
	require.Equal(t, b.ID, id)
	require.Equal(t, []byte("b"), v)

	require.NoError(t, s.Put(ctx, "plain", nil, 0))
	_, err = s.GrantWithKey(ctx, "c", lease.Operation, time.Second, "plain", nil)
	require.ErrorAs(t, err, &le)
	require.Zero(t, le.LeaseID, "a key on no lease is present too")
}

// backwardsClock is set by hand and steps back when told; its timers never
// fire.
type backwardsClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *backwardsClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *backwardsClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *backwardsClock) AfterFunc(time.Duration, func()) lease.Timer { return noTimer{} }

type noTimer struct{}

func (noTimer) Stop() bool { return true }

func TestTimeNeverRunsBackwards(t *testing.T) {
	clk := &backwardsClock{now: t0}
	s := lease.Must(lease.New(lease.WithClock(clk)))
	defer s.Close()
	clk.set(t0.Add(10 * time.Second))
	l := grant(t, s, lease.Operation, 5*time.Second)
	clk.set(t0) // the clock steps back
	r, err := s.Renew(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, l.ExpiresAt, r.ExpiresAt, "renewal uses the latest time seen, not the earlier one")
}

// TestBurstOfExpiriesIsSettledInBatches expires more leases at one instant
// than the timer settles at a time: hooks still see them all, in deadline
// order, and a call made from a hook between batches already sees every
// due lease gone.
func TestBurstOfExpiriesIsSettledInBatches(t *testing.T) {
	const n = 3000
	var s *lease.Service
	var ended []lease.Lease
	s, clk := newService(t)
	onExpired(s, func(l lease.Lease) {
		ended = append(ended, l)
		require.Zero(t, s.ActiveCount(), "a call between batches settles the rest")
	})
	for range n {
		grant(t, s, lease.Operation, time.Second) // all due at one instant
	}
	clk.Advance(time.Second)
	require.Len(t, ended, n)
	for i := 1; i < n; i++ {
		require.Less(t, ended[i-1].ID, ended[i].ID, "equal deadlines end in ID order")
	}
}
