package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// The fake-clock story, checked.
func Example_fakeClock() {
	fakeClock(context.Background(), os.Stdout)
	// Output:
	// 09:00:00  enqueued 3 (+1 duplicate), 1 delayed {Visible:3 Delayed:1 Claimed:0 Dead:0 Completed:0 Cancelled:0}
	// 09:00:00  alice claims 2                     {Visible:1 Delayed:1 Claimed:2 Dead:0 Completed:0 Cancelled:0}
	// 09:00:00  bob claims 1, then crashes         {Visible:0 Delayed:1 Claimed:3 Dead:0 Completed:0 Cancelled:0}
	// 09:00:20  alice heartbeats both              {Visible:0 Delayed:1 Claimed:3 Dead:0 Completed:0 Cancelled:0}
	// 09:00:30  bob's lease expired: inv-3 is back {Visible:1 Delayed:1 Claimed:2 Dead:0 Completed:0 Cancelled:0}
	//           bob comes back: claim: extend lease 3 stale lease use: item 3 is no longer claimed by this claim [LS_STALE_USE] (stale: true)
	// 09:00:30  alice: inv-1 done, inv-2 requeued  {Visible:1 Delayed:2 Claimed:0 Dead:0 Completed:0 Cancelled:0}
	// 09:01:30  carol: inv-2 attempt 2 requeued
	// 09:02:30  carol: inv-2 attempt 3 dead_lettered
	// 09:03:30  carol drained the queue            {Visible:0 Delayed:0 Claimed:0 Dead:1 Completed:0 Cancelled:0}
	//           dead letter inv-2: #1 alice: payment gateway timeout; #2 carol: payment gateway timeout; #3 carol: payment gateway timeout
	// 09:03:30  dead letters requeued              {Visible:1 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}
}

// The handler of a revoked claim is told why it must stop.
func Example_lostClaim() {
	lostClaim(context.Background(), os.Stdout)
	// Output:
	// hung runs q4 under lease 1
	// handler told to stop: claim: work lease 1 stale lease use: item 1 lost its claim: lease revoked [LS_STALE_USE]
	// claim lost: true, stale: true
	// rescuer claims q4, attempt 2
	// {Visible:0 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}
}

// TestRealClock runs the real-clock part in a synctest bubble, where time
// moves only when every goroutine waits, so its output is exact.
func TestRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		realClock(context.Background(), &out)
		assert.Equal(t, "real clock: workers returned <nil> after img-0#1 img-1#1 img-2#1 img-3#1 img-4#1 img-5#2 img-6#1 img-7#1\n"+
			"real clock: {Visible:0 Delayed:0 Claimed:0 Dead:0 Completed:0 Cancelled:0}\n", out.String())
	})
}
