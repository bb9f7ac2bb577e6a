// Package callback runs user callbacks under the library's one panic policy:
// a panicking callback is recovered and reported, and the caller goes on as
// if it had returned. Every package that calls user code (hooks, sinks,
// subscribers, handlers) goes through Call, so the policy cannot differ
// between them.
package callback

import "runtime/debug"

// Report receives a recovered panic: the name of the callback, the value it
// panicked with and the stack of the panicking goroutine.
type Report func(name string, value any, stack []byte)

// Call runs f. If f panics, Call recovers, passes the panic to report and
// returns true. A panic in report itself is not recovered: the reporter is
// the last line of defence and must not fail.
func Call(name string, report Report, f func()) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			report(name, v, debug.Stack())
		}
	}()
	f()
	return false
}
