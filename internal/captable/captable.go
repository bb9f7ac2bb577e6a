// Package captable is the one table of which optional capabilities each
// claim store and lock provider of this repository implements. The package
// docs of claim/claimstore and lock/lockprovider and docs/capabilities.md
// show it as Text renders it, which a test of this package checks; each
// implementation's own tests check its row with CheckClaimStore or
// CheckLockProvider, so the table cannot drift from the code.
package captable

import (
	"slices"
	"strings"
	"testing"

	"github.com/leasehold/lease/claim/claimstore"
	"github.com/leasehold/lease/internal/suite"
	"github.com/leasehold/lease/lock/lockprovider"
)

// Row is one implementation and the capabilities it implements, by their
// package-qualified names ("claimstore.Pauser"). It is a plain value.
type Row struct {
	Impl string // as a user names it: "postgres.ClaimStore"
	Caps []string
}

// A capability: its name and whether a value implements it.
type capability struct {
	name string
	is   func(v any) bool
}

func probe[C any]() capability {
	return capability{name: suite.Name[C](), is: func(v any) bool { _, ok := v.(C); return ok }}
}

// claimCaps and lockCaps are the optional interfaces of each seam, in the
// order of the table's columns.
var (
	claimCaps = []capability{
		probe[claimstore.Pauser](), probe[claimstore.QueueLister](), probe[claimstore.Retrier](),
		probe[claimstore.Cleaner](), probe[claimstore.TimeBase](),
	}
	lockCaps = []capability{
		probe[lockprovider.Waiter](), probe[lockprovider.ValueAcquirer](), probe[lockprovider.ValueWaiter](),
		probe[lockprovider.Inspector](), probe[lockprovider.WaitInspector](), probe[lockprovider.TimeBase](),
		probe[lockprovider.HolderWatcher](),
	}
)

// ClaimStores are the claim stores this repository ships.
var ClaimStores = []Row{
	{"claim.Memory", []string{"claimstore.Pauser", "claimstore.QueueLister", "claimstore.Retrier", "claimstore.Cleaner", "claimstore.TimeBase"}},
	{"postgres.ClaimStore", []string{"claimstore.Pauser", "claimstore.QueueLister", "claimstore.Retrier", "claimstore.Cleaner"}},
	{"sqlite.ClaimStore", []string{"claimstore.Pauser", "claimstore.QueueLister", "claimstore.Retrier", "claimstore.Cleaner"}},
	{"replicated.ClaimStore", []string{"claimstore.Pauser", "claimstore.QueueLister", "claimstore.Retrier", "claimstore.Cleaner"}},
}

// LockProviders are the lock providers this repository ships.
var LockProviders = []Row{
	{"lock.Memory", []string{"lockprovider.Waiter", "lockprovider.ValueAcquirer", "lockprovider.ValueWaiter", "lockprovider.Inspector", "lockprovider.WaitInspector", "lockprovider.TimeBase"}},
	{"postgres.LockProvider", []string{"lockprovider.Waiter", "lockprovider.Inspector"}},
	{"sqlite.LockProvider", []string{"lockprovider.Waiter", "lockprovider.Inspector"}},
	{"etcd.Provider", []string{"lockprovider.Waiter", "lockprovider.ValueAcquirer", "lockprovider.ValueWaiter", "lockprovider.Inspector", "lockprovider.HolderWatcher"}},
	{"replicated.LockProvider", []string{"lockprovider.Waiter", "lockprovider.ValueAcquirer", "lockprovider.ValueWaiter", "lockprovider.Inspector", "lockprovider.WaitInspector"}},
}

// ClaimCapabilities returns the optional claim-store interfaces s
// implements, in the table's order.
func ClaimCapabilities(s claimstore.Store) []string { return has(claimCaps, s) }

// LockCapabilities returns the optional lock-provider interfaces p
// implements, in the table's order.
func LockCapabilities(p lockprovider.Provider) []string { return has(lockCaps, p) }

func has(caps []capability, v any) []string {
	var out []string
	for _, c := range caps {
		if c.is(v) {
			out = append(out, c.name)
		}
	}
	return out
}

// CheckClaimStore fails t unless the store s (a nil pointer of its type
// will do) implements exactly the capabilities the row impl of ClaimStores
// lists, and exercised (what claimtest.TestStore returned, if it ran) names
// none beyond them.
func CheckClaimStore(t testing.TB, impl string, s claimstore.Store, exercised []string) {
	t.Helper()
	check(t, ClaimStores, impl, ClaimCapabilities(s), exercised)
}

// CheckLockProvider is CheckClaimStore for a lock provider, against
// LockProviders and what locktest.TestProvider returned.
func CheckLockProvider(t testing.TB, impl string, p lockprovider.Provider, exercised []string) {
	t.Helper()
	check(t, LockProviders, impl, LockCapabilities(p), exercised)
}

func check(t testing.TB, rows []Row, impl string, got, exercised []string) {
	t.Helper()
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Impl == impl })
	if i < 0 {
		t.Fatalf("captable: no row for %s", impl)
	}
	want := rows[i].Caps
	if !slices.Equal(got, want) {
		t.Errorf("captable: %s implements %v, the table says %v", impl, got, want)
	}
	for _, e := range exercised {
		if !slices.Contains(want, e) {
			t.Errorf("captable: the suite exercised %s on %s, which the table does not list", e, impl)
		}
	}
}

// Text renders rows as a table of columns caps ("yes" or "-" each), one
// line each, without trailing spaces: the form the package docs and
// docs/capabilities.md show.
func Text(first string, rows []Row, caps []string) []string {
	short := func(s string) string { return s[strings.IndexByte(s, '.')+1:] }
	cells := [][]string{append([]string{first}, mapped(caps, short)...)}
	for _, r := range rows {
		line := []string{r.Impl}
		for _, c := range caps {
			mark := "-"
			if slices.Contains(r.Caps, c) {
				mark = "yes"
			}
			line = append(line, mark)
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(cells[0]))
	for _, line := range cells {
		for j, c := range line {
			widths[j] = max(widths[j], len(c))
		}
	}
	out := make([]string, len(cells))
	for i, line := range cells {
		var b strings.Builder
		for j, c := range line {
			b.WriteString(c)
			if j < len(line)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-len(c)+2))
			}
		}
		out[i] = b.String()
	}
	return out
}

func mapped(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// ClaimText and LockText are the two tables as the docs show them.
func ClaimText() []string { return Text("store", ClaimStores, names(claimCaps)) }

// LockText is the lock providers' table; see ClaimText.
func LockText() []string { return Text("provider", LockProviders, names(lockCaps)) }

func names(caps []capability) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = c.name
	}
	return out
}
