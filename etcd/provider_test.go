package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

func TestNewRefusesBadConfiguration(t *testing.T) {
	cases := []struct {
		what   string
		client *clientv3.Client
		opts   []Option
		field  string
	}{
		{"nil client", nil, nil, "client"},
		{"empty prefix", testClient, []Option{WithPrefix("")}, "prefix"},
		{"nil clock", testClient, []Option{WithClock(nil)}, "clock"},
		{"nil option", testClient, []Option{nil}, "Option"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			p, err := New(c.client, c.opts...)
			assert.Nil(t, p)
			require.ErrorIs(t, err, lease.ErrInvalidArgument)
			var le *lease.Error
			require.ErrorAs(t, err, &le)
			assert.Equal(t, c.field, le.Field)
		})
	}
}

// TestExpiresAtIsOnTheProvidersClock: the ExpiresAt reported (and recorded
// in the key) counts from the clock WithClock gives, read through a
// never-backwards base, not from time.Now.
func TestExpiresAtIsOnTheProvidersClock(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p, err := New(testClient, WithPrefix(t.Name()+"/"), WithClock(leasetest.NewFakeClock(start)))
	require.NoError(t, err)
	l, err := p.Acquire(t.Context(), "a", "x", 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, l)
	defer func() { require.NoError(t, p.Release(context.WithoutCancel(t.Context()), []lock.Lease{*l})) }()
	assert.True(t, l.ExpiresAt.Equal(start.Add(5*time.Second)), "ExpiresAt %v", l.ExpiresAt)
	h, ok, err := p.Holder(t.Context(), "a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, h.ExpiresAt.Equal(start.Add(5*time.Second)))
}

func TestNewDefaultPrefix(t *testing.T) {
	p, err := New(testClient)
	require.NoError(t, err)
	assert.Equal(t, DefaultPrefix, p.prefix)
}

// TestBadInputSendsNothing: bad arguments are refused with the contract's
// errors before any request, so the store's revision does not move.
func TestBadInputSendsNothing(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	var nilCtx context.Context
	good := lock.Lease{Name: "n", ExecutionID: "a", Token: 1}
	before := revision(t)
	cases := []struct {
		what  string
		field string
		call  func() error
	}{
		{"Acquire nil ctx", "ctx", func() error { _, err := p.Acquire(nilCtx, "n", "a", time.Second); return err }},
		{"Acquire empty name", "name", func() error { _, err := p.Acquire(ctx, "", "a", time.Second); return err }},
		{"Acquire empty executionID", "executionID", func() error { _, err := p.Acquire(ctx, "n", "", time.Second); return err }},
		{"Acquire zero d", "d", func() error { _, err := p.Acquire(ctx, "n", "a", 0); return err }},
		{"Acquire d beyond etcd's largest TTL", "d", func() error { _, err := p.Acquire(ctx, "n", "a", MaxDuration+1); return err }},
		{"Renew negative d", "d", func() error { _, err := p.Renew(ctx, []lock.Lease{good}, -1); return err }},
		{"Renew d beyond etcd's largest TTL", "d", func() error { _, err := p.Renew(ctx, []lock.Lease{good}, MaxDuration+1); return err }},
		{"Renew empty name", "leases[1].Name", func() error {
			_, err := p.Renew(ctx, []lock.Lease{good, {ExecutionID: "a"}}, time.Second)
			return err
		}},
		{"Release nil ctx", "ctx", func() error { return p.Release(nilCtx, []lock.Lease{good}) }},
		{"Release empty executionID", "leases[0].ExecutionID", func() error {
			return p.Release(ctx, []lock.Lease{{Name: "n"}})
		}},
	}
	for _, c := range cases {
		err := c.call()
		require.ErrorIs(t, err, lease.ErrInvalidArgument, c.what)
		var le *lease.Error
		require.ErrorAs(t, err, &le, c.what)
		assert.Equal(t, c.field, le.Field, c.what)
	}
	assert.Equal(t, before, revision(t), "bad input must send no write")
}

// TestTokenIsCreateRevision: the token is the key's create revision, which
// grows across names, and Renew, in both its ways, keeps the key and so the
// token.
func TestTokenIsCreateRevision(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	a, err := p.Acquire(ctx, "x", "a", 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, a)
	kv := get(t, p.key("x"))
	require.NotNil(t, kv)
	assert.Equal(t, uint64(kv.CreateRevision), a.Token)

	b, err := p.Acquire(ctx, "y", "a", 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, b)
	assert.Greater(t, b.Token, a.Token, "revisions grow across the whole store")

	same, err := p.Renew(ctx, []lock.Lease{*a}, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, same, 1)
	assert.Equal(t, kv.Lease, get(t, p.key("x")).Lease, "the same TTL keeps the etcd lease")

	longer, err := p.Renew(ctx, []lock.Lease{*a}, 30*time.Second)
	require.NoError(t, err)
	require.Len(t, longer, 1)
	moved := get(t, p.key("x"))
	assert.NotEqual(t, kv.Lease, moved.Lease, "another TTL moves the key to a new etcd lease")
	assert.Equal(t, kv.CreateRevision, moved.CreateRevision, "the key, and so the token, stay")
	assert.Equal(t, a.Token, longer[0].Token)
	ttl, err := testClient.TimeToLive(ctx, clientv3.LeaseID(moved.Lease))
	require.NoError(t, err)
	assert.EqualValues(t, 30, ttl.GrantedTTL)
	old, err := testClient.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
	require.NoError(t, err)
	assert.EqualValues(t, -1, old.TTL, "the old etcd lease is revoked")

	require.NoError(t, p.Release(ctx, []lock.Lease{longer[0]}))
	assert.Nil(t, get(t, p.key("x")))
	gone, err := testClient.TimeToLive(ctx, clientv3.LeaseID(moved.Lease))
	require.NoError(t, err)
	assert.EqualValues(t, -1, gone.TTL, "Release revokes the etcd lease")

	again, err := p.Acquire(ctx, "x", "a", 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, again)
	assert.Greater(t, again.Token, b.Token)
}

// TestTTLRoundsUp: a duration is rounded up to whole seconds, and
// ExpiresAt is the caller's clock before the request plus the granted TTL.
func TestTTLRoundsUp(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	before := time.Now()
	l, err := p.Acquire(ctx, "x", "a", 2100*time.Millisecond)
	after := time.Now()
	require.NoError(t, err)
	require.NotNil(t, l)
	ttl, err := testClient.TimeToLive(ctx, clientv3.LeaseID(get(t, p.key("x")).Lease))
	require.NoError(t, err)
	assert.EqualValues(t, 3, ttl.GrantedTTL)
	assert.False(t, l.ExpiresAt.Before(before.Add(3*time.Second)), "ExpiresAt %v", l.ExpiresAt)
	assert.False(t, l.ExpiresAt.After(after.Add(3*time.Second)), "ExpiresAt %v", l.ExpiresAt)
}

func TestTTLSeconds(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{
		{1, 1},
		{time.Second, 1},
		{time.Second + 1, 2},
		{1500 * time.Millisecond, 2},
		{time.Minute, 60},
	} {
		assert.Equal(t, c.want, ttlSeconds(c.d), "%v", c.d)
	}
}

func TestHoldingEncoding(t *testing.T) {
	for _, h := range []holding{
		{executionID: "exec with spaces ", expiresAt: time.Unix(0, 1234567890123), ttl: 7},
		{executionID: "exec with spaces ", expiresAt: time.Unix(0, 1234567890123), ttl: 7, value: []byte(" value\x00with any bytes ")},
		{executionID: "v2 1 2 3 looks tagged", expiresAt: time.Unix(0, -5), ttl: 1},
	} {
		got, ok := decodeHolding([]byte(h.encode()))
		require.True(t, ok, "%q", h.encode())
		assert.Equal(t, h.executionID, got.executionID)
		assert.True(t, h.expiresAt.Equal(got.expiresAt))
		assert.Equal(t, h.ttl, got.ttl)
		assert.Equal(t, h.value, got.value)
	}
	for _, bad := range []string{"", "1 2", "x 2 a", "1 x a", "1 0 a", "1 2 ", "v2 1 2 a", "v2 1 2 9 short", "v2 1 2 -1 a", "v2 1 2 0 value", "v2 x 2 1 a"} {
		_, ok := decodeHolding([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

// TestHoldingWithoutValueKeepsItsEncoding: a holding without a value is
// written as before values existed, so older versions read it.
func TestHoldingWithoutValueKeepsItsEncoding(t *testing.T) {
	h := holding{executionID: "a b", expiresAt: time.Unix(0, 42), ttl: 3}
	assert.Equal(t, "42 3 a b", h.encode())
	h.value = []byte("v")
	assert.Equal(t, "v2 42 3 3 a bv", h.encode())
}

// TestForeignValueIsHeld: a key under the prefix that this package did not
// write counts as held, and no lease of it renews or releases it.
func TestForeignValueIsHeld(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	resp, err := testClient.Put(ctx, p.key("x"), "not a holding")
	require.NoError(t, err)
	l, err := p.Acquire(ctx, "x", "a", time.Minute)
	require.NoError(t, err)
	assert.Nil(t, l)
	fake := lock.Lease{Name: "x", ExecutionID: "not a holding", Token: uint64(resp.Header.Revision)}
	got, err := p.Renew(ctx, []lock.Lease{fake}, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, got)
	require.NoError(t, p.Release(ctx, []lock.Lease{fake}))
	assert.NotNil(t, get(t, p.key("x")))
}

func revision(t *testing.T) int64 {
	t.Helper()
	resp, err := testClient.Get(context.Background(), "probe")
	require.NoError(t, err)
	return resp.Header.Revision
}

func get(t *testing.T, key string) *mvccpb.KeyValue {
	t.Helper()
	resp, err := testClient.Get(context.Background(), key)
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0]
}

// TestSkewedExpiryNeverTakesOver: a key whose recorded ExpiresAt has passed
// (as it would on a client whose clock runs ahead) while its etcd lease is
// alive stays held: Acquire waits for etcd, up to ExpiryWait, and never
// deletes the key itself.
func TestSkewedExpiryNeverTakesOver(t *testing.T) {
	p := newTestProvider(t)
	ctx := context.Background()
	id, _ := putSkewed(t, p, "x", 60)
	start := time.Now()
	l, err := p.Acquire(ctx, "x", "b", time.Minute)
	require.NoError(t, err)
	assert.Nil(t, l, "the etcd lease is alive: the lock is held")
	assert.GreaterOrEqual(t, time.Since(start), ExpiryWait, "Acquire waited for etcd")
	kv := get(t, p.key("x"))
	require.NotNil(t, kv)
	assert.Equal(t, int64(id), kv.Lease)
}

// putSkewed makes the lock name held by "a" on an etcd lease of ttl
// seconds, with a recorded ExpiresAt an hour past, as a holder whose clock
// runs ahead would leave it. It returns the etcd lease and the revision of
// the put.
func putSkewed(t *testing.T, p *Provider, name string, ttl int64) (clientv3.LeaseID, int64) {
	t.Helper()
	ctx := context.Background()
	g, err := testClient.Grant(ctx, ttl)
	require.NoError(t, err)
	h := holding{executionID: "a", expiresAt: time.Now().Add(-time.Hour), ttl: ttl}
	put, err := testClient.Put(ctx, p.key(name), h.encode(), clientv3.WithLease(g.ID))
	require.NoError(t, err)
	return g.ID, put.Header.Revision
}
