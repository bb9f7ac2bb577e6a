// Package optcore is the core every constructor's options share: the
// settings that the shared options of package lease (WithClock,
// WithPanicHandler, WithLogger) set, the record of the first option
// refused, and the loop that applies the options.
//
// Each package's Option interface has a method that takes a *Target, a
// type of this internal package: package lease's shared option implements
// the method of every package, so one value configures any constructor,
// while no type outside the module can implement one (it cannot name a
// Target), and an option of one package lacks the method of another, so it
// does not compile there.
//
// The types are generic over the clock (C) and the panic value (P) because
// package lease, which defines lease.Clock and *lease.PanicError, imports
// this package; lease.Clock and *lease.PanicError are the only
// instantiation (package sharedopt names it for the packages built on
// lease).
package optcore

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leasehold/lease/internal/callback"
)

// Shared holds what the shared options set. The zero value is "nothing
// given": each constructor then uses its defaults. It is part of each
// package's options struct and is checked once, by Apply.
type Shared[C, P any] struct {
	// Clock is the clock given by WithClock; the zero C (a nil interface)
	// when none was.
	Clock C
	// HasClock reports whether Clock was given.
	HasClock bool
	// OnPanic is the handler given by WithPanicHandler; nil when none was:
	// panics are then logged to Logger.
	OnPanic func(P)
	// Logger is the logger given by WithLogger; nil when none was:
	// slog.Default(), read when a record is written.
	Logger *slog.Logger

	refused *Refusal
}

// Refusal names the first option given a value it can never take.
type Refusal struct {
	Option string // the option's name, such as "WithClock"
	Detail string // what is wrong with the value
}

// Refuse records that option was given a value it can never take, unless an
// earlier option was refused already: the constructor reports the first.
func (s *Shared[C, P]) Refuse(option, detail string) {
	if s.refused == nil {
		s.refused = &Refusal{Option: option, Detail: detail}
	}
}

// Refused returns the first refusal, or nil.
func (s *Shared[C, P]) Refused() *Refusal { return s.refused }

// Target is what an option is applied to: the shared settings, and Own, a
// pointer to the constructing package's own options struct, which only that
// package's options read (through a type assertion that cannot fail: only
// the package builds a Target for its options).
type Target[C, P any] struct {
	*Shared[C, P]
	Own any
}

// Apply applies opts in order to t through apply, and returns the first
// refusal: of an option given a bad value, or of a nil option (named
// "Option"). Options after a refused one are still applied, so that the
// refusal reported is the first in the order given.
func Apply[O any, C, P any](t *Target[C, P], opts []O, apply func(O, *Target[C, P])) *Refusal {
	for _, opt := range opts {
		if any(opt) == nil {
			t.Refuse("Option", "option must not be nil")
			continue
		}
		apply(opt, t)
	}
	return t.Refused()
}

// Reporter returns the report function for callback.Call: it gives each
// recovered panic, made a P by mk, to the handler given, or else logs it to
// the logger given (slog.Default() when none) as LogPanic does.
func (s *Shared[C, P]) Reporter(mk func(name string, value any, stack []byte) P) callback.Report {
	if h := s.OnPanic; h != nil {
		return func(name string, value any, stack []byte) { h(mk(name, value, stack)) }
	}
	logger := s.Logger
	return func(name string, value any, stack []byte) { LogPanic(logger, name, value, stack) }
}

// LogPanic logs a recovered panic at Error level, with its stack, to
// logger (slog.Default() when nil): the default panic policy of every
// package.
func LogPanic(logger *slog.Logger, name string, value any, stack []byte) {
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(context.Background(), slog.LevelError, "callback panicked",
		slog.String("callback", name),
		slog.String("panic", fmt.Sprint(value)),
		slog.String("stack", string(stack)))
}
