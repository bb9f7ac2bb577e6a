package backendtest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/backendtest"
	"github.com/leasehold/lease/leasetest"
)

// The suite on a Service in this process, on a fake clock.
func TestService(t *testing.T) {
	backendtest.TestBackend(t, func(t *testing.T) (lease.Backend, lease.Clock) {
		clock := leasetest.NewFakeClock(time.Unix(1_700_000_000, 0))
		svc := lease.Must(lease.New(lease.WithClock(clock)))
		t.Cleanup(func() { require.NoError(t, svc.Close()) })
		return svc, clock
	})
}

// The clauses keep to their own holders and keys: they pass on one
// Service shared by all of them.
func TestServiceShared(t *testing.T) {
	clock := leasetest.NewFakeClock(time.Unix(1_700_000_000, 0))
	svc := lease.Must(lease.New(lease.WithClock(clock)))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	backendtest.TestBackend(t, func(*testing.T) (lease.Backend, lease.Clock) { return svc, clock })
}
