package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuickstartStory checks the lines the README promises the quickstart
// prints: grant, renew, a purpose mismatch, expiry with its keys, and the
// audit trail.
func TestQuickstartStory(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out))
	for _, want := range []string{
		"granted: lease 1, ttl 10s, expires 00:00:10",
		"renewed at 00:00:06: expires 00:00:16",
		"use for migration_handoff refused: LS_PURPOSE_MISMATCH",
		"expired: lease 1 of worker-1, deleted keys [jobs/42/owner jobs/42/progress]",
		"use after expiry: LS_STALE_USE (stale: true)",
		"key still there: false",
		"00:00:16 rev 5  expire lease 1: allowed (expired)",
	} {
		require.Contains(t, out.String(), want)
	}
}
