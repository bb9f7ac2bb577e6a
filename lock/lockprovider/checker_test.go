package lockprovider_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/lockprovider"
)

// textColumns is a provider whose names live in short text columns.
var textColumns = lockprovider.Checker{Package: "myprovider", MaxNameLen: 4, TextOnly: true}

// requireOwn checks that err is the provider's refusal of field in op.
func requireOwn(t *testing.T, err error, op, field string) {
	t.Helper()
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	var le *lease.Error
	require.True(t, errors.As(err, &le))
	assert.Equal(t, "myprovider", le.Package)
	assert.Equal(t, op, le.Op)
	assert.Equal(t, field, le.Field)
}

func TestCheckerAcquire(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, textColumns.Acquire(ctx, "name", "exec", time.Second))
	requireInvalid(t, textColumns.Acquire(ctx, "", "exec", time.Second), "acquire", "name") // the contract's, first
	requireOwn(t, textColumns.Acquire(ctx, "names", "exec", time.Second), "acquire", "name")
	requireOwn(t, textColumns.Acquire(ctx, "n", "\xff", time.Second), "acquire", "executionID")
	require.NoError(t, lockprovider.Checker{Package: "myprovider"}.Acquire(ctx, "names\xff", "e", time.Second), "no limits")
}

func TestCheckerRenewRelease(t *testing.T) {
	ctx := context.Background()
	good := []lockprovider.Lease{{Name: "a", ExecutionID: "e"}}
	require.NoError(t, textColumns.Renew(ctx, good, time.Second))
	require.NoError(t, textColumns.Release(ctx, good))
	requireInvalid(t, textColumns.Renew(ctx, good, 0), "renew", "d")
	bad := []lockprovider.Lease{good[0], {Name: "a\x00", ExecutionID: "e"}}
	requireOwn(t, textColumns.Renew(ctx, bad, time.Second), "renew", "leases[1].Name")
	bad[1] = lockprovider.Lease{Name: "a", ExecutionID: "execs"}
	requireOwn(t, textColumns.Release(ctx, bad), "release", "leases[1].ExecutionID")
	requireInvalid(t, textColumns.Release(nilCtx, bad), "release", "ctx")
}

func TestCheckerHolderHeld(t *testing.T) {
	ctx := context.Background()
	require.NoError(t, textColumns.Holder(ctx, "a"))
	requireInvalid(t, textColumns.Holder(ctx, ""), "holder", "name")
	requireOwn(t, textColumns.Holder(ctx, "names"), "holder", "name")
	require.NoError(t, textColumns.Held(ctx, "", 0))
	require.NoError(t, textColumns.Held(ctx, "a long prefix is no name", 0), "a prefix is text, of any length")
	requireInvalid(t, textColumns.Held(ctx, "", -1), "held", "limit")
	requireOwn(t, textColumns.Held(ctx, "\xff", 0), "held", "prefix")
}

func TestCheckerName(t *testing.T) {
	require.NoError(t, textColumns.Name("waits", "names[0]", "a"))
	requireOwn(t, textColumns.Name("waits", "names[0]", ""), "waits", "names[0]")
	requireOwn(t, textColumns.Name("waits", "names[0]", "names"), "waits", "names[0]")
}
