package lease_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// statsPurpose is a purpose defined after the services of the tests below
// exist, so that their counts must grow to hold it.
var statsPurpose = lease.MustPurpose("stats_test_purpose")

func TestStats(t *testing.T) {
	op, sw := lease.Operation, lease.StateWrite
	for _, tc := range []struct {
		name string
		// run acts on a fresh service on a fake clock, and returns the
		// service Stats is asked (another one for Restore).
		run  func(t *testing.T, s *lease.Service, clk *leasetest.FakeClock) *lease.Service
		want lease.Stats
	}{{
		name: "nothing",
		run:  func(_ *testing.T, s *lease.Service, _ *leasetest.FakeClock) *lease.Service { return s },
	}, {
		name: "grants by purpose",
		run: func(t *testing.T, s *lease.Service, _ *leasetest.FakeClock) *lease.Service {
			grant(t, s, sw, time.Minute)
			grant(t, s, op, time.Minute)
			grant(t, s, op, time.Minute)
			_, err := s.GrantWithKey(ctx, "holder", statsPurpose, time.Minute, "k", nil)
			require.NoError(t, err)
			return s
		},
		want: lease.Stats{Live: 4, Granted: 4, Purposes: []lease.PurposeStats{
			{Purpose: op, Live: 2, Granted: 2},
			{Purpose: sw, Live: 1, Granted: 1},
			{Purpose: statsPurpose, Live: 1, Granted: 1},
		}},
	}, {
		name: "renewals by Renew, RenewTTL and KeepAlive",
		run: func(t *testing.T, s *lease.Service, _ *leasetest.FakeClock) *lease.Service {
			l := grant(t, s, op, time.Minute)
			_, err := s.Renew(ctx, l.ID)
			require.NoError(t, err)
			_, err = s.RenewTTL(ctx, l.ID, time.Hour)
			require.NoError(t, err)
			_, err = s.KeepAlive(ctx, l.ID)
			require.NoError(t, err)
			return s
		},
		want: lease.Stats{Live: 1, Granted: 1, Renewed: 3, Purposes: []lease.PurposeStats{
			{Purpose: op, Live: 1, Granted: 1, Renewed: 3},
		}},
	}, {
		name: "keep-alive renewals",
		run: func(t *testing.T, s *lease.Service, clk *leasetest.FakeClock) *lease.Service {
			l := grant(t, s, sw, 3*time.Second)
			_, err := s.KeepAlive(ctx, l.ID) // renewed now, then every second
			require.NoError(t, err)
			clk.Advance(3500 * time.Millisecond) // renewed at 1s, 2s and 3s
			return s
		},
		want: lease.Stats{Live: 1, Granted: 1, Renewed: 4, Purposes: []lease.PurposeStats{
			{Purpose: sw, Live: 1, Granted: 1, Renewed: 4},
		}},
	}, {
		name: "revocations",
		run: func(t *testing.T, s *lease.Service, _ *leasetest.FakeClock) *lease.Service {
			a := grant(t, s, op, time.Minute)
			grant(t, s, op, time.Minute)
			c := grant(t, s, sw, time.Minute)
			for _, id := range []lease.ID{a.ID, c.ID} {
				_, err := s.Revoke(ctx, id)
				require.NoError(t, err)
			}
			return s
		},
		want: lease.Stats{Live: 1, Granted: 3, Revoked: 2, Purposes: []lease.PurposeStats{
			{Purpose: op, Live: 1, Granted: 2, Revoked: 1},
			{Purpose: sw, Granted: 1, Revoked: 1},
		}},
	}, {
		name: "expiries, and a keep-alive stopped",
		run: func(t *testing.T, s *lease.Service, clk *leasetest.FakeClock) *lease.Service {
			grant(t, s, op, time.Second)
			grant(t, s, op, time.Hour)
			l := grant(t, s, sw, 3*time.Second)
			kctx, cancel := context.WithCancel(ctx)
			_, err := s.KeepAlive(kctx, l.ID)
			require.NoError(t, err)
			clk.Advance(1500 * time.Millisecond) // the first expires; the keep-alive renews once
			cancel()
			clk.Advance(10 * time.Second) // the kept-alive lease expires
			return s
		},
		want: lease.Stats{Live: 1, Granted: 3, Renewed: 2, Expired: 2, Purposes: []lease.PurposeStats{
			{Purpose: op, Live: 1, Granted: 2, Expired: 1},
			{Purpose: sw, Granted: 1, Renewed: 2, Expired: 1},
		}},
	}, {
		name: "refusals are not counted",
		run: func(t *testing.T, s *lease.Service, _ *leasetest.FakeClock) *lease.Service {
			l, err := s.GrantWithKey(ctx, "holder", op, time.Minute, "k", nil)
			require.NoError(t, err)
			_, err = s.GrantWithKey(ctx, "holder", op, time.Minute, "k", nil)
			requireCode(t, err, lease.CodeKeyExists, lease.ErrKeyExists)
			_, err = s.Use(ctx, l.ID, sw)
			requireCode(t, err, lease.CodePurposeMismatch, lease.ErrPurposeMismatch)
			_, err = s.Renew(ctx, l.ID+1)
			requireCode(t, err, lease.CodeNotFound, lease.ErrNotFound)
			_, err = s.Revoke(ctx, l.ID)
			require.NoError(t, err)
			_, err = s.Revoke(ctx, l.ID)
			requireCode(t, err, lease.CodeAlreadyRevoked, lease.ErrAlreadyRevoked)
			return s
		},
		want: lease.Stats{Granted: 1, Revoked: 1, Purposes: []lease.PurposeStats{
			{Purpose: op, Granted: 1, Revoked: 1},
		}},
	}, {
		name: "restore counts from the live set",
		run: func(t *testing.T, s *lease.Service, clk *leasetest.FakeClock) *lease.Service {
			grant(t, s, op, time.Minute)
			grant(t, s, op, time.Minute)
			l := grant(t, s, sw, time.Minute)
			_, err := s.Revoke(ctx, l.ID)
			require.NoError(t, err)
			grant(t, s, sw, time.Second)
			clk.Advance(time.Second) // expired before the snapshot
			sn, err := s.Snapshot()
			require.NoError(t, err)
			r, err := lease.Restore(sn, lease.WithClock(clk))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, r.Close()) })
			grant(t, r, statsPurpose, time.Minute)
			return r
		},
		want: lease.Stats{Live: 3, Granted: 1, Purposes: []lease.PurposeStats{
			{Purpose: op, Live: 2},
			{Purpose: statsPurpose, Live: 1, Granted: 1},
		}},
	}, {
		name: "closed: the totals stay, no lease is live",
		run: func(t *testing.T, s *lease.Service, _ *leasetest.FakeClock) *lease.Service {
			l := grant(t, s, op, time.Minute)
			grant(t, s, op, time.Minute)
			_, err := s.Renew(ctx, l.ID)
			require.NoError(t, err)
			_, err = s.Revoke(ctx, l.ID)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			return s
		},
		want: lease.Stats{Granted: 2, Renewed: 1, Revoked: 1, Purposes: []lease.PurposeStats{
			{Purpose: op, Granted: 2, Renewed: 1, Revoked: 1},
		}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newService(t)
			s = tc.run(t, s, clk)
			got := s.Stats()
			assert.Equal(t, tc.want, got)
			assert.Equal(t, s.ActiveCount(), got.Live)
		})
	}
}

// A lease due but not yet expired by the timer is expired by Stats, as by
// any call: no call sees it live past its expiry.
func TestStatsSettlesWhatIsDue(t *testing.T) {
	clk := leasetest.NewFakeClock(t0)
	var ended []lease.ID
	s := lease.Must(lease.New(lease.WithClock(leasetest.Stalled(clk))))
	onExpired(s, func(l lease.Lease) { ended = append(ended, l.ID) })
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	l := grant(t, s, lease.Operation, time.Second)
	clk.Advance(time.Second)
	assert.Equal(t, lease.Stats{Expired: 1, Granted: 1, Purposes: []lease.PurposeStats{
		{Purpose: lease.Operation, Granted: 1, Expired: 1},
	}}, s.Stats())
	assert.Equal(t, []lease.ID{l.ID}, ended) // delivered before Stats returned
}

// Stats returns a copy: changing it changes nothing in the service.
func TestStatsAliasesNothing(t *testing.T) {
	s, _ := newService(t)
	grant(t, s, lease.Operation, time.Minute)
	st := s.Stats()
	st.Purposes[0].Granted = 99
	st.Purposes = append(st.Purposes[:0], lease.PurposeStats{Purpose: lease.StateWrite})
	assert.Equal(t, lease.Stats{Live: 1, Granted: 1, Purposes: []lease.PurposeStats{
		{Purpose: lease.Operation, Live: 1, Granted: 1},
	}}, s.Stats())
}

// Stats may be read while other goroutines decide; the totals come out
// exact.
func TestStatsConcurrentWithDecisions(t *testing.T) {
	s, _ := newService(t)
	const workers, each = 4, 50
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last lease.Stats
		for range 100 {
			st := s.Stats()
			assert.GreaterOrEqual(t, st.Granted, last.Granted)
			assert.GreaterOrEqual(t, st.Revoked, last.Revoked)
			last = st
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				l, err := s.Grant(ctx, "holder", lease.Operation, time.Minute)
				if !assert.NoError(t, err) {
					return
				}
				_, err = s.Revoke(ctx, l.ID)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	<-done
	assert.Equal(t, lease.Stats{Granted: workers * each, Revoked: workers * each, Purposes: []lease.PurposeStats{
		{Purpose: lease.Operation, Granted: workers * each, Revoked: workers * each},
	}}, s.Stats())
}

func ExampleService_Stats() {
	clock := leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	defer svc.Close()

	ctx := context.Background()
	a, _ := svc.Grant(ctx, "worker-1", lease.Operation, time.Minute)
	_, _ = svc.Grant(ctx, "worker-2", lease.Operation, time.Second)
	_, _ = svc.Grant(ctx, "writer", lease.StateWrite, time.Minute)
	_, _ = svc.Renew(ctx, a.ID)
	clock.Advance(time.Second)

	for _, p := range svc.Stats().Purposes {
		fmt.Printf("%s: live %d, granted %d, renewed %d, expired %d\n", p.Purpose, p.Live, p.Granted, p.Renewed, p.Expired)
	}
	// Output:
	// operation: live 1, granted 2, renewed 1, expired 1
	// state_write: live 1, granted 1, renewed 0, expired 0
}
