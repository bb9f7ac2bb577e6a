// Package cron parses cron expressions into schedules of periodic jobs
// (claim.Schedule), with github.com/robfig/cron/v3. It is a module of its
// own so that the lease module depends on no parser.
//
// Parse takes the standard five fields (minute, hour, day of month, month,
// day of week), the descriptors (@hourly, @daily, @weekly, @monthly,
// @yearly, @every DURATION) and an optional CRON_TZ= or TZ= prefix naming
// the time zone. Without one, the expression is read in UTC, not the
// process's local zone, so that every process computes the same ticks.
package cron

import (
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// Parse returns the schedule of the cron expression expr, in UTC unless
// expr names its zone. "@every D" ticks on the multiples of D, as
// claim.Every(D) does, rather than D after each call, so that every
// process has the same ticks. An expression that does not parse gets a
// *lease.Error matching lease.ErrInvalidArgument, with Field "expr" and
// the expression in its Detail.
func Parse(expr string) (claim.Schedule, error) {
	s, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, &lease.Error{Code: lease.CodeInvalidArgument, Op: "cron.parse", Field: "expr",
			Detail: strconv.Quote(expr) + " does not parse: " + err.Error()}
	}
	switch s := s.(type) {
	case cron.ConstantDelaySchedule:
		return claim.Every(s.Delay), nil
	case *cron.SpecSchedule:
		if !namesZone(expr) {
			s.Location = time.UTC
		}
		return s, nil
	}
	return s, nil
}

// namesZone reports whether expr starts with a time zone.
func namesZone(expr string) bool {
	expr = strings.TrimSpace(expr)
	return strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=")
}
