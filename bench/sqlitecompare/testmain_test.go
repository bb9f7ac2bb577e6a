package sqlitecompare

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain serves as the other process of the cross-process pickup
// measurement when started as one (see ServeChild), and otherwise runs
// the tests, checking that none leaks a goroutine but goqite's.
func TestMain(m *testing.M) {
	ServeChild()
	// goqite's jobs.Runner leaves the goroutine that extends a job's
	// message asleep for most of the extend interval after the job ended.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("maragu.dev/goqite/jobs.(*Runner).receiveAndRun.func1.3"))
}
