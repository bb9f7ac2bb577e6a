package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// The Service's reads answer LS_CLOSED after Close, and honour their
// context, as a Backend's must.
func TestServiceReads(t *testing.T) {
	clock := leasetest.NewFakeClock(time.Unix(1_700_000_000, 0))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	var b lease.Backend = svc
	ctx := context.Background()
	l, err := b.GrantWithKey(ctx, "a", lease.Operation, time.Minute, "k", []byte("v"))
	require.NoError(t, err)

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.Info(done, l.ID)
	require.ErrorIs(t, err, context.Canceled)
	_, _, _, err = b.Get(done, "k")
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.Scan(done, "", 0)
	require.ErrorIs(t, err, context.Canceled)
	_, err = svc.ListAfter(done, 0, 1)
	require.ErrorIs(t, err, context.Canceled)
	//lint:ignore SA1012 a nil context is the input under test
	_, err = b.List(nil) //nolint:staticcheck
	require.ErrorIs(t, err, lease.ErrInvalidArgument)

	require.NoError(t, svc.Close())
	_, err = b.Info(ctx, l.ID)
	require.ErrorIs(t, err, lease.ErrClosed)
	_, _, _, err = b.Get(ctx, "k")
	require.ErrorIs(t, err, lease.ErrClosed)
	_, err = b.List(ctx)
	require.ErrorIs(t, err, lease.ErrClosed)
	_, err = b.Scan(ctx, "", 0)
	require.ErrorIs(t, err, lease.ErrClosed)
	_, err = svc.ListAfter(ctx, 0, 1)
	require.ErrorIs(t, err, lease.ErrClosed)
}
