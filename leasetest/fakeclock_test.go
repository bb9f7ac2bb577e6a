package leasetest_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var _ lease.Clock = (*leasetest.FakeClock)(nil)

// fired is one callback run: its name and the clock's time (as an offset
// from start) while it ran.
type fired struct {
	name string
	at   time.Duration
}

// recorder collects callback runs in order.
type recorder struct {
	clk *leasetest.FakeClock
	mu  sync.Mutex
	ran []fired
}

func (r *recorder) cb(name string) func() {
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ran = append(r.ran, fired{name, r.clk.Now().Sub(start)})
	}
}

func (r *recorder) runs() []fired {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fired(nil), r.ran...)
}

// after is a callback named name, scheduled d from now.
type after struct {
	name string
	d    time.Duration
}

// schedule returns a setup that schedules timers in the order given.
func schedule(timers ...after) func(*leasetest.FakeClock, *recorder) {
	return func(clk *leasetest.FakeClock, r *recorder) {
		for _, tm := range timers {
			clk.AfterFunc(tm.d, r.cb(tm.name))
		}
	}
}

func TestFakeClockAdvanceRunsDueCallbacks(t *testing.T) {
	tests := []struct {
		name     string
		schedule func(*leasetest.FakeClock, *recorder)
		advance  []time.Duration
		want     []fired
		wantNow  time.Duration
		wantLeft int
	}{
		{
			name:     "earliest deadline first, Now reads each deadline",
			schedule: schedule(after{"a", 3}, after{"b", 1}, after{"c", 2}),
			advance:  []time.Duration{3},
			want:     []fired{{"b", 1}, {"c", 2}, {"a", 3}},
			wantNow:  3,
		},
		{
			name:     "equal deadlines in scheduling order",
			schedule: schedule(after{"a", 2}, after{"b", 1}, after{"c", 2}, after{"d", 1}),
			advance:  []time.Duration{5},
			want:     []fired{{"b", 1}, {"d", 1}, {"a", 2}, {"c", 2}},
			wantNow:  5,
		},
		{
			name:     "a callback due exactly at the target runs, a later one waits",
			schedule: schedule(after{"a", 5}, after{"b", 6}),
			advance:  []time.Duration{5},
			want:     []fired{{"a", 5}},
			wantNow:  5,
			wantLeft: 1,
		},
		{
			name:     "nothing due: time moves, nothing runs",
			schedule: schedule(after{"a", 10}),
			advance:  []time.Duration{4, 5},
			wantNow:  9,
			wantLeft: 1,
		},
		{
			name:     "d <= 0 runs on Advance(0), earlier deadline first, Now not moved back",
			schedule: schedule(after{"zero", 0}, after{"past", -time.Hour}),
			advance:  []time.Duration{0},
			want:     []fired{{"past", 0}, {"zero", 0}},
		},
		{
			name:     "one Advance per deadline",
			schedule: schedule(after{"a", 1}, after{"b", 2}),
			advance:  []time.Duration{1, 1, 1},
			want:     []fired{{"a", 1}, {"b", 2}},
			wantNow:  3,
		},
		{
			name:    "a timer due by the target runs in the same Advance, a later one does not",
			advance: []time.Duration{3},
			schedule: func(clk *leasetest.FakeClock, r *recorder) {
				clk.AfterFunc(1, func() {
					r.cb("a")()
					clk.AfterFunc(1, r.cb("soon"))
					clk.AfterFunc(5, r.cb("later"))
				})
			},
			want:     []fired{{"a", 1}, {"soon", 2}},
			wantNow:  3,
			wantLeft: 1,
		},
		{
			name:    "a timer scheduled for now runs before time moves on",
			advance: []time.Duration{3},
			schedule: func(clk *leasetest.FakeClock, r *recorder) {
				clk.AfterFunc(1, func() {
					r.cb("a")()
					clk.AfterFunc(0, r.cb("now"))
				})
				clk.AfterFunc(2, r.cb("b"))
			},
			want:    []fired{{"a", 1}, {"now", 1}, {"b", 2}},
			wantNow: 3,
		},
		{
			name:    "a ticker re-arming itself fires once per period",
			advance: []time.Duration{10},
			schedule: func(clk *leasetest.FakeClock, r *recorder) {
				var tick func()
				tick = func() {
					r.cb("tick")()
					clk.AfterFunc(4, tick)
				}
				clk.AfterFunc(4, tick)
			},
			want:     []fired{{"tick", 4}, {"tick", 8}},
			wantNow:  10,
			wantLeft: 1,
		},
		{
			name:    "a callback stops another due at the same instant",
			advance: []time.Duration{1},
			schedule: func(clk *leasetest.FakeClock, r *recorder) {
				var b lease.Timer
				clk.AfterFunc(1, func() {
					r.cb("a")()
					if !b.Stop() {
						r.cb("stop failed")()
					}
				})
				b = clk.AfterFunc(1, r.cb("b"))
			},
			want:    []fired{{"a", 1}},
			wantNow: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := leasetest.NewFakeClock(start)
			r := &recorder{clk: clk}
			tt.schedule(clk, r)
			require.Empty(t, r.runs(), "AfterFunc must never run its callback")
			for _, d := range tt.advance {
				clk.Advance(d)
			}
			assert.Equal(t, tt.want, r.runs())
			assert.Equal(t, start.Add(tt.wantNow), clk.Now())
			assert.Equal(t, tt.wantLeft, clk.Pending())
		})
	}
}

func TestFakeClockStop(t *testing.T) {
	tests := []struct {
		name      string
		advance   time.Duration // before the first Stop
		wantStops []bool        // results of Stop called twice
		wantRan   bool          // after a final Advance past the deadline
	}{
		{name: "before firing", advance: 4, wantStops: []bool{true, false}, wantRan: false},
		{name: "after firing", advance: 5, wantStops: []bool{false, false}, wantRan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := leasetest.NewFakeClock(start)
			var runs atomic.Int32
			tm := clk.AfterFunc(5, func() { runs.Add(1) })
			clk.Advance(tt.advance)
			assert.Equal(t, tt.wantStops, []bool{tm.Stop(), tm.Stop()})
			assert.Equal(t, 0, clk.Pending())
			clk.Advance(time.Hour)
			want := int32(0)
			if tt.wantRan {
				want = 1
			}
			assert.Equal(t, want, runs.Load())
		})
	}
}

func TestFakeClockPendingAndNextDeadline(t *testing.T) {
	clk := leasetest.NewFakeClock(start)
	_, ok := clk.NextDeadline()
	require.False(t, ok)

	a := clk.AfterFunc(7, func() {})
	clk.AfterFunc(3, func() {})
	at, ok := clk.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, start.Add(3), at)
	assert.Equal(t, 2, clk.Pending())

	clk.Advance(3)
	at, ok = clk.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, start.Add(7), at)
	assert.Equal(t, 1, clk.Pending())

	require.True(t, a.Stop())
	_, ok = clk.NextDeadline()
	assert.False(t, ok)
	assert.Equal(t, 0, clk.Pending())
}

func TestFakeClockSet(t *testing.T) {
	clk := leasetest.NewFakeClock(start)
	r := &recorder{clk: clk}
	clk.AfterFunc(2, r.cb("a"))
	clk.AfterFunc(9, r.cb("b"))

	clk.Set(start.Add(5))
	assert.Equal(t, []fired{{"a", 2}}, r.runs())
	assert.Equal(t, start.Add(5), clk.Now())

	clk.Set(start.Add(5)) // to Now: allowed, nothing due
	assert.Equal(t, []fired{{"a", 2}}, r.runs())

	assert.Panics(t, func() { clk.Set(start.Add(4)) }, "Set before Now")
	assert.Equal(t, start.Add(5), clk.Now(), "a refused Set changes nothing")

	clk.Set(start.Add(9))
	assert.Equal(t, []fired{{"a", 2}, {"b", 9}}, r.runs())
}

func TestFakeClockNegativeAdvancePanics(t *testing.T) {
	clk := leasetest.NewFakeClock(start)
	r := &recorder{clk: clk}
	clk.AfterFunc(0, r.cb("a"))
	assert.Panics(t, func() { clk.Advance(-1) })
	assert.Equal(t, start, clk.Now())
	assert.Empty(t, r.runs(), "a refused Advance runs nothing")
	assert.Equal(t, 1, clk.Pending())
}

// TestFakeClockConcurrentUse schedules, stops and advances from several
// goroutines at once: every callback runs exactly once unless a Stop that
// returned true got to it first, and the times callbacks see never go back.
func TestFakeClockConcurrentUse(t *testing.T) {
	const (
		schedulers = 4
		perWorker  = 200
		advancers  = 2
		advances   = 100
	)
	clk := leasetest.NewFakeClock(start)
	var (
		mu      sync.Mutex
		seen    []time.Time
		runs    [schedulers * perWorker]atomic.Int32
		stopped atomic.Int32
		wg      sync.WaitGroup
	)
	for w := range schedulers {
		wg.Go(func() {
			for i := range perWorker {
				n := w*perWorker + i
				tm := clk.AfterFunc(time.Duration(i%7), func() {
					runs[n].Add(1)
					mu.Lock()
					seen = append(seen, clk.Now())
					mu.Unlock()
				})
				if i%3 == 0 && tm.Stop() {
					stopped.Add(1)
					runs[n].Add(100) // marks a stopped callback: it must not run too
				}
			}
		})
	}
	for range advancers {
		wg.Go(func() {
			for range advances {
				clk.Advance(1)
			}
		})
	}
	wg.Wait()
	clk.Advance(time.Hour) // run whatever is still due

	ranOnce, stoppedOnly := 0, 0
	for n := range runs {
		switch got := runs[n].Load(); got {
		case 1:
			ranOnce++
		case 100:
			stoppedOnly++
		default:
			t.Fatalf("callback %d: run count %d (100 = stopped), want exactly one of run or stopped", n, got)
		}
	}
	assert.Equal(t, int(stopped.Load()), stoppedOnly)
	assert.Equal(t, schedulers*perWorker, ranOnce+stoppedOnly)
	assert.Equal(t, 0, clk.Pending())
	assert.Equal(t, start.Add(time.Duration(advancers*advances)+time.Hour), clk.Now())
	for i := 1; i < len(seen); i++ {
		require.False(t, seen[i].Before(seen[i-1]), fmt.Sprintf("callback %d saw time go back", i))
	}
}

func TestStalledNeverFires(t *testing.T) {
	c := leasetest.NewFakeClock(time.Unix(0, 0))
	s := leasetest.Stalled(c)
	fired := false
	timer := s.AfterFunc(time.Second, func() { fired = true })
	c.Advance(time.Hour)
	require.False(t, fired)
	require.Equal(t, time.Unix(3600, 0), s.Now(), "reads the fake clock's time")
	require.Zero(t, c.Pending(), "schedules nothing on the fake clock")
	require.True(t, timer.Stop())
}

// TestFakeClockRewind: a step back runs nothing and moves no deadline;
// timers run when the clock reaches their deadlines again, including timers
// scheduled after the step, which count from the rewound time.
func TestFakeClockRewind(t *testing.T) {
	clk := leasetest.NewFakeClock(start)
	r := &recorder{clk: clk}
	clk.AfterFunc(10, r.cb("before"))
	clk.Advance(5)

	clk.Rewind(5)
	assert.Equal(t, start, clk.Now())
	assert.Empty(t, r.runs(), "rewinding runs nothing")
	clk.AfterFunc(3, r.cb("after"))
	at, ok := clk.NextDeadline()
	require.True(t, ok)
	assert.Equal(t, start.Add(3), at)

	clk.Advance(9)
	assert.Equal(t, []fired{{"after", 3}}, r.runs(), "the earlier deadline is not due yet")
	clk.Advance(1)
	assert.Equal(t, []fired{{"after", 3}, {"before", 10}}, r.runs(), "kept its absolute deadline")

	clk.Rewind(0)
	assert.Equal(t, start.Add(10), clk.Now())
	assert.Panics(t, func() { clk.Rewind(-1) })
	assert.Equal(t, start.Add(10), clk.Now(), "a refused Rewind changes nothing")
}
