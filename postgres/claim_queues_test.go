package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

// A pause holds in every process on the table, and a resume in one wakes
// the waiters of another at once, with no poll.
func TestClaimStorePauseAcrossProcesses(t *testing.T) {
	s := newTestClaimStore(t)
	other := secondStore(t, s, "lease-claims-other", WithPoll(time.Hour))
	enqueue(t, s, item("q", "a"))
	require.NoError(t, s.Pause(ctx, "q"))
	assert.Empty(t, claimN(t, other, "q", "w", 10), "paused in the other process too")
	enqueue(t, other, item("q", "b"))
	assert.Equal(t, claim.Counts{Visible: 2}, counts(t, other, "q"), "enqueue goes on while paused")

	ready, stop := other.Notify("q")
	<-ready // the listener's start
	stop()
	ready, stop = other.Notify("q")
	defer stop()
	require.NoError(t, s.Resume(ctx, "q"))
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("Resume did not wake the other process's waiter")
	}
	assert.Len(t, claimN(t, other, "q", "w", 10), 2)
	infos, err := other.Queues(ctx, claim.QueueQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.Equal(t, claim.QueueInfo{Name: "q", Counts: claim.Counts{Claimed: 2}}, infos[0])
}
