package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peerCase is what the tests know of each peer's semantics.
type peerCase struct {
	peer          Peer
	reportsUnkown bool // Renew and Revoke of an unknown lease fail
	keyed         bool
	concurrent    bool
	expirer       bool
}

func peerCases() []peerCase {
	return []peerCase{
		{OursPeer(), true, true, true, true},
		{EtcdPeer(), true, true, true, true},
		{TTLCachePeer(), false, false, true, true},
		{BaselinePeer(), true, false, false, false},
		{TimersPeer(), true, false, true, true},
		{TimerLoopPeer(), true, false, true, true},
	}
}

func newPeer(t *testing.T, p Peer) Leaser {
	t.Helper()
	l, err := p.New()
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l.Close()) })
	return l
}

func TestAdapterCapabilities(t *testing.T) {
	for _, c := range peerCases() {
		t.Run(c.peer.Name, func(t *testing.T) {
			l := newPeer(t, c.peer)
			_, keyed := l.(Keyed)
			_, expirer := l.(Expirer)
			assert.Equal(t, c.keyed, keyed, "Keyed")
			assert.Equal(t, c.expirer, expirer, "Expirer")
			assert.Equal(t, c.concurrent, Concurrent(l), "Concurrent")
		})
	}
}

func TestAdapterGrantRenewRevoke(t *testing.T) {
	const ttl = time.Hour
	for _, c := range peerCases() {
		t.Run(c.peer.Name, func(t *testing.T) {
			l := newPeer(t, c.peer)
			before := time.Now()
			a, err := l.Grant(ttl)
			require.NoError(t, err)
			b, err := l.Grant(ttl)
			require.NoError(t, err)
			assert.NotEqual(t, a, b, "IDs are unique")
			assert.Equal(t, ID(1), a, "IDs start at 1")

			dl, err := l.Deadline(a)
			require.NoError(t, err)
			assert.False(t, dl.Before(before.Add(ttl)), "deadline %v is before grant+TTL", dl)

			require.NoError(t, l.Renew(a))
			renewed, err := l.Deadline(a)
			require.NoError(t, err)
			assert.False(t, renewed.Before(dl), "renew moved the deadline back")

			require.NoError(t, l.Revoke(a))
			_, err = l.Deadline(a)
			require.ErrorIs(t, err, ErrUnknown, "a revoked lease is gone")
			_, err = l.Deadline(b)
			require.NoError(t, err, "revoking a leaves b")

			if c.reportsUnkown {
				assert.Error(t, l.Revoke(a), "second revoke")
				assert.Error(t, l.Renew(a), "renew after revoke")
				assert.Error(t, l.Renew(999), "renew of an ID never issued")
			} else {
				assert.NoError(t, l.Revoke(a), "ttlcache ignores unknown keys")
			}
		})
	}
}

func TestAdapterRevokeDeletesKeys(t *testing.T) {
	for _, c := range peerCases() {
		if !c.keyed {
			continue
		}
		t.Run(c.peer.Name, func(t *testing.T) {
			l := newPeer(t, c.peer)
			k := l.(Keyed)
			a, err := l.Grant(time.Hour)
			require.NoError(t, err)
			b, err := l.Grant(time.Hour)
			require.NoError(t, err)
			require.NoError(t, attachRevoke(l.(KeyedLeaser)), "scenario 3's op")
			require.NoError(t, k.Attach(a, "x", keyValue))
			require.NoError(t, k.Attach(b, "y", keyValue))

			holder, ok := k.Holder("x")
			require.True(t, ok)
			assert.Equal(t, a, holder)

			require.NoError(t, l.Revoke(a))
			_, ok = k.Holder("x")
			assert.False(t, ok, "x went with its lease")
			holder, ok = k.Holder("y")
			assert.True(t, ok, "y stays with b")
			assert.Equal(t, b, holder)
			for _, name := range keyNames {
				_, ok := k.Holder(name)
				assert.False(t, ok, "%s went with scenario 3's lease", name)
			}
			assert.Error(t, k.Attach(a, "z", keyValue), "attach to a revoked lease")
		})
	}
}

func TestBaselineSweep(t *testing.T) {
	b := NewBaseline()
	start := time.Now()
	short, err := b.Grant(time.Minute)
	require.NoError(t, err)
	long, err := b.Grant(time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 0, b.Sweep(start), "nothing due yet")
	assert.Equal(t, 1, b.Sweep(start.Add(30*time.Minute)))
	_, err = b.Deadline(short)
	require.ErrorIs(t, err, ErrUnknown)
	_, err = b.Deadline(long)
	require.NoError(t, err)
	assert.Equal(t, 1, b.Sweep(start.Add(2*time.Hour)))
}
