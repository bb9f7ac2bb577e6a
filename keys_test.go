package lease_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

func TestPutMovesAKeyBetweenLeases(t *testing.T) {
	s, _ := newService(t)
	a := grant(t, s, lease.Operation, time.Minute)
	b := grant(t, s, lease.Operation, time.Minute)
	require.NoError(t, s.Put(ctx, "k", []byte("1"), a.ID))
	require.NoError(t, s.Put(ctx, "shared", nil, a.ID))
	require.NoError(t, s.Put(ctx, "k", []byte("2"), b.ID))

	la, err := s.Info(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"shared"}, la.Keys)
	lb, err := s.Info(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"k"}, lb.Keys)

	revoked, err := s.Revoke(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"shared"}, revoked.Keys, "Revoke returns exactly the keys it deleted")
	v, id, ok := mustGet(t, s, "k")
	require.True(t, ok, "a moved key is not deleted with its old lease")
	require.Equal(t, b.ID, id)
	require.Equal(t, []byte("2"), v)

	require.NoError(t, s.Put(ctx, "k", []byte("3"), 0))
	lb, err = s.Info(ctx, b.ID)
	require.NoError(t, err)
	require.Empty(t, lb.Keys, "Put with id 0 detaches the key")
	revoked, err = s.Revoke(ctx, b.ID)
	require.NoError(t, err)
	require.Empty(t, revoked.Keys)
	_, id, ok = mustGet(t, s, "k")
	require.True(t, ok)
	require.Zero(t, id)
}

func TestKeysAreSortedAndDeletedWithTheirLease(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	for _, k := range []string{"c", "a", "b"} {
		require.NoError(t, s.Put(ctx, k, nil, l.ID))
	}
	require.NoError(t, s.Put(ctx, "free", nil, 0))
	info, err := s.Info(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, info.Keys)

	deleted, found := s.Delete(ctx, "b")
	require.NoError(t, found)
	require.True(t, deleted)
	clk.Advance(time.Minute)
	require.Equal(t, []lease.KeyValue{{Key: "free"}}, mustScan(t, s, "", 0))
}

func TestValuesAreCopied(t *testing.T) {
	s, _ := newService(t)
	v := []byte("abc")
	require.NoError(t, s.Put(ctx, "k", v, 0))
	v[0] = 'X'
	got, _, _ := mustGet(t, s, "k")
	require.Equal(t, []byte("abc"), got)
	got[1] = 'Y'
	again, _, _ := mustGet(t, s, "k")
	require.Equal(t, []byte("abc"), again)
	scanned := mustScan(t, s, "k", 0)
	scanned[0].Value[2] = 'Z'
	again, _, _ = mustGet(t, s, "k")
	require.Equal(t, []byte("abc"), again)

	l := grant(t, s, lease.Operation, time.Minute)
	require.NoError(t, s.Put(ctx, "x", nil, l.ID))
	info, err := s.Info(ctx, l.ID)
	require.NoError(t, err)
	info.Keys[0] = "mutated"
	info, err = s.Info(ctx, l.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, info.Keys, "a Lease is a snapshot")
}

func TestScan(t *testing.T) {
	s, _ := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	for _, k := range []string{"b/2", "a/1", "b/1", "b", "c/1", "b/3"} {
		require.NoError(t, s.Put(ctx, k, []byte(k), l.ID))
	}
	keys := func(kvs []lease.KeyValue) []string {
		var out []string
		for _, kv := range kvs {
			require.Equal(t, kv.Key, string(kv.Value))
			require.Equal(t, l.ID, kv.LeaseID)
			out = append(out, kv.Key)
		}
		return out
	}
	tests := []struct {
		prefix string
		limit  int
		want   []string
	}{
		{"b/", 0, []string{"b/1", "b/2", "b/3"}},
		{"b", 0, []string{"b", "b/1", "b/2", "b/3"}},
		{"b/", 2, []string{"b/1", "b/2"}},
		{"", 0, []string{"a/1", "b", "b/1", "b/2", "b/3", "c/1"}},
		{"", -1, []string{"a/1", "b", "b/1", "b/2", "b/3", "c/1"}},
		{"d", 0, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q limit %d", tc.prefix, tc.limit), func(t *testing.T) {
			require.Equal(t, tc.want, keys(mustScan(t, s, tc.prefix, tc.limit)))
		})
	}
}

// TestKeysVanishAtomically has readers scan a lease's keys while the lease
// expires or is revoked: every scan sees all of them or none.
func TestKeysVanishAtomically(t *testing.T) {
	const keysPerLease = 50
	s, clk := newService(t)
	var sealed atomic.Int64 // the round whose keys are all in place
	sealed.Store(-1)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				round := sealed.Load()
				if round < 0 {
					continue
				}
				if n := len(mustScan(t, s, fmt.Sprintf("lease/%04d/", round), 0)); n != 0 && n != keysPerLease {
					t.Errorf("round %d: saw %d keys: a lease's keys vanished partly", round, n)
					return
				}
			}
		}()
	}
	for round := range 200 {
		l := grant(t, s, lease.Operation, time.Second)
		for k := range keysPerLease {
			require.NoError(t, s.Put(ctx, fmt.Sprintf("lease/%04d/%03d", round, k), nil, l.ID))
		}
		sealed.Store(int64(round))
		if round%2 == 0 {
			clk.Advance(time.Second)
		} else {
			_, err := s.Revoke(ctx, l.ID)
			require.NoError(t, err)
		}
	}
	close(done)
	wg.Wait()
	require.Empty(t, mustScan(t, s, "", 0))
}
