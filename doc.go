// Package lease is an embeddable, in-process lease manager.
//
// A [Service] grants time-bounded leases to holders, renews them, keeps them
// alive, checks their use against a declared [Purpose] and revokes them. Keys
// stored in the service may be attached to a lease; they vanish atomically
// when the lease expires or is revoked. Every grant, renew, use, revoke and
// expiry yields an audit [Decision].
//
// Expiry is exact: a lease is expired from the instant the service's clock
// reads its ExpiresAt or later, and no call observes it as active after that,
// whether or not a timer has fired yet. The service arms a single timer for
// its earliest deadline; it never polls. Time comes from a [Clock], so tests
// drive it with leasetest.FakeClock and need no sleeps.
//
// Errors carry stable codes (LS_EXPIRED, LS_STALE_USE, ...) and match the
// sentinels ([ErrExpired], [ErrStaleUse], ...) with errors.Is, and [*Error]
// with errors.As.
package lease
