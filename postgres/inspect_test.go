package postgres

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease/lock"
)

func TestHolder(t *testing.T) {
	p := newTestProvider(t)
	_, ok, err := p.Holder(ctx, "job")
	require.NoError(t, err)
	assert.False(t, ok, "never taken")

	l := mustAcquire(t, p, "job", "a")
	h, ok, err := p.Holder(ctx, "job")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, lock.Holding{Name: "job", ExecutionID: "a", Token: l.Token, ExpiresAt: l.ExpiresAt}, h)

	age(t, p, "job", time.Millisecond)
	_, ok, err = p.Holder(ctx, "job")
	require.NoError(t, err)
	assert.False(t, ok, "expired on the database's clock")

	l = mustAcquire(t, p, "job", "b")
	require.NoError(t, p.Release(ctx, []lock.Lease{l}))
	_, ok, err = p.Holder(ctx, "job")
	require.NoError(t, err)
	assert.False(t, ok, "released")
}

// TestHeld lists held locks by prefix on a table that also holds expired and
// released rows, with names full of LIKE's special characters: the prefix
// is plain text.
func TestHeld(t *testing.T) {
	p := newTestProvider(t)
	live := []string{
		"a/1", "a/10", "a/2", "ab", "Z", "é", "a%b", "a_b", `a\b`, "%", "%%", "_", `\`, `\\x`, "axb",
	}
	want := map[string]lock.Lease{}
	for _, name := range live {
		want[name] = mustAcquire(t, p, name, "x-"+name)
	}
	mustAcquire(t, p, "a/expired", "x")
	age(t, p, "a/expired", time.Millisecond)
	require.NoError(t, p.Release(ctx, []lock.Lease{mustAcquire(t, p, "a/released", "x")}))

	names := func(hs []lock.Holding) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Name)
			l := want[h.Name]
			assert.Equal(t, lock.Holding{Name: l.Name, ExecutionID: l.ExecutionID, Token: l.Token, ExpiresAt: l.ExpiresAt}, h)
		}
		return out
	}
	sorted := func(s ...string) []string {
		sort.Strings(s) // byte order
		return s
	}
	for _, tc := range []struct {
		prefix string
		limit  int
		want   []string
	}{
		{"", 0, sorted(live...)},
		{"", 3, sorted(live...)[:3]},
		{"", 100, sorted(live...)},
		{"a/", 0, []string{"a/1", "a/10", "a/2"}},
		{"a/", 2, []string{"a/1", "a/10"}},
		{"a/1", 0, []string{"a/1", "a/10"}},
		{"%", 0, []string{"%", "%%"}},
		{"%%", 0, []string{"%%"}},
		{"_", 0, []string{"_"}},
		{`\`, 0, []string{`\`, `\\x`}},
		{`\\`, 0, []string{`\\x`}},
		{"a%", 0, []string{"a%b"}},
		{"a_", 0, []string{"a_b"}},
		{`a\`, 0, []string{`a\b`}},
		{"é", 0, []string{"é"}},
		{"nothing", 0, nil},
	} {
		got, err := p.Held(ctx, tc.prefix, tc.limit)
		require.NoError(t, err)
		assert.Equal(t, tc.want, names(got), "Held(%q, %d)", tc.prefix, tc.limit)
	}
}

func TestInspectorBadInput(t *testing.T) {
	p := newTestProvider(t)
	var nilCtx context.Context
	for _, tc := range []struct {
		field string
		err   error
	}{
		{"ctx", func() error { _, _, err := p.Holder(nilCtx, "n"); return err }()},
		{"name", func() error { _, _, err := p.Holder(ctx, ""); return err }()},
		{"name", func() error { _, _, err := p.Holder(ctx, "\xff"); return err }()},
		{"name", func() error { _, _, err := p.Holder(ctx, string(make([]byte, MaxNameLen+1))); return err }()},
		{"ctx", func() error { _, err := p.Held(nilCtx, "", 0); return err }()},
		{"limit", func() error { _, err := p.Held(ctx, "", -1); return err }()},
		{"prefix", func() error { _, err := p.Held(ctx, "a\x00", 0); return err }()},
		{"prefix", func() error { _, err := p.Held(ctx, "\xff", 0); return err }()},
	} {
		requireInvalid(t, tc.err, tc.field)
	}
}
