package renewal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/leasehold/lease/internal/renewal"
)

func TestValidate(t *testing.T) {
	const s = time.Second
	cases := []struct {
		name                    string
		duration, margin, retry time.Duration
		want                    renewal.Param // 0: valid
		detail                  string
	}{
		{name: "defaults of a lock manager", duration: 30 * s, margin: 3 * s, retry: 3 * s},
		{name: "shortest lease", duration: 3, margin: 0, retry: 1},
		{name: "zero margin", duration: 30 * s, margin: 0, retry: 19*s + 999*time.Millisecond},
		{name: "zero duration", duration: 0, margin: 0, retry: 1, want: renewal.ParamDuration, detail: "lease duration 0s is not positive"},
		{name: "negative duration", duration: -s, retry: 1, want: renewal.ParamDuration, detail: "lease duration -1s is not positive"},
		{name: "interval rounds to zero", duration: 2, retry: 1, want: renewal.ParamDuration,
			detail: "lease duration 2ns is too short: its renewal interval, a third of it, rounds to zero"},
		{name: "negative margin", duration: 30 * s, margin: -1, retry: s, want: renewal.ParamMargin, detail: "safety margin -1ns is negative"},
		{name: "margin reaches the first renewal", duration: 30 * s, margin: 20 * s, retry: s, want: renewal.ParamMargin,
			detail: "safety margin 20s is not shorter than 20s, what is left of a 30s lease at its first renewal (after 10s): a healthy hold would be given up there"},
		{name: "margin just short of the first renewal", duration: 30 * s, margin: 20*s - 2, retry: 1},
		{name: "zero retry", duration: 30 * s, margin: 3 * s, retry: 0, want: renewal.ParamRetry, detail: "retry interval 0s is not positive"},
		{name: "retry that can never land", duration: 30 * s, margin: 3 * s, retry: 17 * s, want: renewal.ParamRetry,
			detail: "retry interval 17s is not shorter than 17s, the time from the first renewal (after 10s) to the safety deadline (30s lease, 3s margin): a failed renewal could never be retried"},
		{name: "retry that lands just before the deadline", duration: 30 * s, margin: 3 * s, retry: 17*s - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := renewal.Validate(c.duration, c.margin, c.retry)
			if c.want == 0 {
				assert.Nil(t, got)
				return
			}
			if assert.NotNil(t, got) {
				assert.Equal(t, c.want, got.Param)
				assert.Equal(t, c.detail, got.Detail)
			}
		})
	}
}

func TestInterval(t *testing.T) {
	assert.Equal(t, 10*time.Second, renewal.Interval(30*time.Second))
	assert.Equal(t, time.Duration(1), renewal.Interval(3))
}
