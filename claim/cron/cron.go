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
// expr names its zone. "@every D" is claim.Every(D): it ticks on the
// multiples of D, to the nanosecond ("@every 1.5s" at :00, :01.5, :03,
// ...; "@every 250ms" four times a second), rather than D after each call
// and in whole seconds, so that every process has the same ticks. An
// expression that does not parse, and an "@every D" whose D is not
// positive (which would have no ticks), get a *lease.Error matching
// lease.ErrInvalidArgument, with Package "cron", Field "expr" and the
// expression in its Detail.
func Parse(expr string) (claim.Schedule, error) {
	s, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, invalid(strconv.Quote(expr) + " does not parse: " + err.Error())
	}
	switch s := s.(type) {
	case cron.ConstantDelaySchedule:
		// robfig/cron rounds the interval to whole seconds, and up to at
		// least one: read it again, as written.
		d, err := time.ParseDuration(strings.TrimPrefix(descriptor(expr), every))
		switch {
		case err != nil:
			return nil, invalid(strconv.Quote(expr) + " does not parse: " + err.Error())
		case d <= 0:
			return nil, invalid(strconv.Quote(expr) + " has no ticks: " + d.String() + " is not positive")
		}
		return claim.Every(d), nil
	case *cron.SpecSchedule:
		if !namesZone(expr) {
			s.Location = time.UTC
		}
		return s, nil
	}
	return s, nil
}

// every starts the descriptor of an interval, as robfig/cron reads it.
const every = "@every "

// descriptor is expr without its time zone, as robfig/cron splits them.
func descriptor(expr string) string {
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		if i := strings.IndexByte(expr, ' '); i >= 0 {
			return strings.TrimSpace(expr[i:])
		}
	}
	return expr
}

// invalid is the error of an expression Parse refuses.
func invalid(detail string) error {
	return &lease.Error{Package: "cron", Code: lease.CodeInvalidArgument, Op: "parse", Field: "expr", Detail: detail}
}

// namesZone reports whether expr starts with a time zone.
func namesZone(expr string) bool {
	expr = strings.TrimSpace(expr)
	return strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=")
}
