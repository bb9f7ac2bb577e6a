// Package suite holds what the exported conformance suites (locktest,
// claimtest, electiontest) share.
package suite

import (
	"fmt"
	"runtime"
	"time"
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
