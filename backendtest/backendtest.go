package backendtest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/leasetest"
)

// Durations of the clauses. With a fake clock they are arbitrary; on a real
// clock ttl is what the expiry clauses wait for and slack absorbs the time
// a backend takes to notice (a replicated leader commits the ending).
const (
	fakeTTL    = 10 * time.Second
	realTTL    = time.Second
	realSlack  = 250 * time.Millisecond
	guardLimit = 60 * time.Second
)

// TestBackend runs the lease contract against the backends newBackend
// returns, one fresh backend per clause, each clause a subtest. newBackend
// also returns the clock the backend's leases expire on. With a
// leasetest.Advancer
// the suite drives time and runs at once; with a real clock it uses leases
// of 1s and waits them out, about 10 s of waiting in all.
//
// newBackend may return the same backend to every clause (a cluster is
// costly to start): each clause works on holders and keys of its own,
// prefixed with its name, and looks only at those, so leases and keys
// other clauses left behind do not disturb it. The backend must allow
// TTLs from 100ms to a minute. A clause that hangs for 60 s panics with
// every goroutine's stack.
func TestBackend(t *testing.T, newBackend func(t *testing.T) (lease.Backend, lease.Clock)) {
	t.Helper()
	for _, c := range clauses {
		t.Run(c.name, func(t *testing.T) {
			b, clock := newBackend(t)
			if b == nil || clock == nil {
				t.Fatal("backendtest: newBackend returned a nil backend or clock")
			}
			e := &env{T: t, b: b, clock: clock, ctx: context.Background(), prefix: "backendtest/" + c.name + "/"}
			e.adv, _ = clock.(leasetest.Advancer)
			e.ttl = realTTL
			if e.adv != nil {
				e.ttl = fakeTTL
			}
			defer suite.Guard("backendtest", c.name, guardLimit)()
			c.run(e)
		})
	}
}

type clause struct {
	name string
	run  func(e *env)
}

var clauses = []clause{
	{"GrantRenewRevoke", grantRenewRevoke},
	{"RenewTTL", renewTTL},
	{"Use", use},
	{"Keys", keys},
	{"Scan", scan},
	{"List", list},
	{"Expiry", expiry},
	{"RevokeEnds", revokeEnds},
	{"KeepAlive", keepAlive},
	{"KeepAliveEndsWithLease", keepAliveEndsWithLease},
	{"BadInput", badInput},
}

// env is what a clause runs with.
type env struct {
	*testing.T
	b     lease.Backend
	clock lease.Clock
	adv   leasetest.Advancer // nil on a real clock
	ctx   context.Context
	ttl   time.Duration
	// prefix starts every holder and key of the clause.
	prefix string
}

// k returns the clause's own name for a key or holder.
func (e *env) k(name string) string { return e.prefix + name }

// pass lets d go by on the backend's clock.
func (e *env) pass(d time.Duration) {
	if e.adv != nil {
		e.adv.Advance(d)
		return
	}
	e.wait(d)
}

// wait returns once d has gone by on the backend's own clock.
func (e *env) wait(d time.Duration) {
	done := make(chan struct{})
	e.clock.AfterFunc(d, func() { close(done) })
	<-done
}

// expire returns once l has expired, at once with a fake clock.
func (e *env) expire(l lease.Lease) {
	e.Helper()
	d := l.ExpiresAt.Sub(e.clock.Now())
	if e.adv != nil {
		if d > 0 {
			e.adv.Advance(d)
		}
		return
	}
	e.wait(d + realSlack)
}

func (e *env) grant(name string) lease.Lease {
	e.Helper()
	holder := e.k(name)
	l, err := e.b.Grant(e.ctx, holder, lease.Operation, e.ttl)
	require.NoError(e, err, "Grant")
	require.NotZero(e, l.ID, "Grant: ID")
	require.Equal(e, holder, l.Holder)
	require.Equal(e, lease.Operation, l.Purpose)
	require.Equal(e, e.ttl, l.TTL)
	require.Equal(e, l.GrantedAt.Add(e.ttl), l.ExpiresAt, "Grant: ExpiresAt is GrantedAt+TTL")
	return l
}

// code requires err to be a *lease.Error with code.
func (e *env) code(err error, code lease.Code, what string) *lease.Error {
	e.Helper()
	var le *lease.Error
	require.ErrorAs(e, err, &le, what)
	require.Equal(e, code, le.Code, what)
	return le
}

// ended waits for the ending of lease id on ch, passing over the endings
// of other leases.
func (e *env) ended(ch <-chan ending, id lease.ID) ending {
	e.Helper()
	timeout := time.After(guardLimit / 2)
	for {
		select {
		case x := <-ch:
			if x.l.ID == id {
				return x
			}
		case <-timeout:
			e.Fatalf("backendtest: the ending of lease %d was not reported", id)
			return ending{}
		}
	}
}

type ending struct {
	l      lease.Lease
	reason lease.EndReason
}

func (e *env) watch() <-chan ending {
	ch := make(chan ending, 1024)
	stop := e.b.OnEnd(func(l lease.Lease, r lease.EndReason) {
		select {
		case ch <- ending{l, r}:
		default:
		}
	})
	e.Cleanup(stop)
	return ch
}

func grantRenewRevoke(e *env) {
	l := e.grant("alice")
	got, err := e.b.Info(e.ctx, l.ID)
	require.NoError(e, err, "Info")
	require.Equal(e, l.ID, got.ID)
	require.True(e, l.ExpiresAt.Equal(got.ExpiresAt), "Info: ExpiresAt")

	e.pass(e.ttl / 2)
	r, err := e.b.Renew(e.ctx, l.ID)
	require.NoError(e, err, "Renew")
	require.True(e, r.RenewedAt.After(l.GrantedAt), "Renew: RenewedAt moves")
	require.Equal(e, r.RenewedAt.Add(e.ttl), r.ExpiresAt, "Renew: ExpiresAt is RenewedAt+TTL")

	v, err := e.b.Revoke(e.ctx, l.ID)
	require.NoError(e, err, "Revoke")
	require.Equal(e, l.ID, v.ID)
	_, err = e.b.Info(e.ctx, l.ID)
	e.code(err, lease.CodeAlreadyRevoked, "Info after Revoke")
	_, err = e.b.Revoke(e.ctx, l.ID)
	e.code(err, lease.CodeAlreadyRevoked, "Revoke twice")
	_, err = e.b.Renew(e.ctx, l.ID)
	require.ErrorIs(e, err, lease.ErrAlreadyRevoked, "Renew after Revoke")
	_, err = e.b.Info(e.ctx, l.ID+1000)
	require.ErrorIs(e, err, lease.ErrNotFound, "Info of an ID never issued")
}

func renewTTL(e *env) {
	l := e.grant("alice")
	r, err := e.b.RenewTTL(e.ctx, l.ID, 2*e.ttl)
	require.NoError(e, err, "RenewTTL")
	require.Equal(e, 2*e.ttl, r.TTL)
	require.Equal(e, r.RenewedAt.Add(2*e.ttl), r.ExpiresAt)
	e.pass(e.ttl + e.ttl/2)
	_, err = e.b.Info(e.ctx, l.ID)
	require.NoError(e, err, "the new TTL holds past the old one")
}

func use(e *env) {
	l := e.grant("alice")
	u, err := e.b.Use(e.ctx, l.ID, lease.Operation)
	require.NoError(e, err, "Use")
	require.Equal(e, l.ID, u.ID)
	require.True(e, l.ExpiresAt.Equal(u.ExpiresAt), "Use changes no lease")
	other := lease.Purpose(lease.Operation + 1)
	_, err = e.b.Use(e.ctx, l.ID, other)
	le := e.code(err, lease.CodePurposeMismatch, "Use for another purpose")
	require.Equal(e, other, le.Expected)
	require.Equal(e, lease.Operation, le.Actual)
	_, err = e.b.Revoke(e.ctx, l.ID)
	require.NoError(e, err)
	_, err = e.b.Use(e.ctx, l.ID, lease.Operation)
	e.code(err, lease.CodeStaleUse, "Use after Revoke")
}

func keys(e *env) {
	l, err := e.b.GrantWithKey(e.ctx, e.k("alice"), lease.Operation, e.ttl, e.k("jobs/1"), []byte("one"))
	require.NoError(e, err, "GrantWithKey")
	require.Equal(e, []string{e.k("jobs/1")}, l.Keys)
	_, err = e.b.GrantWithKey(e.ctx, e.k("bob"), lease.Operation, e.ttl, e.k("jobs/1"), nil)
	e.code(err, lease.CodeKeyExists, "GrantWithKey on a present key")

	v, id, ok, err := e.b.Get(e.ctx, e.k("jobs/1"))
	require.NoError(e, err, "Get")
	require.True(e, ok)
	require.Equal(e, []byte("one"), v)
	require.Equal(e, l.ID, id)

	require.NoError(e, e.b.Put(e.ctx, e.k("jobs/2"), []byte("two"), l.ID), "Put attached")
	require.NoError(e, e.b.Put(e.ctx, e.k("config"), []byte("free"), 0), "Put unattached")
	got, err := e.b.Info(e.ctx, l.ID)
	require.NoError(e, err)
	require.Equal(e, []string{e.k("jobs/1"), e.k("jobs/2")}, got.Keys)

	_, _, ok, err = e.b.Get(e.ctx, e.k("absent"))
	require.NoError(e, err, "Get of an absent key")
	require.False(e, ok)

	present, err := e.b.Delete(e.ctx, e.k("jobs/2"))
	require.NoError(e, err, "Delete")
	require.True(e, present)
	present, err = e.b.Delete(e.ctx, e.k("jobs/2"))
	require.NoError(e, err, "Delete twice")
	require.False(e, present)

	r, err := e.b.Revoke(e.ctx, l.ID)
	require.NoError(e, err)
	require.Equal(e, []string{e.k("jobs/1")}, r.Keys, "Revoke deletes the lease's keys")
	_, _, ok, err = e.b.Get(e.ctx, e.k("jobs/1"))
	require.NoError(e, err)
	require.False(e, ok, "a revoked lease's key is gone")
	v, id, ok, err = e.b.Get(e.ctx, e.k("config"))
	require.NoError(e, err)
	require.True(e, ok, "an unattached key stays")
	require.Equal(e, []byte("free"), v)
	require.Zero(e, id)
}

func scan(e *env) {
	l := e.grant("alice")
	for _, k := range []string{"b/2", "a/1", "b/1", "b/3", "c"} {
		require.NoError(e, e.b.Put(e.ctx, e.k(k), []byte(k), l.ID), "Put %s", k)
	}
	kvs, err := e.b.Scan(e.ctx, e.k("b/"), 0)
	require.NoError(e, err, "Scan")
	require.Equal(e, []lease.KeyValue{
		{Key: e.k("b/1"), Value: []byte("b/1"), LeaseID: l.ID},
		{Key: e.k("b/2"), Value: []byte("b/2"), LeaseID: l.ID},
		{Key: e.k("b/3"), Value: []byte("b/3"), LeaseID: l.ID},
	}, kvs, "Scan: keys of the prefix in order")
	kvs, err = e.b.Scan(e.ctx, e.prefix, 2)
	require.NoError(e, err)
	require.Len(e, kvs, 2, "Scan: limit")
	require.Equal(e, e.k("a/1"), kvs[0].Key)
	require.Equal(e, e.k("b/1"), kvs[1].Key)
	kvs, err = e.b.Scan(e.ctx, e.k("zzz"), 0)
	require.NoError(e, err)
	require.Empty(e, kvs)
}

// own returns the IDs of the clause's leases among all, in order.
func (e *env) own(all []lease.Lease) []lease.ID {
	var ids []lease.ID
	for _, l := range all {
		if strings.HasPrefix(l.Holder, e.prefix) {
			ids = append(ids, l.ID)
		}
	}
	return ids
}

func list(e *env) {
	before, err := e.b.List(e.ctx)
	require.NoError(e, err, "List")
	require.Empty(e, e.own(before), "the clause has no leases yet")
	a, b, c := e.grant("a"), e.grant("b"), e.grant("c")
	_, err = e.b.Revoke(e.ctx, b.ID)
	require.NoError(e, err)
	got, err := e.b.List(e.ctx)
	require.NoError(e, err)
	require.Equal(e, []lease.ID{a.ID, c.ID}, e.own(got), "List: the active leases in ID order")
	require.True(e, slices.IsSortedFunc(got, func(x, y lease.Lease) int { return cmp.Compare(x.ID, y.ID) }), "List: in ID order")
}

func expiry(e *env) {
	ends := e.watch()
	l, err := e.b.GrantWithKey(e.ctx, e.k("alice"), lease.Operation, e.ttl, e.k("k"), []byte("v"))
	require.NoError(e, err)
	e.pass(e.ttl / 2)
	_, err = e.b.Info(e.ctx, l.ID)
	require.NoError(e, err, "live before its expiry")
	e.expire(l)
	_, err = e.b.Info(e.ctx, l.ID)
	e.code(err, lease.CodeExpired, "Info after the expiry")
	_, err = e.b.Renew(e.ctx, l.ID)
	require.ErrorIs(e, err, lease.ErrExpired, "Renew after the expiry")
	_, _, ok, err := e.b.Get(e.ctx, e.k("k"))
	require.NoError(e, err)
	require.False(e, ok, "an expired lease's key is gone")
	x := e.ended(ends, l.ID)
	require.Equal(e, l.ID, x.l.ID)
	require.Equal(e, lease.EndExpired, x.reason)
	require.Equal(e, []string{e.k("k")}, x.l.Keys)
}

func revokeEnds(e *env) {
	ends := e.watch()
	l, err := e.b.GrantWithKey(e.ctx, e.k("alice"), lease.Operation, e.ttl, e.k("k"), []byte("v"))
	require.NoError(e, err)
	_, err = e.b.Revoke(e.ctx, l.ID)
	require.NoError(e, err)
	x := e.ended(ends, l.ID)
	require.Equal(e, l.ID, x.l.ID)
	require.Equal(e, lease.EndRevoked, x.reason)
	require.Equal(e, []string{e.k("k")}, x.l.Keys)
}

func keepAlive(e *env) {
	l := e.grant("alice")
	ctx, cancel := context.WithCancelCause(e.ctx)
	defer cancel(nil)
	kctx, err := e.b.KeepAlive(ctx, l.ID)
	require.NoError(e, err, "KeepAlive")
	for range 6 {
		e.pass(e.ttl / 2)
	}
	_, err = e.b.Info(e.ctx, l.ID)
	require.NoError(e, err, "a kept lease outlives three TTLs")
	require.NoError(e, kctx.Err(), "the keep-alive runs")

	stop := errors.New("backendtest: done")
	cancel(stop)
	select {
	case <-kctx.Done():
	case <-time.After(guardLimit / 2):
		e.Fatal("the keep-alive's context did not end after its parent")
	}
	require.ErrorIs(e, context.Cause(kctx), stop, "the cause is the parent's")
	got, err := e.b.Info(e.ctx, l.ID)
	require.NoError(e, err)
	e.expire(got)
	if e.adv == nil {
		// A renewal under way when the parent ended may have moved the
		// expiry once more: wait that out too.
		e.pass(e.ttl)
	}
	_, err = e.b.Info(e.ctx, l.ID)
	require.ErrorIs(e, err, lease.ErrExpired, "a lease no longer kept expires")

	_, err = e.b.KeepAlive(e.ctx, l.ID)
	require.ErrorIs(e, err, lease.ErrExpired, "KeepAlive of an ended lease fails like Renew")
}

func keepAliveEndsWithLease(e *env) {
	l := e.grant("alice")
	kctx, err := e.b.KeepAlive(e.ctx, l.ID)
	require.NoError(e, err)
	_, err = e.b.Revoke(e.ctx, l.ID)
	require.NoError(e, err)
	select {
	case <-kctx.Done():
	case <-time.After(guardLimit / 2):
		e.Fatal("the keep-alive's context did not end with its lease")
	}
	require.ErrorIs(e, context.Cause(kctx), lease.ErrAlreadyRevoked)
}

func badInput(e *env) {
	_, err := e.b.Grant(e.ctx, e.k("alice"), lease.Operation, 0)
	le := e.code(err, lease.CodeInvalidArgument, "Grant with a zero TTL")
	require.NotEmpty(e, le.Field, "the error names the field")
	before, err := e.b.List(e.ctx)
	require.NoError(e, err)
	_, err = e.b.Grant(e.ctx, "", lease.Operation, e.ttl)
	e.code(err, lease.CodeInvalidArgument, "Grant without a holder")
	after, err := e.b.List(e.ctx)
	require.NoError(e, err)
	require.Empty(e, e.own(after), "nothing was granted")
	for _, l := range after {
		require.True(e, slices.ContainsFunc(before, func(b lease.Lease) bool { return b.ID == l.ID }), "lease %d appeared", l.ID)
	}
}
