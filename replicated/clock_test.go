package replicated

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogClockRunsTimersInDeadlineOrder(t *testing.T) {
	var moved atomic.Int32
	start := time.Unix(100, 0)
	c := newLogClock(start, func() { moved.Add(1) })
	var ran []string
	c.AfterFunc(3*time.Second, func() { ran = append(ran, "c") })
	c.AfterFunc(time.Second, func() {
		ran = append(ran, "a")
		// Armed for an instant the advance already reached: it runs in
		// the same advance.
		c.AfterFunc(0, func() { ran = append(ran, "a0") })
	})
	c.AfterFunc(time.Second, func() { ran = append(ran, "a2") })
	stopped := c.AfterFunc(2*time.Second, func() { ran = append(ran, "b") })
	assert.Equal(t, int32(2), moved.Load(), "only a new earliest deadline is news")
	next, ok := c.next()
	require.True(t, ok)
	assert.Equal(t, start.Add(time.Second), next)

	assert.True(t, stopped.Stop())
	assert.False(t, stopped.Stop())
	assert.Empty(t, ran, "AfterFunc never runs f itself")

	assert.Equal(t, start.Add(2*time.Second), c.advance(start.Add(2*time.Second)))
	assert.Equal(t, []string{"a", "a2", "a0"}, ran)
	assert.Equal(t, start.Add(2*time.Second), c.advance(start), "the clock never runs back")
	assert.Equal(t, start.Add(2*time.Second), c.Now())

	c.advance(start.Add(3 * time.Second))
	assert.Equal(t, []string{"a", "a2", "a0", "c"}, ran)
	_, ok = c.next()
	assert.False(t, ok)
}
