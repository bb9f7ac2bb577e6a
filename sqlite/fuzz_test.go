package sqlite_test

import (
	"testing"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/claim/claimtest"
	"github.com/leasehold/lease/leasetest"
)

// FuzzClaimStore compares the store with claimtest's reference model, call
// by call and to the nanosecond, on a fake clock: a fresh file per input.
func FuzzClaimStore(f *testing.F) {
	claimtest.FuzzStore(f, func(t *testing.T) (claim.Store, *leasetest.FakeClock) {
		clk := leasetest.NewFakeClock(epoch)
		return newClaimStore(t, tempFile(t), testOptions(clk)...), clk
	})
}
