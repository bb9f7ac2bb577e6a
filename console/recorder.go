package console

import (
	"sync"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
)

// Window is how far back a Recorder remembers: an hour, minute by minute.
const (
	Window     = time.Hour
	bucketSize = time.Minute
	buckets    = int(Window / bucketSize)
)

// MaxRecordedQueues bounds the queues a Recorder keeps apart; events of
// further queues count in the totals only.
const MaxRecordedQueues = 1000

// Recorder counts a Broker's events minute by minute over the last hour,
// per queue and in total, for the console's charts. It is a claim.Observer
// (lease.Observer[claim.Event]): attach it with claim.WithObserver(rec), or,
// beside other observers such as the otel module's, with
// claim.WithObserver(lease.Observers(rec, tel.Claim())), which keeps the
// other's handler spans. Its memory is bounded: an hour of minutes for at
// most MaxRecordedQueues queues.
//
// A Recorder is safe for concurrent use; Observe takes a mutex for a few
// additions and never calls out.
type Recorder struct {
	now func() time.Time

	mu     sync.Mutex
	total  series
	queues map[string]*series
}

// NewRecorder returns a Recorder reading the time from clock, the
// lease.SystemClock when nil. Give it the clock of the Broker's store (a
// Memory's service clock) so that its minutes are the store's.
func NewRecorder(clock lease.Clock) *Recorder {
	if clock == nil {
		clock = lease.SystemClock()
	}
	return &Recorder{now: clock.Now, queues: map[string]*series{}}
}

// series is a ring of minute buckets.
type series [buckets]bucket

type bucket struct {
	minute                           int64 // minutes since the Unix epoch; stale when not the current one
	claimed, completed, failed, dead int
	cancelled                        int
}

func (s *series) add(minute int64, kind claim.EventKind) {
	b := &s[minute%int64(buckets)]
	if b.minute != minute {
		*b = bucket{minute: minute}
	}
	switch kind {
	case claim.EventClaimed:
		b.claimed++
	case claim.EventCompleted:
		b.completed++
	case claim.EventFailed:
		b.failed++
	case claim.EventDeadLettered:
		b.dead++
	case claim.EventCancelled:
		b.cancelled++
	}
}

// Observe counts e; it makes Recorder a claim.Observer.
func (r *Recorder) Observe(e claim.Event) {
	switch e.Kind {
	case claim.EventClaimed, claim.EventCompleted, claim.EventFailed, claim.EventDeadLettered, claim.EventCancelled:
	default:
		return
	}
	minute := r.now().Unix() / 60
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total.add(minute, e.Kind)
	s := r.queues[e.Queue]
	if s == nil {
		if len(r.queues) >= MaxRecordedQueues {
			return
		}
		s = new(series)
		r.queues[e.Queue] = s
	}
	s.add(minute, e.Kind)
}

// Point is one minute of a queue's activity. It is a plain value.
type Point struct {
	At           time.Time `json:"at"` // the minute's start
	Claimed      int       `json:"claimed"`
	Completed    int       `json:"completed"`
	Failed       int       `json:"failed"` // requeued for another attempt
	DeadLettered int       `json:"dead_lettered"`
	Cancelled    int       `json:"cancelled"`
}

// FailureRate is the share of the minute's outcomes that failed: failed
// and dead-lettered over those and completed; 0 when there were none.
func (p Point) FailureRate() float64 {
	bad := p.Failed + p.DeadLettered
	if n := bad + p.Completed; n > 0 {
		return float64(bad) / float64(n)
	}
	return 0
}

// Queue returns the last hour of queue, one Point per minute, oldest
// first, the current minute last.
func (r *Recorder) Queue(queue string) []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.points(r.queues[queue])
}

// Total returns the last hour of every queue together, as Queue does.
func (r *Recorder) Total() []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.points(&r.total)
}

func (r *Recorder) points(s *series) []Point {
	now := r.now().Unix() / 60
	out := make([]Point, buckets)
	for i := range out {
		minute := now - int64(buckets-1-i)
		out[i].At = time.Unix(minute*60, 0).UTC()
		if s == nil {
			continue
		}
		if b := s[minute%int64(buckets)]; b.minute == minute {
			out[i].Claimed, out[i].Completed, out[i].Failed = b.claimed, b.completed, b.failed
			out[i].DeadLettered, out[i].Cancelled = b.dead, b.cancelled
		}
	}
	return out
}
