package lease

import (
	"context"
	"fmt"
	"log/slog"
)

// PanicError describes a user callback that panicked: an observer, an
// ending subscriber, a trace-ID function, or, in the packages
// built on the service, a work handler or a release-error handler.
//
// Every package of this module treats a panicking callback the same way: the
// panic is recovered, reported as a *PanicError to the handler set by the
// package's WithPanicHandler option (LogPanic by default), and everything
// else goes on as if the callback had returned: the other callbacks still
// see the event, and no state is lost. A PanicError is a plain value.
type PanicError struct {
	// Callback names the kind of callback: "audit observer" (the audit
	// observer, WithAuditObserver), "end subscriber", "trace id" (package lease); "work handler",
	// "jitter" (package claim); "release error handler", "provider renew"
	// (package lock); "on started leading", "on stopped leading", "on new
	// leader" (package election); "observer" (every package with
	// WithObserver).
	Callback string
	// Value is the value the callback panicked with.
	Value any
	// Stack is the stack of the panicking goroutine, as debug.Stack
	// formats it.
	Stack []byte
}

// Error formats as "lease: CALLBACK panicked: VALUE".
func (e *PanicError) Error() string {
	return fmt.Sprintf("lease: %s panicked: %v", e.Callback, e.Value)
}

// Unwrap returns Value when it is an error, so that errors.Is sees through a
// panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// LogPanic is the default panic handler: it logs p to slog.Default at Error
// level with its stack.
func LogPanic(p *PanicError) {
	slog.Default().LogAttrs(context.Background(), slog.LevelError, "callback panicked",
		slog.String("callback", p.Callback),
		slog.String("panic", fmt.Sprint(p.Value)),
		slog.String("stack", string(p.Stack)))
}

// WithPanicHandler sets the function that receives the panics recovered from
// the service's callbacks (default LogPanic). It runs on the goroutine of
// the callback that panicked, outside the service's lock; it must not panic
// itself. New returns an error if h is nil.
func WithPanicHandler(h func(*PanicError)) Option {
	return optionFunc(func(o *options) {
		if h == nil {
			o.refuse("WithPanicHandler", "handler must not be nil")
			return
		}
		o.onPanic = h
	})
}

// reportPanic adapts the service's panic handler to the callback package.
func (s *Service) reportPanic(name string, value any, stack []byte) {
	s.opts.onPanic(&PanicError{Callback: name, Value: value, Stack: stack})
}
