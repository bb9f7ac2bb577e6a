package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// seenWithin bounds, in real time, the wait for a change a watch reports
// at once.
const seenWithin = 5 * time.Second

// nextLeader returns the next leader ch delivers, failing the test if none
// comes within seenWithin.
func nextLeader(t *testing.T, ch <-chan election.Leader) election.Leader {
	t.Helper()
	select {
	case l, ok := <-ch:
		require.True(t, ok, "the channel closed")
		return l
	case <-time.After(seenWithin):
		t.Fatalf("no leader within %v", seenWithin)
		return election.Leader{}
	}
}

// Observe follows a watch: each change of leader arrives as etcd writes
// it, though the poll interval is an hour, so no poll could have seen it.
func TestObserveFollowsAWatch(t *testing.T) {
	el, err := election.New(newTestProvider(t), "e", election.WithLeaseDuration(time.Minute), election.WithPollInterval(time.Hour))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := el.Observe(ctx)
	require.NoError(t, err)

	a, err := el.Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	got := nextLeader(t, ch)
	assert.Equal(t, []byte("a"), got.Value)
	assert.Equal(t, a.Token(), got.Token)

	won := make(chan *election.Leadership, 1)
	go func() {
		b, err := el.Campaign(ctx, []byte("b"))
		assert.NoError(t, err)
		won <- b
	}()
	require.NoError(t, a.Resign(ctx))
	got = nextLeader(t, ch)
	b := <-won
	require.NotNil(t, b)
	assert.Equal(t, []byte("b"), got.Value)
	assert.Equal(t, b.Token(), got.Token)
	require.NoError(t, b.Resign(ctx))

	cancel()
	for range ch { // closed once the watch has ended
	}
}

// An Observe whose context ends leaves no watch behind: on a client of its
// own, still open, every goroutine the Observe started has ended.
func TestObserveLeaksNoWatch(t *testing.T) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{testEndpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer client.Close()
	p, err := New(client, WithPrefix("test/"+t.Name()+"/"))
	require.NoError(t, err)
	ctx := context.Background()
	_, err = client.Get(ctx, "warm-up") // the connection's goroutines are the client's
	require.NoError(t, err)
	el, err := election.New(p, "e", election.WithLeaseDuration(time.Minute), election.WithPollInterval(time.Hour))
	require.NoError(t, err)
	ld, err := el.Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	defer ld.Resign(ctx)
	before := goleak.IgnoreCurrent()

	octx, cancel := context.WithCancel(ctx)
	ch, err := el.Observe(octx)
	require.NoError(t, err)
	assert.Equal(t, []byte("a"), nextLeader(t, ch).Value)
	cancel()
	for range ch {
	}
	goleak.VerifyNone(t, before)
}

// WatchHolder refuses bad input before sending anything.
func TestWatchHolderRefusesBadInput(t *testing.T) {
	p := newTestProvider(t)
	err := p.WatchHolder(context.Background(), "", func(lock.Holding) {})
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
	err = p.WatchHolder(context.Background(), "x", nil)
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
}
