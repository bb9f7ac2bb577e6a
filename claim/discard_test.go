package claim_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/claim"
)

var errMalformed = errors.New("malformed order")

func TestDiscardMatchesWithIsAndAs(t *testing.T) {
	err := fmt.Errorf("handling: %w", claim.Discard(errMalformed))
	require.ErrorIs(t, err, claim.ErrDiscarded)
	require.ErrorIs(t, err, errMalformed)
	var d *claim.DiscardError
	require.ErrorAs(t, err, &d)
	assert.Equal(t, errMalformed, d.Err)
	assert.Equal(t, "claim: discarded: malformed order", d.Error())

	bare := claim.Discard(nil)
	require.ErrorIs(t, bare, claim.ErrDiscarded)
	assert.Equal(t, "claim: discarded", bare.Error())
}

func TestWorkDiscardDeadLettersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		runs := 0
		stop := startWork(t, b, claim.Worker{Queue: q, Owner: "w", Handler: func(context.Context, claim.Claim) error {
			runs++
			return fmt.Errorf("order 7: %w", claim.Discard(errMalformed))
		}})
		it := enqueue(t, b, q, "order 7", claim.MaxAttempts(5))
		synctest.Wait()
		require.NoError(t, stop())

		assert.Equal(t, 1, runs, "no attempt after the discard")
		assert.Equal(t, counts(0, 0, 0, 1), countsOf(t, b, q))
		dead := listDead(t, b, q)
		require.Len(t, dead, 1)
		assert.Equal(t, it.ID, dead[0].ID)
		assert.Equal(t, 1, dead[0].Attempts, "four attempts left unspent")
		require.Len(t, dead[0].History, 1)
		h := dead[0].History[0]
		assert.Equal(t, "order 7: claim: discarded: malformed order", h.Reason)
		assert.Equal(t, "w", h.Owner)
		assert.False(t, h.Lost)
	})
}

func TestWorkPlainErrorStillRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := newRealBroker(t)
		stop := startWork(t, b, claim.Worker{Queue: q, Handler: func(context.Context, claim.Claim) error {
			return errMalformed
		}})
		enqueue(t, b, q, "x", claim.MaxAttempts(3))
		synctest.Wait()
		assert.Equal(t, counts(0, 1, 0, 0), countsOf(t, b, q), "requeued with a backoff, not dead")
		require.NoError(t, stop())
	})
}
