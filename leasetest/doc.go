// Package leasetest provides a deterministic clock for testing code built on
// package lease: FakeClock, whose timers run synchronously inside Advance,
// and Stalled, a view of a FakeClock whose timers never fire.
package leasetest
