package claim

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock/election"
)

// Schedule says when the ticks of a periodic job fall: Next returns the
// first tick strictly after t, or the zero time when there is none. It
// must be deterministic, the same for every process given the same t,
// since every process that may lead computes the ticks alike; and safe for
// concurrent use. Every gives plain intervals; the claim/cron module parses
// cron expressions (a robfig/cron Schedule satisfies Schedule).
type Schedule interface {
	Next(t time.Time) time.Time
}

// Every returns the Schedule of a tick every d, on the multiples of d
// since the zero time (see time.Time.Truncate): Every(time.Hour) ticks on
// the hour, Every(15*time.Minute) at :00, :15, :30 and :45. The ticks are
// thus the same in every process. A d that is not positive has no ticks,
// and NewPeriodic refuses it.
func Every(d time.Duration) Schedule { return interval(d) }

type interval time.Duration

func (d interval) Next(t time.Time) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return t.Truncate(time.Duration(d)).Add(time.Duration(d))
}

// PeriodicJob is a job enqueued at every tick of its Schedule. It is a
// plain value, safe to copy; its funcs must be safe for concurrent use.
type PeriodicJob struct {
	// Name names the job; it is part of each tick's Key
	// ("periodic:NAME:UNIXNANOS"), so it must be unique among the jobs
	// enqueued into one queue, and kept when the job's code changes.
	Name     string
	Schedule Schedule // required
	Queue    string   // required
	// Args returns the arguments of the tick's item (see EnqueueArgs). It
	// is called under the Broker's panic policy; nil, a panic or arguments
	// that do not make an item skip the tick, which the Broker's observer
	// is told of (EventTickSkipped). Required.
	Args func(tick time.Time) Args
	// Options apply to each tick's item (Priority, MaxAttempts, Timeout,
	// Tags, Metadata); its Key and Delay are the runner's own, so a Key
	// option is replaced and Unique refused.
	Options []EnqueueOption
}

// Periodic enqueues the ticks of periodic jobs, each tick exactly once
// however many processes run one: only the leader of its election
// enqueues, and it enqueues ahead of time.
//
// The leader keeps each job's next two ticks enqueued, each as a delayed
// item (Delay up to the tick) whose Key is "periodic:NAME:UNIXNANOS" of
// the tick; when a tick falls it enqueues the one after. A leader that
// takes over enqueues the ticks after the instant it took over: those
// its predecessor enqueued are still waiting, as they are not due, so
// their keys make the enqueue a no-op. A tick that has fallen is never
// enqueued again, so an item completed and gone (its key free) is not run
// twice. A tick is enqueued by whoever leads at any moment from the fall
// of the tick two before it until its own: it is missed only if nobody
// leads through those two intervals, and it is never run late. Enqueuing ahead means that a job
// dropped from every process still has up to two items to run, which
// Broker.Cancel removes.
//
// Run the Periodic in each process, on an election whose lease is shorter
// than the jobs' intervals, and on a store whose clock the processes agree
// on closely (the ticks are computed on the Broker's clock and the delays
// applied on the store's).
//
// A Periodic is safe for concurrent use; each Run is one candidate.
type Periodic struct {
	b        *Broker
	election *election.Election
	jobs     []PeriodicJob
}

// NewPeriodic returns the runner of jobs, enqueued through b by the leader
// of e. Bad input (a nil b or e, a job without a Name, Queue, Schedule or
// Args, a Name used twice, an Every interval that is not positive, which
// has no ticks, an option Enqueue would refuse for a tick's item) gets an
// error matching lease.ErrInvalidArgument whose Field names it ("broker",
// "election", "jobs[i].name", "jobs[i].interval", "jobs[i].tags", ...).
// The options are checked by the check Enqueue applies, with the runner's
// Key and Delay after them, so Unique, which sets the Key, is refused
// ("jobs[i].key"). jobs is copied.
func NewPeriodic(b *Broker, e *election.Election, jobs ...PeriodicJob) (*Periodic, error) {
	const op = "periodic"
	switch {
	case b == nil:
		return nil, invalid(op, "broker", "must not be nil")
	case e == nil:
		return nil, invalid(op, "election", "must not be nil")
	}
	names := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		field := "jobs[" + strconv.Itoa(i) + "]."
		switch {
		case j.Name == "":
			return nil, invalid(op, field+"name", "must not be empty")
		case names[j.Name]:
			return nil, invalid(op, field+"name", strconv.Quote(j.Name)+" is used by an earlier job")
		case j.Schedule == nil:
			return nil, invalid(op, field+"schedule", "must not be nil")
		case j.Queue == "":
			return nil, invalid(op, field+"queue", "must not be empty")
		case j.Args == nil:
			return nil, invalid(op, field+"args", "must not be nil")
		}
		if d, ok := j.Schedule.(interval); ok && d <= 0 {
			return nil, invalid(op, field+"interval", time.Duration(d).String()+" is not positive")
		}
		// The options of a tick's item, checked as its Enqueue will check
		// them: a refusal there would skip every tick.
		if _, err := b.newItem(field, j.Queue, "", nil, tickOptions(j, time.Time{}, time.Second)); err != nil {
			return nil, err
		}
		names[j.Name] = true
	}
	return &Periodic{b: b, election: e, jobs: append([]PeriodicJob(nil), jobs...)}, nil
}

// tickOptions are the options of the item of j's tick, due after delay:
// the job's, then the runner's Key and Delay.
func tickOptions(j PeriodicJob, tick time.Time, delay time.Duration) []EnqueueOption {
	return append(append(make([]EnqueueOption, 0, len(j.Options)+2), j.Options...),
		Key(PeriodicKey(j.Name, tick)), Delay(delay))
}

// Run takes part in the election until ctx is done, and enqueues the
// jobs' ticks while it leads (see Periodic). It campaigns with
// DefaultOwner as its value, which the election's Leader reports. It
// returns nil once ctx is done and nothing of it runs any more, or the
// election's error for bad input. A failed enqueue is retried after a
// backoff of 100ms doubling up to 5s; an error of the Broker (closed, say)
// stops the enqueues until the leadership ends.
func (p *Periodic) Run(ctx context.Context) error {
	if err := checkContext(ctx, "periodic"); err != nil {
		if ctx != nil && ctx.Err() != nil {
			return nil
		}
		return err
	}
	err := p.election.Run(ctx, []byte(DefaultOwner()), election.Callbacks{OnStartedLeading: p.lead})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// Retry delays of a leader's enqueue that failed.
const (
	periodicRetryBase = 100 * time.Millisecond
	periodicRetryMax  = 5 * time.Second
)

// lead enqueues ticks ahead for as long as ctx, the leadership's, lasts.
func (p *Periodic) lead(ctx context.Context, _ *election.Leadership) {
	clock := p.b.clock
	failures := 0
	for ctx.Err() == nil {
		wake, err := p.enqueueAhead(ctx)
		var d time.Duration
		switch {
		case errors.Is(err, lease.ErrClosed):
			<-ctx.Done()
			return
		case err != nil:
			failures++
			d = Backoff(failures, periodicRetryBase, periodicRetryMax)
		case wake.IsZero():
			<-ctx.Done() // no job has a tick left
			return
		default:
			failures = 0
			d = wake.Sub(clock.Now())
		}
		elapsed := make(chan struct{})
		t := clock.AfterFunc(max(d, 0), func() { close(elapsed) })
		select {
		case <-elapsed:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// periodicAhead is how many ticks of each job the leader keeps enqueued.
const periodicAhead = 2

// enqueueAhead enqueues the next ticks of every job and returns the
// earliest of their first ticks, when the leader must enqueue again (zero
// when no job has one). It stops at the first error.
func (p *Periodic) enqueueAhead(ctx context.Context) (wake time.Time, err error) {
	clock := p.b.clock
	for _, j := range p.jobs {
		tick := clock.Now()
		for i := range periodicAhead {
			tick = p.next(j, tick)
			if tick.IsZero() {
				break
			}
			if i == 0 && (wake.IsZero() || tick.Before(wake)) {
				wake = tick
			}
			if err := p.enqueueTick(ctx, j, tick); err != nil {
				return time.Time{}, err
			}
		}
	}
	return wake, nil
}

// next returns j's first tick after t, or zero when it has none (its
// Schedule panicked or went back in time included).
func (p *Periodic) next(j PeriodicJob, t time.Time) time.Time {
	var tick time.Time
	if p.b.call("schedule", func() { tick = j.Schedule.Next(t) }) || !tick.After(t) {
		return time.Time{}
	}
	return tick
}

// enqueueTick enqueues j's item of tick, delayed until then, unless the
// tick has fallen already: an item of a fallen tick may have run and be
// gone, its key free, so enqueuing it again could run the tick twice.
func (p *Periodic) enqueueTick(ctx context.Context, j PeriodicJob, tick time.Time) error {
	var args Args
	if p.b.call("periodic args", func() { args = j.Args(tick) }) || args == nil {
		p.skipped(j, tick, nil) // a panic went to the panic handler
		return nil
	}
	delay := tick.Sub(p.b.clock.Now())
	if delay <= 0 {
		return nil
	}
	_, err := p.b.EnqueueArgs(ctx, j.Queue, args, tickOptions(j, tick, delay)...)
	if errors.Is(err, lease.ErrInvalidArgument) {
		p.skipped(j, tick, err) // no retry would mend them
		return nil
	}
	return err
}

// skipped tells the Broker's observer that j's tick was not enqueued.
func (p *Periodic) skipped(j PeriodicJob, tick time.Time, reason error) {
	if p.b.opts.observer != nil {
		p.b.emit(Event{Kind: EventTickSkipped, Queue: j.Queue, Job: j.Name, Tick: tick, Err: reason})
	}
}

// PeriodicKey returns the Key of the item of the periodic job name's tick:
// "periodic:NAME:UNIXNANOS".
func PeriodicKey(name string, tick time.Time) string {
	return "periodic:" + name + ":" + strconv.FormatInt(tick.UnixNano(), 10)
}
