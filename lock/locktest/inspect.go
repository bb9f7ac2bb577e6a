package locktest

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/lockprovider"
)

// acquireValue acquires name with value attached if the provider is a
// lockprovider.ValueAcquirer, and plainly otherwise. It returns the lease and the
// holding an Inspector should report for it: with a copy of value, or with
// none when the provider cannot store one.
func (e *env) acquireValue(name, exec string, d time.Duration, value []byte) (lock.Lease, lock.Holding) {
	e.Helper()
	va, ok := e.p.(lockprovider.ValueAcquirer)
	if !ok {
		l := e.acquire(name, exec, d)
		return l, holdingOf(l, nil)
	}
	l, err := va.AcquireValue(e.ctx, name, exec, d, value)
	require.NoError(e, err, "AcquireValue(%q, %q, %v)", name, exec, d)
	require.NotNil(e, l, "AcquireValue(%q, %q, %v): lock should be free", name, exec, d)
	require.Equal(e, name, l.Name, "AcquireValue: Lease.Name")
	require.NotZero(e, l.Token, "AcquireValue: Lease.Token must never be 0")
	return *l, holdingOf(*l, slices.Clone(value))
}

func holdingOf(l lock.Lease, value []byte) lock.Holding {
	return lock.Holding{Name: l.Name, ExecutionID: l.ExecutionID, Token: l.Token, ExpiresAt: l.ExpiresAt, Value: value}
}

// holder returns Holder(name), failing the clause on an error.
func (e *env) holder(in lockprovider.Inspector, name string) (lock.Holding, bool) {
	e.Helper()
	h, ok, err := in.Holder(e.ctx, name)
	require.NoError(e, err, "Holder(%q)", name)
	return h, ok
}

// sameHolding checks got against want: equal, but for ExpiresAt, which is
// exact on a fake clock and within the suite's slack on a real one.
func (e *env) sameHolding(want, got lock.Holding, what string) {
	e.Helper()
	assert.Equal(e, want.Name, got.Name, "%s: Name", what)
	assert.Equal(e, want.ExecutionID, got.ExecutionID, "%s: ExecutionID", what)
	assert.Equal(e, want.Token, got.Token, "%s: Token", what)
	slack := time.Duration(0)
	if !e.fake() {
		slack = realSlack
	}
	assert.WithinDuration(e, want.ExpiresAt, got.ExpiresAt, slack, "%s: ExpiresAt", what)
	if len(want.Value) == 0 {
		assert.Empty(e, got.Value, "%s: Value", what)
	} else {
		assert.Equal(e, want.Value, got.Value, "%s: Value", what)
	}
}

// testInspectHolder: Holder reports a held lock's holding (with its value,
// from a ValueAcquirer) as renewed, and false for a lock that is free,
// released or expired; bad input is refused.
func testInspectHolder(e *env, in lockprovider.Inspector) {
	var nilCtx context.Context
	_, _, err := in.Holder(nilCtx, name(0))
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "Holder nil ctx")
	_, _, err = in.Holder(e.ctx, "")
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "Holder empty name")

	_, ok := e.holder(in, name(0))
	assert.False(e, ok, "a lock never acquired is not held")

	value := []byte("host-1:8080")
	a, want := e.acquireValue(name(0), "a", e.short(), value)
	value[0] = 'X' // the provider keeps its own copy
	h, ok := e.holder(in, name(0))
	require.True(e, ok, "a held lock has a holder")
	e.sameHolding(want, h, "Holder")
	if len(h.Value) > 0 {
		h.Value[0] = 'Y' // and gives out copies
		again, _ := e.holder(in, name(0))
		e.sameHolding(want, again, "Holder after its Value was changed")
	}

	// Renew keeps the holding and its value; another duration too.
	b, wantB := e.acquireValue(name(1), "b", e.d, []byte("b"))
	renewed := e.renew(2*e.d, b)
	require.Len(e, renewed, 1)
	wantB.ExpiresAt = renewed[0].ExpiresAt
	hb, ok := e.holder(in, name(1))
	require.True(e, ok)
	e.sameHolding(wantB, hb, "Holder after a Renew for another duration")
	renewed = e.renew(e.short(), a)
	require.Len(e, renewed, 1)
	want.ExpiresAt = renewed[0].ExpiresAt
	h, ok = e.holder(in, name(0))
	require.True(e, ok)
	e.sameHolding(want, h, "Holder after a Renew")

	e.release(b)
	_, ok = e.holder(in, name(1))
	assert.False(e, ok, "a released lock is not held")
	e.expire(renewed[0])
	_, ok = e.holder(in, name(0))
	assert.False(e, ok, "an expired lock is not held")
}

// testInspectHeld: Held lists exactly the locks held under a prefix, in
// name order, at most limit of them, as copies; bad input is refused.
func testInspectHeld(e *env, in lockprovider.Inspector) {
	var nilCtx context.Context
	_, err := in.Held(nilCtx, "", 0)
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "Held nil ctx")
	_, err = in.Held(e.ctx, "", -1)
	assert.ErrorIs(e, err, lease.ErrInvalidArgument, "Held negative limit")
	assert.Empty(e, e.held(in, "", 0), "nothing is held yet")

	const prefix = "locktest-held/"
	expired, _ := e.acquireValue(prefix+"expired", "x", e.short(), nil)
	long := 2 * e.d // outlasts the expiry, on a fake clock too
	var want []lock.Holding
	for _, n := range []string{"b", "c/1", "B", "a"} { // byte order: B a b c/1
		_, h := e.acquireValue(prefix+n, "exec-"+n, long, []byte("value "+n))
		want = append(want, h)
	}
	slices.SortFunc(want, func(x, y lock.Holding) int { return cmp.Compare(x.Name, y.Name) })
	released, _ := e.acquireValue(prefix+"released", "x", long, nil)
	e.release(released)
	_, bare := e.acquireValue("locktest-held", "x", long, nil) // the prefix without its slash
	_, other := e.acquireValue("locktest-other/x", "x", long, nil)
	e.expire(expired)

	e.sameHoldings(want, e.held(in, prefix, 0), "Held(prefix, 0)")
	e.sameHoldings(want, e.held(in, prefix, len(want)), "Held(prefix, all)")
	e.sameHoldings(want, e.held(in, prefix, 100), "Held(prefix, more than all)")
	e.sameHoldings(want[:2], e.held(in, prefix, 2), "Held(prefix, 2)")
	e.sameHoldings(want[:1], e.held(in, prefix+"B", 0), "Held(a whole name)")
	all := append([]lock.Holding{bare}, append(slices.Clone(want), other)...)
	e.sameHoldings(all, e.held(in, "", 0), "Held(\"\", 0)")
	assert.Empty(e, e.held(in, "locktest-none/", 0), "Held of a prefix nobody holds")

	// The answer is the caller's: changing it changes nothing inside.
	got := e.held(in, prefix, 0)
	require.Len(e, got, len(want))
	for i := range got {
		if len(got[i].Value) > 0 {
			got[i].Value[0] = 'X'
		}
	}
	got[0] = lock.Holding{}
	e.sameHoldings(want, e.held(in, prefix, 0), "Held after its answer was changed")
}

// held returns Held(prefix, limit), failing the clause on an error.
func (e *env) held(in lockprovider.Inspector, prefix string, limit int) []lock.Holding {
	e.Helper()
	got, err := in.Held(e.ctx, prefix, limit)
	require.NoError(e, err, "Held(%q, %d)", prefix, limit)
	return got
}

func (e *env) sameHoldings(want, got []lock.Holding, what string) {
	e.Helper()
	names := func(hs []lock.Holding) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Name)
		}
		return out
	}
	require.Equal(e, names(want), names(got), "%s: the names held, in order", what)
	for i := range want {
		e.sameHolding(want[i], got[i], what+": "+want[i].Name)
	}
}
