package locktest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/locktest"
)

const brokenEnv = "LOCKTEST_BROKEN"

// brokenProviders maps each broken provider to the clause that must catch
// it.
var brokenProviders = map[string]struct {
	wrap   func(*lock.Memory, *lease.Service) lock.Provider
	clause string
}{
	"reentrant":      {func(m *lock.Memory, _ *lease.Service) lock.Provider { return reentrant{m} }, "Contention"},
	"unfenced":       {func(m *lock.Memory, _ *lease.Service) lock.Provider { return unfenced{m} }, "TokensIncrease"},
	"renewsAll":      {func(m *lock.Memory, _ *lease.Service) lock.Provider { return renewsAll{m} }, "RenewPartialInInputOrder"},
	"releasesByName": {func(m *lock.Memory, svc *lease.Service) lock.Provider { return releasesByName{m, svc} }, "StaleReleaseKeepsNewHolder"},
	"racy":           {func(*lock.Memory, *lease.Service) lock.Provider { return &racy{holder: map[string]lock.Lease{}} }, "ConcurrentAcquirers"},
	"lax":            {func(m *lock.Memory, _ *lease.Service) lock.Provider { return lax{m} }, "BadInput"},
	"impatient":      {func(m *lock.Memory, _ *lease.Service) lock.Provider { return impatient{m} }, "WaitContextCancelled"},
	"unsorted":       {func(m *lock.Memory, _ *lease.Service) lock.Provider { return unsorted{m} }, "InspectHeld"},
	"blind":          {func(m *lock.Memory, _ *lease.Service) lock.Provider { return blind{m} }, "WaitingListsWaiters"},
	"skewed":         {func(m *lock.Memory, _ *lease.Service) lock.Provider { return skewed{m} }, "TimeBaseIsTheLeaseClock"},
	"valueless":      {func(m *lock.Memory, _ *lease.Service) lock.Provider { return valueless{m} }, "ValueWaitHandOff"},
}

// TestBrokenProvider runs the suite on the broken provider named by
// LOCKTEST_BROKEN, in the child processes of TestSuiteCatchesBrokenProviders;
// with the variable unset it has nothing to do.
func TestBrokenProvider(t *testing.T) {
	b, ok := brokenProviders[os.Getenv(brokenEnv)]
	if !ok {
		return
	}
	locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		clock := leasetest.NewFakeClock(leasetestEpoch)
		svc := lease.Must(lease.New(lease.WithClock(clock)))
		t.Cleanup(func() { _ = svc.Close() })
		return b.wrap(lease.Must(lock.NewMemory(svc)), svc), clock
	})
}

// Every broken provider fails the clause written for it: the suite can
// fail.
func TestSuiteCatchesBrokenProviders(t *testing.T) {
	for name, b := range brokenProviders {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenProvider$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+name)
			out, err := cmd.CombinedOutput()
			assert.Error(t, err, "the suite passed a provider that is %s", name)
			want := "--- FAIL: TestBrokenProvider/" + b.clause + " "
			if !strings.Contains(string(out), want) {
				t.Errorf("clause %s did not fail for %s; output:\n%s", b.clause, name, out)
			}
		})
	}
}

func TestMemory(t *testing.T) {
	locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		clock := leasetest.NewFakeClock(leasetestEpoch)
		svc := lease.Must(lease.New(lease.WithClock(clock)))
		t.Cleanup(func() { _ = svc.Close() })
		return lease.Must(lock.NewMemory(svc)), clock
	})
}

// A provider without the optional capabilities passes: their clauses skip.
func TestProviderWithoutCapabilities(t *testing.T) {
	locktest.TestProvider(t, func(t *testing.T) (lock.Provider, lease.Clock) {
		clock := leasetest.NewFakeClock(leasetestEpoch)
		svc := lease.Must(lease.New(lease.WithClock(clock)))
		t.Cleanup(func() { _ = svc.Close() })
		return plain{lease.Must(lock.NewMemory(svc))}, clock
	})
}
