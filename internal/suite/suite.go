// Package suite holds what the exported conformance suites (claimtest,
// locktest, electiontest, backendtest) share: the guard against a hanging
// clause, the probe of an optional capability, and the report of the
// capabilities a run exercised.
package suite

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/lease"
)

// Guard panics, with every goroutine's stack, if the clause name of the
// suite pkg has not finished within limit, so that a hang fails with a clue
// instead of at the test binary's timeout. The returned function disarms
// it. It is safe for concurrent use.
func Guard(pkg, name string, limit time.Duration) (disarm func()) {
	timer := time.AfterFunc(limit, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("%s: clause %s did not finish within %v\n\n%s", pkg, name, limit, buf))
	})
	return func() { timer.Stop() }
}

// Name is how a suite names the capability C in its skips and reports:
// its package-qualified type name, such as "claimstore.Retrier".
func Name[C any]() string { return reflect.TypeFor[C]().String() }

// Probe returns v as the capability C, or skips t saying that what (the
// store, the provider) does not implement C: the one skip a suite makes,
// for a clause of a capability the implementation lacks.
func Probe[C any](t testing.TB, pkg, what string, v any) C {
	t.Helper()
	c, ok := v.(C)
	if !ok {
		t.Skipf("%s: %s %T does not implement %s, so the clause does not apply", pkg, what, v, Name[C]())
	}
	return c
}

// Report gathers the capabilities a suite's run exercised: those whose
// clauses ran rather than skipped. It is safe for concurrent use; the zero
// Report is empty and ready.
type Report struct {
	mu  sync.Mutex
	ran map[string]bool
}

// Ran records that a clause of capability name ran.
func (r *Report) Ran(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ran == nil {
		r.ran = make(map[string]bool)
	}
	r.ran[name] = true
}

// Names returns the capabilities recorded, sorted.
func (r *Report) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.ran))
	for n := range r.ran {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Log logs the report on t, once the suite has run, under pkg's name.
func (r *Report) Log(t testing.TB, pkg string) {
	t.Helper()
	names := r.Names()
	if len(names) == 0 {
		t.Logf("%s: no optional capability exercised", pkg)
		return
	}
	t.Logf("%s: optional capabilities exercised: %v", pkg, names)
}

// TimeBase returns the clock of a time base (a claimstore.TimeBase, a
// lockprovider.TimeBase), failing t unless it is not nil and reads the
// time ref, the suite's clock, reads, give or take slack.
func TimeBase(t testing.TB, tb interface{ Clock() lease.Clock }, ref lease.Clock, slack time.Duration) lease.Clock {
	t.Helper()
	clock := tb.Clock()
	if clock == nil {
		t.Fatal("Clock must not return nil")
	}
	before := ref.Now()
	now := clock.Now()
	after := ref.Now()
	if now.Before(before.Add(-slack)) || now.After(after.Add(slack)) {
		t.Errorf("Clock().Now() is %v, want between %v and %v (give or take %v)", now, before, after, slack)
	}
	return clock
}
