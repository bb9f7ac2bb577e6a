package claim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestGatherBound: the wait after a full claim is as long as that claim
// took, at most maxGather, and none for a claim that took no time or whose
// clock stepped back.
func TestGatherBound(t *testing.T) {
	for took, want := range map[time.Duration]time.Duration{
		-time.Millisecond:      0,
		0:                      0,
		time.Microsecond:       time.Microsecond,
		2 * time.Millisecond:   2 * time.Millisecond,
		maxGather:              maxGather,
		time.Second:            maxGather,
		time.Duration(1 << 62): maxGather,
	} {
		assert.Equal(t, want, gatherBound(took), "took %s", took)
	}
}
