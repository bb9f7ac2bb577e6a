package cron_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim/cron"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var at = time.Date(2026, 3, 1, 10, 7, 30, 0, time.UTC)

func TestParseStandardFieldsInUTC(t *testing.T) {
	s, err := cron.Parse("*/15 * * * *")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC), s.Next(at))
	assert.Equal(t, time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC), s.Next(s.Next(at)))

	daily, err := cron.Parse("@daily")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), daily.Next(at).UTC(), "midnight UTC, not local")
}

func TestParseHonoursAZone(t *testing.T) {
	s, err := cron.Parse("CRON_TZ=Asia/Tokyo 0 9 * * *")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), s.Next(at).UTC(), "09:00 in Tokyo is 00:00 UTC")
}

func TestParseEveryIsAligned(t *testing.T) {
	s, err := cron.Parse("@every 10m")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 3, 1, 10, 10, 0, 0, time.UTC), s.Next(at), "on a multiple of 10m, not 10m after")
}

func TestParseRefusesABadExpression(t *testing.T) {
	for _, expr := range []string{"", "* * *", "61 * * * *", "@fortnightly", "CRON_TZ=Nowhere/Land * * * * *"} {
		s, err := cron.Parse(expr)
		assert.Nil(t, s)
		require.ErrorIs(t, err, lease.ErrInvalidArgument, expr)
		var le *lease.Error
		require.ErrorAs(t, err, &le)
		assert.Equal(t, "expr", le.Field)
		assert.Contains(t, le.Detail, `"`+expr+`" does not parse`)
	}
}
