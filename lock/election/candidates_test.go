package election_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Candidates lists the campaigns waiting behind the leader, with their
// values, next in line first.
func TestCandidates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		e, err := election.New(lease.Must(lock.NewMemory(svc)), "leader")
		require.NoError(t, err)
		ctx := t.Context()
		ld, err := e.Campaign(ctx, []byte("node-a"))
		require.NoError(t, err)
		start := time.Now()
		waitCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := e.Campaign(waitCtx, []byte("node-b"))
			done <- err
		}()
		synctest.Wait()
		got, err := e.Candidates(ctx, 0)
		require.NoError(t, err)
		assert.Equal(t, []election.Candidate{{Value: []byte("node-b"), Since: start}}, got)
		cancel()
		require.Error(t, <-done)
		require.NoError(t, ld.Resign(ctx))
	})
}

// A provider that cannot list its waiters gets bad input naming it.
func TestCandidatesUnsupported(t *testing.T) {
	svc := lease.Must(lease.New())
	defer svc.Close()
	m := lease.Must(lock.NewMemory(svc))
	e, err := election.New(struct {
		lockprovider.Waiter
		holders
	}{m, m}, "leader")
	require.NoError(t, err)
	_, err = e.Candidates(context.Background(), 0)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "provider", le.Field)
}

// holders are the methods of a lockprovider.Inspector, to embed beside a
// lockprovider.Waiter (both embed lockprovider.Provider).
type holders interface {
	Holder(ctx context.Context, name string) (lock.Holding, bool, error)
	Held(ctx context.Context, prefix string, limit int) ([]lock.Holding, error)
}
