package timebase

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNowNeverRunsBackwards(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := t0
	b := New(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	set := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }

	assert.Equal(t, int64(0), b.Now())
	set(t0.Add(time.Second))
	assert.Equal(t, int64(time.Second), b.Now())
	set(t0.Add(-time.Hour))
	assert.Equal(t, int64(time.Second), b.Now(), "a step back is time standing still")
	set(t0.Add(time.Hour))
	assert.Equal(t, int64(time.Hour), b.Now(), "a step forward is honoured")
	assert.Equal(t, t0.Add(time.Hour), b.Time(b.Now()))
	assert.Equal(t, int64(time.Hour), b.Nanos(b.Time(int64(time.Hour))))
}

func TestConcurrentReadersNeverSeeTimeGoBack(t *testing.T) {
	b := New(nil) // the monotonic clock
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			last := int64(-1)
			for range 10_000 {
				n := b.Now()
				if n < last {
					t.Errorf("time went back from %d to %d", last, n)
					return
				}
				last = n
			}
		})
	}
	wg.Wait()
}
