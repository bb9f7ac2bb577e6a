package suite

import (
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A disarmed guard never fires: were it still armed, its panic would end
// the test binary once the bubble's clock passed the limit.
func TestGuardDisarmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		disarm := Guard("suite", "clause", time.Second)
		disarm()
		<-time.After(2 * time.Second) // past the limit: an armed guard has fired
	})
}
