package lease_test

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// bigService returns a service with n live leases of TTLs spread over an
// hour, every fourth one holding a key.
func bigService(b *testing.B, n int) (*lease.Service, *leasetest.FakeClock) {
	clk := leasetest.NewFakeClock(t0)
	s := lease.Must(lease.New(lease.WithClock(clk)))
	b.Cleanup(func() { _ = s.Close() })
	for i := range n {
		ttl := time.Minute + time.Duration(i%3600)*time.Second
		if i%4 == 0 {
			_, err := s.GrantWithKey(ctx, "holder", lease.Operation, ttl, "key/"+strconv.Itoa(i), []byte("value"))
			require.NoError(b, err)
		} else {
			_, err := s.Grant(ctx, "holder", lease.Operation, ttl)
			require.NoError(b, err)
		}
	}
	return s, clk
}

// BenchmarkSnapshot1M takes a snapshot of a million leases (a quarter with
// a key) and writes it to memory.
func BenchmarkSnapshot1M(b *testing.B) {
	s, _ := bigService(b, 1_000_000)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		sn, err := s.Snapshot()
		require.NoError(b, err)
		_, err = sn.WriteTo(&buf)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(buf.Len()), "bytes")
}

// BenchmarkRestore1M reads a snapshot of a million leases and restores it.
func BenchmarkRestore1M(b *testing.B) {
	s, clk := bigService(b, 1_000_000)
	sn, err := s.Snapshot()
	require.NoError(b, err)
	var buf bytes.Buffer
	_, err = sn.WriteTo(&buf)
	require.NoError(b, err)
	require.NoError(b, s.Close())
	data := buf.Bytes()
	b.ReportAllocs()
	for b.Loop() {
		back, err := lease.ReadSnapshot(bytes.NewReader(data))
		require.NoError(b, err)
		r, err := lease.Restore(back, lease.WithClock(leasetest.NewFakeClock(clk.Now())))
		require.NoError(b, err)
		b.StopTimer()
		require.Equal(b, 1_000_000, r.ActiveCount())
		require.NoError(b, r.Close())
		b.StartTimer()
	}
}
