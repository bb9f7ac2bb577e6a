package claimtest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/leasetest"
)

const brokenEnv = "CLAIMTEST_BROKEN"

// brokenStores maps each way the reference store can be broken to the
// clause of TestStore that must catch it, and says whether FuzzStore's
// seed inputs must catch it too.
var brokenStores = map[string]struct {
	clause string
	fuzz   bool
}{
	"staleComplete":    {"StaleAfterReclaim", true}, // a stale claim's Complete is accepted
	"wrongOrder":       {"ClaimOrder", true},        // claims in ID order, ignoring priority
	"lax":              {"BadInput", true},          // accepts MaxAttempts 0
	"snoozeSpends":     {"SnoozeSpendsNoAttempt", true},
	"aliasing":         {"ReturnedValuesDoNotAlias", false}, // Lookup shares the payload
	"keyless":          {"Keys", true},                      // ignores keys
	"keyStatesIgnored": {"KeysByState", false},              // every state blocks
	"lostNotDead":      {"DeadAfterLastAttempt", true},      // a lost last attempt is requeued
	"racyClaim":        {"ConcurrentClaimersExactlyOnce", false},
	"retryLater":       {"RetryNow", false},                // RetryNow leaves the item delayed
	"clockBehind":      {"TimeBaseIsTheStoreClock", false}, // Clock is not the claims' clock
}

func newBrokenStore(t *testing.T) (*memStore, *leasetest.FakeClock) {
	clock := leasetest.NewFakeClock(epoch)
	s := newMemStore(clock)
	s.broken = os.Getenv(brokenEnv)
	t.Cleanup(func() { _ = s.Close() })
	return s, clock
}

// TestBrokenStore runs the suite on the store broken as CLAIMTEST_BROKEN
// says, in the child processes of TestSuiteCatchesBrokenStores; with the
// variable unset it has nothing to do.
func TestBrokenStore(t *testing.T) {
	if _, ok := brokenStores[os.Getenv(brokenEnv)]; !ok {
		return
	}
	if wrap, ok := brokenMemories[os.Getenv(brokenEnv)]; ok {
		claimtest.TestStore(t, func(t *testing.T, r claim.Retention) (claim.Store, lease.Clock) {
			clock := leasetest.NewFakeClock(epoch)
			svc := lease.Must(lease.New(lease.WithClock(clock)))
			m := lease.Must(claim.NewMemory(svc))
			t.Cleanup(func() {
				_ = m.Close()
				_ = svc.Close()
			})
			return wrap(m), clock
		})
		return
	}
	claimtest.TestStore(t, func(t *testing.T, _ claim.Retention) (claim.Store, lease.Clock) { return newBrokenStore(t) })
}

// brokenMemories are the broken stores of an optional capability, each a
// claim.Memory with one method broken, by the name brokenStores gives
// them.
var brokenMemories = map[string]func(*claim.Memory) claim.Store{
	"retryLater":  func(m *claim.Memory) claim.Store { return retryLater{m} },
	"clockBehind": func(m *claim.Memory) claim.Store { return clockBehind{m} },
}

// retryLater's RetryNow returns the item as it is, still delayed.
type retryLater struct{ *claim.Memory }

func (s retryLater) RetryNow(ctx context.Context, queue string, id claim.ItemID) (claim.Item, error) {
	return s.Lookup(ctx, id)
}

// clockBehind's Clock reads an hour behind the time its claims expire on.
type clockBehind struct{ *claim.Memory }

func (s clockBehind) Clock() lease.Clock { return behind{s.Memory.Clock()} }

// behind reads an hour behind c.
type behind struct{ c lease.Clock }

func (b behind) Now() time.Time { return b.c.Now().Add(-time.Hour) }

func (b behind) AfterFunc(d time.Duration, f func()) lease.Timer { return b.c.AfterFunc(d, f) }

// FuzzBrokenStore runs FuzzStore's seed inputs on the broken store, in the
// same child processes.
func FuzzBrokenStore(f *testing.F) {
	if _, ok := brokenStores[os.Getenv(brokenEnv)]; !ok {
		f.Skip("runs in the child processes of TestSuiteCatchesBrokenStores")
	}
	claimtest.FuzzStore(f, func(t *testing.T) (claim.Store, *leasetest.FakeClock) { return newBrokenStore(t) })
}

// Every broken store fails the clause written for it, and the fuzz target
// where its seeds reach the fault: the suite can fail.
func TestSuiteCatchesBrokenStores(t *testing.T) {
	for name, b := range brokenStores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := child(name, "^TestBrokenStore$/^"+b.clause+"$")
			assert.Error(t, err, "the suite passed a store broken as %s", name)
			want := "--- FAIL: TestBrokenStore/" + b.clause + " "
			if !strings.Contains(out, want) {
				t.Errorf("clause %s did not fail for %s; output:\n%s", b.clause, name, out)
			}
			if b.fuzz {
				out, err := child(name, "^FuzzBrokenStore$")
				assert.Error(t, err, "FuzzStore's seeds passed a store broken as %s", name)
				assert.Contains(t, out, "--- FAIL: FuzzBrokenStore", "FuzzStore did not fail for %s; output:\n%s", name, out)
			}
		})
	}
}

// child runs the tests matching run in a child process with the store
// broken as name.
func child(name, run string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenEnv+"="+name)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
