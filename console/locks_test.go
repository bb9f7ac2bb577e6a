package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/console"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// The locks page shows who waits for each lock and who waits to lead.
func TestLocksPageShowsWaitersAndCandidates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := lease.Must(lease.New())
		defer svc.Close()
		locks := lease.Must(lock.NewMemory(svc))
		ctx := t.Context()
		held, err := locks.Acquire(ctx, "nightly", "exec-1", time.Minute)
		require.NoError(t, err)
		el, err := election.New(locks, "scheduler")
		require.NoError(t, err)
		ld, err := el.Campaign(ctx, []byte("node-a"))
		require.NoError(t, err)

		waitCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{}, 2)
		go func() {
			_, _ = locks.AcquireWait(waitCtx, "nightly", "exec-2", time.Minute)
			done <- struct{}{}
		}()
		go func() {
			_, _ = el.Campaign(waitCtx, []byte("node-b"))
			done <- struct{}{}
		}()
		synctest.Wait()
		<-time.After(5 * time.Second)

		h := lease.Must(console.New(console.Config{Service: svc, Locks: locks, Elections: []*election.Election{el}}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/locks?format=json", nil))
		require.Equal(t, http.StatusOK, w.Code)
		var p console.LocksPage
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
		var nightly console.LockRow
		for _, l := range p.Locks {
			if l.Name == "nightly" {
				nightly = l
			}
		}
		assert.Equal(t, "exec-1", nightly.ExecutionID)
		assert.True(t, nightly.WaitersKnown)
		require.Len(t, nightly.Waiters, 1)
		assert.Equal(t, "exec-2", nightly.Waiters[0].ExecutionID)
		assert.Equal(t, 5*time.Second, nightly.Waiters[0].Waited)
		require.Len(t, p.Elections, 1)
		e := p.Elections[0]
		assert.True(t, e.Leader)
		assert.Equal(t, "node-a", e.Value)
		assert.True(t, e.CandidatesKnown)
		require.Len(t, e.Candidates, 1)
		assert.Equal(t, "node-b", e.Candidates[0].Value)

		w = httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/locks", nil))
		assert.Contains(t, w.Body.String(), "exec-2")
		assert.Contains(t, w.Body.String(), "node-b")

		cancel()
		<-done
		<-done
		require.NoError(t, ld.Resign(ctx))
		require.NoError(t, locks.Release(ctx, []lock.Lease{*held}))
	})
}
