// Package leasetest provides helpers for testing code built on package
// lease: FakeClock, a deterministic clock whose timers run synchronously
// inside Advance and which Rewind steps back like a wall clock; Stalled, a
// view of a FakeClock whose timers never fire; and PanicRecorder, which
// records the panics a package reports through its WithPanicHandler option.
package leasetest
