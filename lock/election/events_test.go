package election_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

func TestObserverSeesLeaderChanges(t *testing.T) {
	var mu sync.Mutex
	var got []election.Event
	obs := election.ObserverFunc(func(e election.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
	})
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	el, err := election.New(lease.Must(lock.NewMemory(svc)), "scheduler", election.WithObserver(obs))
	require.NoError(t, err)

	alice, err := el.Campaign(ctx, []byte("alice"))
	require.NoError(t, err)
	require.NoError(t, alice.Resign(ctx))
	bob, err := el.Campaign(ctx, []byte("bob"))
	require.NoError(t, err)
	require.NoError(t, bob.Resign(ctx))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 4)
	assert.Equal(t, election.Event{Kind: election.EventElected, Election: "scheduler",
		Leader: election.Leader{Value: []byte("alice"), Token: alice.Token()}}, got[0])
	assert.Equal(t, election.EventDeposed, got[1].Kind)
	assert.ErrorIs(t, got[1].Cause, election.ErrResigned)
	assert.Equal(t, "bob", string(got[2].Leader.Value))
	assert.Greater(t, got[2].Leader.Token, got[0].Leader.Token)
	assert.Equal(t, "deposed", got[3].Kind.String())
	assert.Equal(t, "EventKind(7)", election.EventKind(7).String())
}

// TestJoinedObserverPanicIsReported: an observer joined by lease.Observers
// that panics is reported by the Election's panic policy as Callback
// "observer", and the others still see every event.
func TestJoinedObserverPanicIsReported(t *testing.T) {
	var mu sync.Mutex
	var panics []*lease.PanicError
	var got []election.EventKind
	seen := election.ObserverFunc(func(e election.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Kind)
	})
	bad := lease.ObserverFunc[election.Event](func(election.Event) { panic("observer failed") })
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	el, err := election.New(lease.Must(lock.NewMemory(svc)), "scheduler",
		election.WithObserver(lease.Observers(bad, seen)),
		lease.WithPanicHandler(func(p *lease.PanicError) { mu.Lock(); panics = append(panics, p); mu.Unlock() }))
	require.NoError(t, err)

	alice, err := el.Campaign(ctx, []byte("alice"))
	require.NoError(t, err)
	require.NoError(t, alice.Resign(ctx))

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []election.EventKind{election.EventElected, election.EventDeposed}, got)
	require.Len(t, panics, 2)
	for _, p := range panics {
		assert.Equal(t, "observer", p.Callback)
	}
}

// TestCampaignReturnsAfterTheElectedEvent: the elected event is told
// before Campaign returns, so an observer never learns of a leader after
// the leader began to act. The observer holds the event until released;
// while it does, Campaign has not returned.
func TestCampaignReturnsAfterTheElectedEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		obs := election.ObserverFunc(func(e election.Event) {
			if e.Kind == election.EventElected {
				<-release
			}
		})
		svc := lease.Must(lease.New())
		defer svc.Close()
		el, err := election.New(lease.Must(lock.NewMemory(svc)), "scheduler", election.WithObserver(obs))
		require.NoError(t, err)

		returned := make(chan *election.Leadership)
		go func() {
			ld, err := el.Campaign(context.Background(), []byte("alice"))
			assert.NoError(t, err)
			returned <- ld
		}()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("Campaign returned before its elected event was told")
		default:
		}
		close(release)
		ld := <-returned
		require.NoError(t, ld.Resign(context.Background()))
	})
}
