// Package sharedopt names the option core's one instantiation for the
// packages built on package lease (lock, claim, election), which options
// of package lease configure too; see package optcore.
package sharedopt

import (
	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/callback"
	"github.com/leasehold/lease/internal/optcore"
)

// Settings are the shared settings: clock, panic handler, logger.
type Settings = optcore.Shared[lease.Clock, *lease.PanicError]

// Target is what a package's options are applied to.
type Target = optcore.Target[lease.Clock, *lease.PanicError]

// Reporter returns the report function for callback.Call that gives a
// panic to s's handler, or logs it to s's logger.
func Reporter(s *Settings) callback.Report {
	return s.Reporter(func(name string, value any, stack []byte) *lease.PanicError {
		return &lease.PanicError{Callback: name, Value: value, Stack: stack}
	})
}

// Pass returns the shared options that give another constructor the panic
// handler and logger s holds (an Election passes its own to the
// lock.Manager of each campaign); the clock is the caller's to pass, since
// it is resolved against the provider.
func Pass(s *Settings) []lease.SharedOption {
	var out []lease.SharedOption
	if s.OnPanic != nil {
		out = append(out, lease.WithPanicHandler(s.OnPanic))
	}
	if s.Logger != nil {
		out = append(out, lease.WithLogger(s.Logger))
	}
	return out
}
