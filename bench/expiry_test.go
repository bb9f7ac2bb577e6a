package bench

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expiry scenarios at tiny sizes. Peers on the Go clock run in a
// synctest bubble, so waiting for deadlines takes no real time; etcd's
// lessor reads the clock in ways a bubble does not cover (bbolt, its ticker
// and its file lock), so it runs on the real clock with its 2 s minimum TTL.
func inTime(t *testing.T, p Peer, f func(t *testing.T)) {
	t.Helper()
	if p.Key == "etcd" {
		t.Parallel()
		f(t)
		return
	}
	synctest.Test(t, f)
}

func TestExpireBurst(t *testing.T) {
	cfg := Tiny()
	for _, c := range peerCases() {
		for _, keys := range []int{0, 1} {
			t.Run(c.peer.Name+map[int]string{0: "", 1: "/keyed"}[keys], func(t *testing.T) {
				inTime(t, c.peer, func(t *testing.T) {
					s, err := RunExpireBurst(c.peer, cfg.Size(ExpireBurst, c.peer), keys)
					if keys > 0 && !c.keyed {
						require.ErrorIs(t, err, ErrNotSupported)
						return
					}
					require.NoError(t, err)
					assert.GreaterOrEqual(t, s[TotalMs], 0.0)
					if keys > 0 {
						require.Contains(t, s, CallP99, "a call on a live lease during the burst")
						assert.LessOrEqual(t, s[CallP99], s[CallMax])
					} else {
						assert.NotContains(t, s, CallP99)
					}
				})
			})
		}
	}
}

func TestExpiryLag(t *testing.T) {
	cfg := Tiny()
	for _, c := range peerCases() {
		t.Run(c.peer.Name, func(t *testing.T) {
			inTime(t, c.peer, func(t *testing.T) {
				s, err := RunExpiryLag(c.peer, cfg.Size(ExpiryLag, c.peer), cfg.LagTTL, cfg.LagSpread, cfg.Load())
				if !c.expirer {
					require.ErrorIs(t, err, ErrNotSupported)
					return
				}
				require.NoError(t, err)
				assert.LessOrEqual(t, s[LagP50], s[LagP99])
				assert.LessOrEqual(t, s[LagP99], s[LagMax])
				assert.GreaterOrEqual(t, s[LagP50], 0.0, "no lease ends before its deadline")
			})
		})
	}
}

func TestMemory(t *testing.T) {
	for _, c := range peerCases() {
		t.Run(c.peer.Name, func(t *testing.T) {
			s, l, ids, err := RunMemory(c.peer, 100, 2)
			if !c.keyed {
				require.ErrorIs(t, err, ErrNotSupported)
				return
			}
			require.NoError(t, err)
			defer l.Close()
			assert.Len(t, ids, 100)
			assert.Positive(t, s[BytesLease])
		})
	}
}

func TestPercentileAndMedian(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want float64
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {1, 10}, {0, 1}} {
		assert.Equal(t, tc.want, percentile(sorted, tc.q), "q=%v", tc.q)
	}
	assert.Equal(t, 0.0, percentile(nil, 0.5))
	assert.Equal(t, 3.0, median([]float64{5, 1, 3}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, Sample{NsPerOp: 2}, medianSample([]Sample{{NsPerOp: 3}, {NsPerOp: 1}, {NsPerOp: 2}}))
	assert.Nil(t, medianSample(nil))
}

func TestConfigSize(t *testing.T) {
	cfg := Full()
	assert.Equal(t, 1_000_000, cfg.Size(ExpireBurst, OursPeer()))
	assert.Equal(t, 10_000, cfg.Size(ExpireBurst, EtcdPeer()))
	assert.Equal(t, 2_000, cfg.Size(ExpiryLag, EtcdPeer()))
	assert.Equal(t, 100_000, cfg.Size(ExpiryLag, TTLCachePeer()))
	assert.Equal(t, 0, cfg.Size(GrantRevoke, OursPeer()))
	assert.Equal(t, 200_000, cfg.Size(MemoryKeyed, EtcdPeer()))
	assert.Equal(t, 1_000_000, cfg.Size(MemoryKeyed, OursPeer()))
}

func TestMemoryChurn(t *testing.T) {
	cfg := Tiny()
	for _, c := range peerCases() {
		t.Run(c.peer.Name, func(t *testing.T) {
			s, err := RunMemoryChurn(c.peer, cfg.Size(MemoryChurn, c.peer))
			require.NoError(t, err)
			assert.Contains(t, s, BytesLease)
		})
	}
}
