// Package renewal keeps something held alive on a clock: a lock, a claim,
// anything whose lease must be renewed before it expires and whose holder
// must stop trusting it a safety margin before it might have.
//
// A Loop renews every third of the lease duration. A renewal that fails
// is retried every retry interval while a retry can still land before the
// safety deadline: the margin before the last confirmed expiry, counted on
// the Loop's clock from the instant the confirming call was sent, never
// from a time the other side reported. A renewal that says the thing is
// gone, and the safety deadline, both end the hold: the Loop's context is
// cancelled with a cause, and nothing is renewed again.
//
// A Loop has no goroutine of its own. Its timers are callbacks of its clock,
// so on a leasetest.FakeClock everything due runs inside Advance; between
// ticks nothing waits. A timer that fires before its instant, which happens
// when the clock stepped back, checks the time, re-arms and does nothing
// else. Stop waits for a callback under way, and nothing runs after it;
// Cancel ends the Loop without waiting, for callers that cannot wait.
//
// Validate holds the rules that make a schedule workable, for the
// constructors that take one from their users.
package renewal
