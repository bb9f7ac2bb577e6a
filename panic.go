package lease

import (
	"fmt"

	"github.com/leasehold/lease/internal/optcore"
)

// PanicError describes a user callback that panicked: an observer, an
// ending subscriber, a trace-ID function, or, in the packages
// built on the service, a work handler or a release-error handler.
//
// Every package of this module treats a panicking callback the same way: the
// panic is recovered, reported as a *PanicError to the handler set by the
// shared option WithPanicHandler (by default it is logged as LogPanic does,
// to the logger of WithLogger), and everything else goes on as if the
// callback had returned: the other callbacks still see the event, and no
// state is lost. A PanicError is a plain value.
type PanicError struct {
	// Callback names the kind of callback: "audit observer"
	// (WithAuditObserver), "end subscriber", "trace id" (package lease);
	// "work handler", "jitter", "error hook" (package claim); "release error handler", "provider renew"
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

// LogPanic logs p to slog.Default at Error level with its stack, as the
// default panic policy does (to WithLogger's logger when one is given). A
// handler given by WithPanicHandler may call it after its own work.
func LogPanic(p *PanicError) {
	optcore.LogPanic(nil, p.Callback, p.Value, p.Stack)
}

// reportPanic adapts the service's panic handler to the callback package.
func (s *Service) reportPanic(name string, value any, stack []byte) {
	s.opts.report(name, value, stack)
}
