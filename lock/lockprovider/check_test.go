package lockprovider_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/lockprovider"
)

// requireInvalid checks that err is the contract's refusal of field in op.
func requireInvalid(t *testing.T, err error, op, field string) {
	t.Helper()
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	var le *lease.Error
	require.True(t, errors.As(err, &le))
	assert.Equal(t, "lock", le.Package)
	assert.Equal(t, op, le.Op)
	assert.Equal(t, field, le.Field)
	assert.True(t, strings.HasPrefix(err.Error(), "lock: "), err.Error())
}

var nilCtx context.Context // a nil context, as a careless caller passes one

func TestCheckAcquire(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, lockprovider.CheckAcquire(ctx, "n", "e", time.Second))
	requireInvalid(t, lockprovider.CheckAcquire(nilCtx, "n", "e", time.Second), "acquire", "ctx")
	requireInvalid(t, lockprovider.CheckAcquire(ctx, "", "e", time.Second), "acquire", "name")
	requireInvalid(t, lockprovider.CheckAcquire(ctx, "n", "", time.Second), "acquire", "executionID")
	requireInvalid(t, lockprovider.CheckAcquire(ctx, "n", "e", 0), "acquire", "d")
}

func TestCheckRenew(t *testing.T) {
	ctx := context.Background()
	good := []lockprovider.Lease{{Name: "a", ExecutionID: "e"}, {Name: "b", ExecutionID: "e"}}
	require.NoError(t, lockprovider.CheckRenew(ctx, good, time.Second))
	require.NoError(t, lockprovider.CheckRenew(ctx, nil, time.Second), "an empty batch is fine")
	requireInvalid(t, lockprovider.CheckRenew(ctx, good, -time.Second), "renew", "d")
	requireInvalid(t, lockprovider.CheckRenew(nilCtx, good, time.Second), "renew", "ctx")
	bad := []lockprovider.Lease{good[0], {ExecutionID: "e"}}
	requireInvalid(t, lockprovider.CheckRenew(ctx, bad, time.Second), "renew", "leases[1].Name")
	bad[1] = lockprovider.Lease{Name: "b"}
	requireInvalid(t, lockprovider.CheckRenew(ctx, bad, time.Second), "renew", "leases[1].ExecutionID")
}

func TestCheckRelease(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, lockprovider.CheckRelease(ctx, []lockprovider.Lease{{Name: "a", ExecutionID: "e"}}))
	requireInvalid(t, lockprovider.CheckRelease(nilCtx, nil), "release", "ctx")
	requireInvalid(t, lockprovider.CheckRelease(ctx, []lockprovider.Lease{{Name: "a"}}), "release", "leases[0].ExecutionID")
}

func TestCheckHolder(t *testing.T) {
	require.NoError(t, lockprovider.CheckHolder(context.Background(), "n"))
	requireInvalid(t, lockprovider.CheckHolder(nilCtx, "n"), "holder", "ctx")
	requireInvalid(t, lockprovider.CheckHolder(context.Background(), ""), "holder", "name")
}

func TestCheckHeld(t *testing.T) {
	require.NoError(t, lockprovider.CheckHeld(context.Background(), 0), "0 is no limit")
	requireInvalid(t, lockprovider.CheckHeld(nilCtx, 1), "held", "ctx")
	requireInvalid(t, lockprovider.CheckHeld(context.Background(), -1), "held", "limit")
}

func TestCheckValue(t *testing.T) {
	require.NoError(t, lockprovider.CheckValue(nil))
	require.NoError(t, lockprovider.CheckValue(make([]byte, lockprovider.MaxValueSize)))
	requireInvalid(t, lockprovider.CheckValue(make([]byte, lockprovider.MaxValueSize+1)), "acquire", "value")
}

func TestPollInterval(t *testing.T) {
	assert.Equal(t, 3*time.Second, lockprovider.PollInterval(30*time.Second), "a tenth of the lease")
	assert.Equal(t, 10*time.Millisecond, lockprovider.PollInterval(time.Millisecond), "at least 10 ms")
	assert.Equal(t, 10*time.Millisecond, lockprovider.PollInterval(0))
}
