package renewal

import (
	"fmt"
	"time"
)

// Interval returns how often a Loop renews a lease of duration d: a third
// of it, so that two renewals can fail before the lease runs out.
func Interval(d time.Duration) time.Duration { return d / 3 }

// DefaultMargin is the safety margin of a lease of duration d unless its
// user sets one: a tenth of it.
func DefaultMargin(d time.Duration) time.Duration { return d / 10 }

// DefaultRetry is how soon a failed renewal of a lease of duration d is
// retried unless its user says otherwise: a tenth of it, at least 1ns.
func DefaultRetry(d time.Duration) time.Duration { return max(d/10, 1) }

// Param names one parameter of a Loop's schedule, so that a caller can name
// it as its own users know it (an option, a struct field). It is a plain
// value.
type Param uint8

// The parameters Validate checks.
const (
	ParamDuration Param = iota + 1 // the lease duration
	ParamMargin                    // the safety margin
	ParamRetry                     // the retry interval
)

// Invalid is a rule of a schedule that Validate found broken: the
// parameter at fault and, in words, the rule and the values. It is a plain
// value; it is not an error, so that a nil *Invalid never hides in a
// non-nil error interface: callers wrap it in their own error type.
type Invalid struct {
	Param  Param
	Detail string
}

// Validate checks a schedule and returns the first rule it breaks, or nil:
//
//   - duration is positive and at least 3 ns, so that the renewal interval
//     (duration/3) is not zero, which would renew in a busy loop;
//   - margin is not negative and shorter than what is left of the lease at
//     the first renewal (duration - duration/3); otherwise a healthy hold
//     would be given up at or before its first renewal;
//   - retry is positive and shorter than the time from the first renewal to
//     the safety deadline (duration - duration/3 - margin); otherwise a
//     failed renewal could never be retried before the hold is given up.
func Validate(duration, margin, retry time.Duration) *Invalid {
	interval := Interval(duration)
	switch {
	case duration <= 0:
		return &Invalid{ParamDuration, fmt.Sprintf("lease duration %v is not positive", duration)}
	case interval <= 0:
		return &Invalid{ParamDuration, fmt.Sprintf(
			"lease duration %v is too short: its renewal interval, a third of it, rounds to zero", duration)}
	case margin < 0:
		return &Invalid{ParamMargin, fmt.Sprintf("safety margin %v is negative", margin)}
	case margin >= duration-interval:
		return &Invalid{ParamMargin, fmt.Sprintf(
			"safety margin %v is not shorter than %v, what is left of a %v lease at its first renewal (after %v): a healthy hold would be given up there",
			margin, duration-interval, duration, interval)}
	case retry <= 0:
		return &Invalid{ParamRetry, fmt.Sprintf("retry interval %v is not positive", retry)}
	case retry >= duration-interval-margin:
		return &Invalid{ParamRetry, fmt.Sprintf(
			"retry interval %v is not shorter than %v, the time from the first renewal (after %v) to the safety deadline (%v lease, %v margin): a failed renewal could never be retried",
			retry, duration-interval-margin, interval, duration, margin)}
	}
	return nil
}
