package cron_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
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

// "@every D" ticks on the multiples of D to the nanosecond, as
// claim.Every(D) does, whatever D's fraction of a second and with or
// without a zone.
func TestParseEveryKeepsItsInterval(t *testing.T) {
	for _, c := range []struct {
		expr string
		d    time.Duration
	}{
		{"@every 1.5s", 1500 * time.Millisecond},
		{"@every 250ms", 250 * time.Millisecond},
		{"@every 1ms", time.Millisecond},
		{"@every 2m30.5s", 150500 * time.Millisecond},
		{"@every 1h", time.Hour},
		{"CRON_TZ=Asia/Tokyo @every 90s", 90 * time.Second},
	} {
		s, err := cron.Parse(c.expr)
		require.NoError(t, err, c.expr)
		tick := s.Next(at)
		assert.Equal(t, claim.Every(c.d).Next(at), tick, c.expr)
		for range 4 {
			next := s.Next(tick)
			assert.Equal(t, c.d, next.Sub(tick), "%s: the ticks are %v apart", c.expr, c.d)
			assert.Equal(t, next, next.Truncate(c.d), "%s: a tick on a multiple of %v", c.expr, c.d)
			tick = next
		}
	}
}

// An interval that is not positive has no ticks: Parse refuses it, as
// claim.NewPeriodic refuses claim.Every of one.
func TestParseRefusesAnIntervalNotPositive(t *testing.T) {
	for _, expr := range []string{"@every 0s", "@every 0", "@every -1s", "@every -90m", "TZ=UTC @every -1ns"} {
		s, err := cron.Parse(expr)
		assert.Nil(t, s, expr)
		require.ErrorIs(t, err, lease.ErrInvalidArgument, expr)
		var le *lease.Error
		require.ErrorAs(t, err, &le)
		assert.Equal(t, "expr", le.Field)
		assert.Equal(t, "cron", le.Package)
		assert.Contains(t, le.Detail, `"`+expr+`" has no ticks`)
	}
}

// Parse's errors name the package that raised them.
func TestParseErrorNamesItsPackage(t *testing.T) {
	_, err := cron.Parse("* * *")
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "cron", le.Package)
	assert.Equal(t, "parse", le.Op)
	assert.True(t, strings.HasPrefix(err.Error(), "cron: parse expr: "), err.Error())
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
