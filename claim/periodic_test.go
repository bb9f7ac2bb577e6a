package claim_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// tick is the arguments of a periodic job's item: its tick.
type tick struct {
	At time.Time `json:"at"`
}

func (tick) Kind() string { return "tick" }

// mortalLocks is a process's view of a shared lock provider: once killed,
// it releases nothing, as a process that died would not, so the lock
// stays held until its lease expires.
type mortalLocks struct {
	*lock.Memory
	dead atomic.Bool
}

func (m *mortalLocks) Release(ctx context.Context, leases []lock.Lease) error {
	if m.dead.Load() {
		return nil
	}
	return m.Memory.Release(ctx, leases)
}

// processStore is a process's view of a shared store: it counts the
// enqueues it is asked for, and refuses them once the process is dead.
type processStore struct {
	claim.Store
	clock    lease.Clock
	dead     *atomic.Bool
	enqueues atomic.Int64
}

func (s *processStore) Clock() lease.Clock { return s.clock }

func (s *processStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	if s.dead.Load() {
		return nil, &lease.Error{Code: lease.CodeClosed, Op: "test.enqueue", Detail: "process killed"}
	}
	s.enqueues.Add(int64(len(items)))
	return s.Store.Enqueue(ctx, items)
}

func (s *processStore) Close() error { return nil } // the shared store is closed once

// process is one process running a Periodic over a shared store and lock
// provider.
type process struct {
	locks *mortalLocks
	store *processStore
	stop  context.CancelFunc
	done  chan error
}

// startProcess starts a Periodic of jobs over mem and locks, in its own
// "process".
func startProcess(t *testing.T, svc *lease.Service, mem *claim.Memory, jobs ...claim.PeriodicJob) *process {
	t.Helper()
	return startProcessLeasing(t, svc, mem, 3*time.Second, jobs...)
}

// startProcessLeasing is startProcess with an election lease of d.
func startProcessLeasing(t *testing.T, svc *lease.Service, mem *claim.Memory, d time.Duration, jobs ...claim.PeriodicJob) *process {
	t.Helper()
	p := &process{locks: &mortalLocks{Memory: lease.Must(lock.NewMemory(svc))}, done: make(chan error, 1)}
	p.store = &processStore{Store: mem, clock: mem.Clock(), dead: &p.locks.dead}
	b := lease.Must(claim.New(p.store))
	e, err := election.New(p.locks, "periodic", election.WithLeaseDuration(d))
	require.NoError(t, err)
	r, err := claim.NewPeriodic(b, e, jobs...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctx)
	p.stop = cancel
	go func() { p.done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
		require.NoError(t, b.Close())
	})
	return p
}

// kill ends p as a crash would: nothing of it runs any more, and its lock
// is left to expire.
func (p *process) kill(t *testing.T) {
	p.locks.dead.Store(true)
	p.stop()
	require.NoError(t, <-p.done)
	p.done <- nil // for the cleanup
}

// tickRecorder is a worker of the tick kind that keeps the ticks it ran.
type tickRecorder struct {
	mu    sync.Mutex
	ticks map[time.Time]int
}

func (r *tickRecorder) workers(t *testing.T) *claim.Workers {
	r.ticks = map[time.Time]int{}
	var ws claim.Workers
	require.NoError(t, claim.AddWorker(&ws, func(_ context.Context, j claim.Job[tick]) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ticks[j.Args.At.UTC()]++
		return nil
	}))
	return &ws
}

// newSharedStore returns the store the processes share, on a service on
// the system clock (the bubble's), and a Broker over it for the workers.
func newSharedStore(t *testing.T) (*lease.Service, *claim.Memory, *claim.Broker) {
	t.Helper()
	svc := lease.Must(lease.New())
	mem := lease.Must(claim.NewMemory(svc))
	b := lease.Must(claim.New(mem))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	return svc, mem, b
}

func everyTenSeconds() claim.PeriodicJob {
	return claim.PeriodicJob{Name: "report", Schedule: claim.Every(10 * time.Second), Queue: q,
		Args: func(at time.Time) claim.Args { return tick{At: at} }}
}

// requireEveryTickOnce asserts that rec ran each tick from first to last,
// 10s apart, exactly once, and no other.
func requireEveryTickOnce(t *testing.T, rec *tickRecorder, first, last time.Time) {
	t.Helper()
	want := map[time.Time]int{}
	for at := first; !at.After(last); at = at.Add(10 * time.Second) {
		want[at.UTC()] = 1
	}
	assert.Equal(t, want, rec.ticks)
}

func TestPeriodicLeaderKilledNoTickTwiceNoneMissed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, mem, workerBroker := newSharedStore(t)
		start := time.Now() // the bubble starts on a multiple of 10s
		rec := &tickRecorder{}
		stopWork := startWork(t, workerBroker, claim.Worker{Queue: q, Handler: rec.workers(t).Handler()})

		first := startProcess(t, svc, mem, everyTenSeconds())
		synctest.Wait() // first leads
		second := startProcess(t, svc, mem, everyTenSeconds())
		synctest.Wait()
		assert.Equal(t, counts(0, 2, 0, 0), countsOf(t, workerBroker, q), "two ticks enqueued ahead")
		assert.Zero(t, second.store.enqueues.Load(), "only the leader enqueues")

		// Run three ticks, then kill the leader just before the fourth.
		<-time.After(40*time.Second - time.Millisecond)
		synctest.Wait()
		first.kill(t)
		before := second.store.enqueues.Load()
		assert.Zero(t, before, "the follower enqueued nothing while first led")

		// second takes over once first's 3s lease expires, after the
		// fourth tick fell: it must not enqueue the ticks that fell, which
		// have run and whose keys are free, and the fourth and fifth ticks
		// were enqueued ahead by first.
		<-time.After(100 * time.Second)
		synctest.Wait()
		assert.Positive(t, second.store.enqueues.Load(), "second took over")
		require.NoError(t, stopWork())
		rec.mu.Lock()
		defer rec.mu.Unlock()
		requireEveryTickOnce(t, rec, start.Add(10*time.Second), start.Add(130*time.Second))
		assert.Equal(t, counts(0, 2, 0, 0), countsOf(t, workerBroker, q), "the next two ahead")
	})
}

func TestPeriodicTakeoverBeforeATickEnqueuesItOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, mem, workerBroker := newSharedStore(t)
		start := time.Now()
		rec := &tickRecorder{}
		stopWork := startWork(t, workerBroker, claim.Worker{Queue: q, Handler: rec.workers(t).Handler()})
		first := startProcess(t, svc, mem, everyTenSeconds())
		synctest.Wait()
		second := startProcess(t, svc, mem, everyTenSeconds())
		// Kill first mid-interval: second takes over 3s later, before the
		// tick first enqueued ahead falls, and enqueues it again: a no-op.
		<-time.After(25 * time.Second)
		synctest.Wait()
		first.kill(t)
		<-time.After(5 * time.Second)
		synctest.Wait()
		assert.Positive(t, second.store.enqueues.Load(), "second enqueued the ticks it found ahead")
		<-time.After(30 * time.Second)
		synctest.Wait()
		require.NoError(t, stopWork())
		rec.mu.Lock()
		defer rec.mu.Unlock()
		requireEveryTickOnce(t, rec, start.Add(10*time.Second), start.Add(60*time.Second))
	})
}

func TestPeriodicLeaderlessForOverAnIntervalMissesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, mem, workerBroker := newSharedStore(t)
		start := time.Now()
		rec := &tickRecorder{}
		stopWork := startWork(t, workerBroker, claim.Worker{Queue: q, Handler: rec.workers(t).Handler()})
		// A lease of 20s, twice the interval, renewed every 6.67s: killed
		// at 33.4s, just after a renewal, first holds its lock until
		// 53.3s with nobody leading, across the ticks of 40s and 50s. It
		// had enqueued both ahead at 30s.
		first := startProcessLeasing(t, svc, mem, 20*time.Second, everyTenSeconds())
		synctest.Wait()
		second := startProcessLeasing(t, svc, mem, 20*time.Second, everyTenSeconds())
		<-time.After(33400 * time.Millisecond)
		synctest.Wait()
		first.kill(t)
		<-time.After(19 * time.Second)
		synctest.Wait()
		assert.Zero(t, second.store.enqueues.Load(), "nobody leads yet")
		<-time.After(40 * time.Second)
		synctest.Wait()
		assert.Positive(t, second.store.enqueues.Load(), "second took over")
		require.NoError(t, stopWork())
		rec.mu.Lock()
		defer rec.mu.Unlock()
		requireEveryTickOnce(t, rec, start.Add(10*time.Second), start.Add(90*time.Second))
	})
}

func TestPeriodicSchedulesOfAnyKind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, mem, b := newSharedStore(t)
		start := time.Now()
		// A schedule with two ticks only, at 5s and 7s.
		twice := scheduleFunc(func(t time.Time) time.Time {
			for _, at := range []time.Time{start.Add(5 * time.Second), start.Add(7 * time.Second)} {
				if at.After(t) {
					return at
				}
			}
			return time.Time{}
		})
		job := claim.PeriodicJob{Name: "twice", Schedule: twice, Queue: q, Options: []claim.EnqueueOption{claim.Priority(3)},
			Args: func(at time.Time) claim.Args { return tick{At: at} }}
		startProcess(t, svc, mem, job)
		synctest.Wait()
		items, err := b.List(ctx, claim.Query{Queue: q, Limit: 10})
		require.NoError(t, err)
		require.Len(t, items, 2)
		assert.Equal(t, claim.PeriodicKey("twice", start.Add(5*time.Second)), items[0].Key)
		assert.Equal(t, start.Add(5*time.Second), items[0].VisibleAt)
		assert.Equal(t, 3, items[0].Priority, "the job's options apply")
		assert.Equal(t, "tick", items[0].Kind)
		assert.Equal(t, start.Add(7*time.Second), items[1].VisibleAt)
		<-time.After(time.Minute)
		synctest.Wait()
		assert.Equal(t, counts(2, 0, 0, 0), countsOf(t, b, q), "no tick after the last")
	})
}

type scheduleFunc func(time.Time) time.Time

func (f scheduleFunc) Next(t time.Time) time.Time { return f(t) }

func TestEveryTicksOnMultiplesOfItsInterval(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 7, 30, 0, time.UTC)
	assert.Equal(t, time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC), claim.Every(15*time.Minute).Next(at))
	assert.Equal(t, time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC), claim.Every(time.Hour).Next(at))
	on := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	assert.Equal(t, on.Add(time.Hour), claim.Every(time.Hour).Next(on), "strictly after")
	assert.True(t, claim.Every(0).Next(at).IsZero())
	assert.Equal(t, "periodic:report:1772362800000000000", claim.PeriodicKey("report", on))
}

func TestNewPeriodicRefusesBadInput(t *testing.T) {
	b, svc, _ := newBroker(t)
	e, err := election.New(lease.Must(lock.NewMemory(svc)), "periodic")
	require.NoError(t, err)
	good := everyTenSeconds()
	with := func(f func(*claim.PeriodicJob)) claim.PeriodicJob {
		j := good
		f(&j)
		return j
	}
	withOptions := func(opts ...claim.EnqueueOption) claim.PeriodicJob {
		return with(func(j *claim.PeriodicJob) { j.Name, j.Options = "b", opts })
	}
	_, err = claim.NewPeriodic(nil, e, good)
	requireInvalid(t, err, "broker")
	_, err = claim.NewPeriodic(b, nil, good)
	requireInvalid(t, err, "election")
	for field, j := range map[string]claim.PeriodicJob{
		"jobs[1].name":     with(func(j *claim.PeriodicJob) { j.Name = "" }),
		"jobs[1].schedule": with(func(j *claim.PeriodicJob) { j.Name, j.Schedule = "b", nil }),
		"jobs[1].interval": with(func(j *claim.PeriodicJob) { j.Name, j.Schedule = "b", claim.Every(-time.Second) }),
		"jobs[1].queue":    with(func(j *claim.PeriodicJob) { j.Name, j.Queue = "b", "" }),
		"jobs[1].args":     with(func(j *claim.PeriodicJob) { j.Name, j.Args = "b", nil }),
		"jobs[1].priority": with(func(j *claim.PeriodicJob) { j.Name, j.Options = "b", []claim.EnqueueOption{claim.Priority(-1)} }),
		// Every option is checked as Enqueue checks it, with the runner's
		// Key and Delay after the job's.
		"jobs[1].tags":         withOptions(claim.Tags(twentyOneTags()...)),
		"jobs[1].tags[0]":      withOptions(claim.Tags("")),
		"jobs[1].max_attempts": withOptions(claim.MaxAttempts(0)),
		"jobs[1].timeout":      withOptions(claim.Timeout(-time.Second)),
		"jobs[1].key":          withOptions(claim.Unique(claim.UniqueOpts{})), // the runner keys each tick
	} {
		_, err := claim.NewPeriodic(b, e, good, j)
		requireInvalid(t, err, field)
	}
	_, err = claim.NewPeriodic(b, e, good, good)
	le := requireInvalid(t, err, "jobs[1].name")
	assert.Contains(t, le.Detail, `"report" is used by an earlier job`)
	_, err = claim.NewPeriodic(b, e, with(func(j *claim.PeriodicJob) { j.Schedule = claim.Every(0) }))
	requireInvalid(t, err, "jobs[0].interval")
}

// twentyOneTags is one tag more than an item may have.
func twentyOneTags() []string {
	tags := make([]string, claim.MaxTags+1)
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
	return tags
}

// The options a job's ticks will be enqueued with are accepted by
// NewPeriodic when Enqueue accepts them, a Key of the job's own included
// (the runner's replaces it).
func TestNewPeriodicAcceptsTheOptionsEnqueueAccepts(t *testing.T) {
	b, svc, _ := newBroker(t)
	e, err := election.New(lease.Must(lock.NewMemory(svc)), "periodic")
	require.NoError(t, err)
	j := everyTenSeconds()
	j.Options = []claim.EnqueueOption{claim.Tags(twentyOneTags()[:claim.MaxTags]...), claim.Metadata([]byte(`{}`)),
		claim.Priority(claim.MaxPriority), claim.MaxAttempts(1), claim.Timeout(time.Minute), claim.Key("replaced")}
	_, err = claim.NewPeriodic(b, e, j)
	require.NoError(t, err)
}

func TestPeriodicTellsTheObserverOfSkippedTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, mem, _ := newSharedStore(t)
		start := time.Now()
		at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
		three := scheduleFunc(func(t time.Time) time.Time {
			for _, s := range []int{5, 6, 7} {
				if at(s).After(t) {
					return at(s)
				}
			}
			return time.Time{}
		})
		job := claim.PeriodicJob{Name: "odd", Schedule: three, Queue: q, Args: func(tk time.Time) claim.Args {
			switch {
			case tk.Equal(at(5)):
				return nil
			case tk.Equal(at(6)):
				return unencodable{}
			}
			panic("no arguments for this tick")
		}}
		var mu sync.Mutex
		var skipped []claim.Event
		var panics atomic.Int64
		b, err := claim.New(mem, claim.WithObserver(claim.ObserverFunc(func(e claim.Event) {
			if e.Kind == claim.EventTickSkipped {
				mu.Lock()
				defer mu.Unlock()
				skipped = append(skipped, e)
			}
		})), lease.WithPanicHandler(func(*lease.PanicError) { panics.Add(1) }))
		require.NoError(t, err)
		defer func() { require.NoError(t, b.Close()) }()
		e, err := election.New(lease.Must(lock.NewMemory(svc)), "periodic")
		require.NoError(t, err)
		r, err := claim.NewPeriodic(b, e, job)
		require.NoError(t, err)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		<-time.After(10 * time.Second)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)

		mu.Lock()
		defer mu.Unlock()
		// The leader asks for a tick's arguments each time it enqueues
		// ahead, so a tick may be skipped, and told of, more than once.
		byTick := map[time.Time][]claim.Event{}
		for _, e := range skipped {
			assert.Equal(t, "odd", e.Job)
			assert.Equal(t, q, e.Queue)
			byTick[e.Tick] = append(byTick[e.Tick], e)
		}
		require.Len(t, byTick, 3, "each tick whose arguments made no item")
		for _, e := range byTick[at(5)] {
			assert.NoError(t, e.Err, "Args returned nil")
		}
		for _, e := range byTick[at(6)] {
			assert.ErrorIs(t, e.Err, lease.ErrInvalidArgument, "arguments that do not encode")
		}
		for _, e := range byTick[at(7)] {
			assert.NoError(t, e.Err, "Args panicked")
		}
		assert.Equal(t, int64(len(byTick[at(7)])), panics.Load(), "each panic went to the panic handler")
		assert.Equal(t, "tick_skipped", claim.EventTickSkipped.String())
		assert.Equal(t, counts(0, 0, 0, 0), countsOf(t, b, q))
	})
}
