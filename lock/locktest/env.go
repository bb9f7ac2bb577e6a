package locktest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// env is what a clause runs with: the provider, its clock, and helpers that
// fail the clause on an unexpected result.
type env struct {
	*testing.T
	p     lock.Provider
	clock lease.Clock
	adv   leasetest.Advancer // nil on a real clock
	ctx   context.Context
	d     time.Duration // a lease that outlasts the clause
	rep   *suite.Report // the capabilities exercised
}

// fake reports whether time is driven by the suite.
func (e *env) fake() bool { return e.adv != nil }

// short is the lease duration of clauses that wait for an expiry.
func (e *env) short() time.Duration {
	if e.fake() {
		return fakeLease
	}
	return realShort
}

// scale returns n with a fake clock and real otherwise.
func (e *env) scale(n, real int) int {
	if e.fake() {
		return n
	}
	return real
}

func (e *env) acquire(name, exec string, d time.Duration) lock.Lease {
	e.Helper()
	l, err := e.p.Acquire(e.ctx, name, exec, d)
	require.NoError(e, err, "Acquire(%q, %q, %v)", name, exec, d)
	require.NotNil(e, l, "Acquire(%q, %q, %v): lock should be free", name, exec, d)
	require.Equal(e, name, l.Name, "Acquire: Lease.Name")
	require.Equal(e, exec, l.ExecutionID, "Acquire: Lease.ExecutionID")
	require.NotZero(e, l.Token, "Acquire: Lease.Token must never be 0")
	return *l
}

func (e *env) contend(name, exec string) {
	e.Helper()
	l, err := e.p.Acquire(e.ctx, name, exec, e.d)
	require.NoError(e, err, "Acquire(%q, %q): contention is not an error", name, exec)
	require.Nil(e, l, "Acquire(%q, %q): lock should be held", name, exec)
}

func (e *env) renew(d time.Duration, leases ...lock.Lease) []lock.Lease {
	e.Helper()
	got, err := e.p.Renew(e.ctx, leases, d)
	require.NoError(e, err, "Renew")
	return got
}

func (e *env) release(leases ...lock.Lease) {
	e.Helper()
	require.NoError(e, e.p.Release(e.ctx, leases), "Release")
}

// expire returns once l has expired: at once with a fake clock (which stops
// exactly at ExpiresAt), after waiting in real time otherwise.
func (e *env) expire(l lock.Lease) {
	e.Helper()
	if e.fake() {
		if d := l.ExpiresAt.Sub(e.clock.Now()); d > 0 {
			e.adv.Advance(d)
		}
		return
	}
	<-time.After(time.Until(l.ExpiresAt) + realSlack)
}

// advance moves a fake clock; it must not be called on a real one.
func (e *env) advance(d time.Duration) {
	e.Helper()
	require.True(e, e.fake(), "advance needs a fake clock")
	e.adv.Advance(d)
}

// name returns a lock name unique within the clause.
func name(i int) string { return "locktest-" + strconv.Itoa(i) }

// sameHolding reports whether two leases are the same holding.
func sameHolding(a, b lock.Lease) bool {
	return a.Name == b.Name && a.ExecutionID == b.ExecutionID && a.Token == b.Token
}
