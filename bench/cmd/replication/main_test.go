package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
)

// Bad flags are refused before any cluster starts.
func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-target", "zookeeper"},
		{"-runs", "0"},
		{"-scenarios", "grant-revoke,nap"},
		{"extra"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		require.Error(t, err, "%q", args)
		require.Empty(t, stdout.String(), "%q", args)
	}
	err := run(context.Background(), []string{"-clients", "0"}, &bytes.Buffer{}, &bytes.Buffer{})
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, lease.CodeInvalidArgument, le.Code)
	require.Equal(t, "Clients", le.Field)
}
