package otel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
	"github.com/leasehold/lease/otel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// harness is a Telemetry on an in-memory metric reader and span recorder.
type harness struct {
	tel    *otel.Telemetry
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newHarness(t *testing.T, opts ...otel.Option) *harness {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel, err := otel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), tp, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tel.Close()) })
	return &harness{tel: tel, reader: reader, spans: spans, tp: tp}
}

// metrics collects the metrics, by name.
func (h *harness) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, otel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// value returns the value of the data point of the sum name whose
// attributes are attrs, and whether there is one.
func value(t *testing.T, ms map[string]metricdata.Metrics, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	m, ok := ms[name]
	require.True(t, ok, "no metric %s", name)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", name, m.Data)
	want := attribute.NewSet(attrs...)
	for _, dp := range sum.DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Value
		}
	}
	t.Fatalf("%s has no data point %v", name, attrs)
	return 0
}

// histogram returns the count and sum of the data point of the histogram
// name whose attributes are attrs.
func histogram(t *testing.T, ms map[string]metricdata.Metrics, name string, attrs ...attribute.KeyValue) (uint64, float64) {
	t.Helper()
	m, ok := ms[name]
	require.True(t, ok, "no metric %s", name)
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%s is a %T", name, m.Data)
	want := attribute.NewSet(attrs...)
	for _, dp := range h.DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Count, dp.Sum
		}
	}
	t.Fatalf("%s has no data point %v", name, attrs)
	return 0, 0
}

// lateClock fires every timer a second late, as a stalled process would.
type lateClock struct{ *leasetest.FakeClock }

func (c lateClock) AfterFunc(d time.Duration, f func()) lease.Timer {
	return c.FakeClock.AfterFunc(d+time.Second, f)
}

var (
	purpose = attribute.Key("lease.purpose")
	reason  = attribute.Key("lease.end.reason")
	queue   = attribute.Key("lease.claim.queue")
	outcome = attribute.Key("lease.claim.outcome")
)

// leaseSetups are the ways a service is observed: by the Lease observer
// alone, counting from every event ("events"); with the service's counts
// registered and the observer given LeaseEvents ("stats", the cheap way);
// and with the counts registered and every event given, which must not
// count twice ("stats-all-events").
var leaseSetups = []struct {
	name string
	opt  func(*otel.Telemetry) lease.Option
	reg  bool
}{
	{"events", func(tel *otel.Telemetry) lease.Option { return lease.WithObserver(tel.Lease()) }, false},
	{"stats", func(tel *otel.Telemetry) lease.Option { return lease.WithObserverOf(tel.Lease(), otel.LeaseEvents) }, true},
	{"stats-all-events", func(tel *otel.Telemetry) lease.Option { return lease.WithObserver(tel.Lease()) }, true},
}

// observedService returns a service on clock observed by h's Telemetry as
// setup says, closed when the test ends.
func observedService(t *testing.T, h *harness, clock lease.Clock, opt func(*otel.Telemetry) lease.Option, reg bool) *lease.Service {
	t.Helper()
	svc := lease.Must(lease.New(lease.WithClock(clock), opt(h.tel)))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	if reg {
		require.NoError(t, h.tel.ObserveService(svc))
	}
	return svc
}

func TestLeaseMetrics(t *testing.T) {
	for _, setup := range leaseSetups {
		t.Run(setup.name, func(t *testing.T) {
			h := newHarness(t)
			fake := leasetest.NewFakeClock(t0)
			svc := observedService(t, h, lateClock{fake}, setup.opt, setup.reg)
			checkLeaseMetrics(t, h, svc, fake)
		})
	}
}

// checkLeaseMetrics runs grants, a renewal, a revocation, denials and an
// expiry on svc, and checks the lease metrics h collects.
func checkLeaseMetrics(t *testing.T, h *harness, svc *lease.Service, fake *leasetest.FakeClock) {
	ctx := context.Background()

	a, err := svc.Grant(ctx, "a", lease.Operation, time.Hour)
	require.NoError(t, err)
	b, err := svc.Grant(ctx, "b", lease.Operation, time.Hour)
	require.NoError(t, err)
	_, err = svc.Grant(ctx, "c", lease.StateWrite, 10*time.Second)
	require.NoError(t, err)
	_, err = svc.Renew(ctx, a.ID)
	require.NoError(t, err)
	_, err = svc.Revoke(ctx, b.ID)
	require.NoError(t, err)
	_, err = svc.Use(ctx, a.ID, lease.StateWrite)
	require.ErrorIs(t, err, lease.ErrPurposeMismatch)
	_, err = svc.Use(ctx, b.ID, lease.Operation)
	require.ErrorIs(t, err, lease.ErrStaleUse)
	fake.Advance(11 * time.Second) // c expires at 10 s; its timer fires at 11 s

	ms := h.metrics(t)
	op, sw := purpose.String("operation"), purpose.String("state_write")
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.active", op))
	assert.Equal(t, int64(0), value(t, ms, "lease.leases.active", sw))
	assert.Equal(t, int64(2), value(t, ms, "lease.leases.granted", op))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.granted", sw))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.renewed", op))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.ended", op, reason.String("revoked")))
	assert.Equal(t, int64(0), value(t, ms, "lease.leases.ended", op, reason.String("expired")))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.ended", sw, reason.String("expired")))
	code := attribute.Key("lease.code")
	assert.Equal(t, int64(1), value(t, ms, "lease.denials", code.String(string(lease.CodePurposeMismatch))))
	assert.Equal(t, int64(1), value(t, ms, "lease.denials", code.String(string(lease.CodeStaleUse))))
	n, sum := histogram(t, ms, "lease.expiry.lag")
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 1.0, sum, 1e-9)
	assert.Equal(t, "s", ms["lease.expiry.lag"].Unit)
}

// Registered services add up by purpose; a closed one keeps its totals
// and leaves the active count; registering twice, or after the events of
// a service were counted, counts nothing twice.
func TestObserveServiceAddsUpServices(t *testing.T) {
	h := newHarness(t)
	fake := leasetest.NewFakeClock(t0)
	ctx := context.Background()
	a := lease.Must(lease.New(lease.WithClock(fake), lease.WithObserver(h.tel.Lease())))
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	_, err := a.Grant(ctx, "h", lease.Operation, time.Minute) // counted from the event first
	require.NoError(t, err)
	require.NoError(t, h.tel.ObserveService(a))
	require.NoError(t, h.tel.ObserveService(a))
	b := observedService(t, h, fake, leaseSetups[1].opt, true)
	for _, svc := range []*lease.Service{a, b} {
		_, err := svc.Grant(ctx, "h", lease.Operation, time.Minute)
		require.NoError(t, err)
	}
	l, err := b.Grant(ctx, "h", lease.StateWrite, time.Minute)
	require.NoError(t, err)
	_, err = b.Renew(ctx, l.ID)
	require.NoError(t, err)

	op, sw := purpose.String("operation"), purpose.String("state_write")
	ms := h.metrics(t)
	assert.Equal(t, int64(3), value(t, ms, "lease.leases.active", op))
	assert.Equal(t, int64(3), value(t, ms, "lease.leases.granted", op))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.active", sw))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.renewed", sw))

	require.NoError(t, b.Close())
	for range 2 { // once seen closed, then let go of
		ms = h.metrics(t)
		assert.Equal(t, int64(2), value(t, ms, "lease.leases.active", op))
		assert.Equal(t, int64(3), value(t, ms, "lease.leases.granted", op))
		assert.Equal(t, int64(0), value(t, ms, "lease.leases.active", sw))
		assert.Equal(t, int64(1), value(t, ms, "lease.leases.granted", sw))
		assert.Equal(t, int64(1), value(t, ms, "lease.leases.renewed", sw))
	}
	fake.Advance(time.Minute) // a's leases expire
	ms = h.metrics(t)
	assert.Equal(t, int64(0), value(t, ms, "lease.leases.active", op))
	assert.Equal(t, int64(2), value(t, ms, "lease.leases.ended", op, reason.String("expired")))
	n, _ := histogram(t, ms, "lease.expiry.lag")
	assert.Equal(t, uint64(2), n)
}

// A lease past its expiry whose timer has not fired is expired by the
// collection itself, and its lag recorded in the same collection.
func TestObserveServiceCollectionSettles(t *testing.T) {
	h := newHarness(t)
	fake := leasetest.NewFakeClock(t0)
	svc := observedService(t, h, leasetest.Stalled(fake), leaseSetups[1].opt, true)
	_, err := svc.Grant(context.Background(), "h", lease.Operation, time.Second)
	require.NoError(t, err)
	fake.Advance(3 * time.Second)
	ms := h.metrics(t)
	op := purpose.String("operation")
	assert.Equal(t, int64(0), value(t, ms, "lease.leases.active", op))
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.ended", op, reason.String("expired")))
	n, sum := histogram(t, ms, "lease.expiry.lag")
	assert.Equal(t, uint64(1), n)
	assert.InDelta(t, 2.0, sum, 1e-9)
}

// A collection reads every registered service's Stats, which settles what
// is due and runs the service's ending subscribers on the collecting
// goroutine: they run without the Telemetry's registry locked, and may
// register another service.
func TestObserveServiceCollectionRunsHooksUnlocked(t *testing.T) {
	h := newHarness(t)
	fake := leasetest.NewFakeClock(t0)
	svc := observedService(t, h, leasetest.Stalled(fake), leaseSetups[1].opt, true)
	other := lease.Must(lease.New(lease.WithClock(fake)))
	t.Cleanup(func() { require.NoError(t, other.Close()) })
	var locked []bool
	svc.OnEnd(func(lease.Lease, lease.EndReason) {
		locked = append(locked, h.tel.LeaseCountsLocked())
		if !locked[len(locked)-1] { // registering under the lock would deadlock
			assert.NoError(t, h.tel.ObserveService(other))
		}
	})
	ctx := context.Background()
	_, err := svc.Grant(ctx, "h", lease.Operation, time.Second)
	require.NoError(t, err)
	_, err = other.Grant(ctx, "h", lease.StateWrite, time.Minute)
	require.NoError(t, err)
	fake.Advance(2 * time.Second)

	h.metrics(t) // expires svc's lease: its subscriber runs here
	require.Equal(t, []bool{false}, locked)
	ms := h.metrics(t)
	assert.Equal(t, int64(1), value(t, ms, "lease.leases.active", purpose.String("state_write")), "the service registered by the hook")
}

func TestObserveServiceRefusesNilAndIgnoresAClosedTelemetry(t *testing.T) {
	h := newHarness(t)
	require.Error(t, h.tel.ObserveService(nil))
	require.NoError(t, h.tel.Close())
	svc := lease.Must(lease.New(lease.WithObserver(h.tel.Lease())))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	require.NoError(t, h.tel.ObserveService(svc))
	_, err := svc.Grant(context.Background(), "h", lease.Operation, time.Minute)
	require.NoError(t, err)
	assert.NotContains(t, h.metrics(t), "lease.leases.granted")
}

func TestLeaseDropsAreCounted(t *testing.T) {
	h := newHarness(t)
	obs := h.tel.Lease()
	obs.Observe(lease.Event{Kind: lease.EventDecisionsDropped, Count: 3})
	obs.Observe(lease.Event{Kind: lease.EventEventsDropped, Count: 2})
	ms := h.metrics(t)
	assert.Equal(t, int64(3), value(t, ms, "lease.audit.dropped"))
	assert.Equal(t, int64(2), value(t, ms, "lease.observer.dropped"))
}

func TestTraceIDCarriesTheSpanIntoDecisions(t *testing.T) {
	h := newHarness(t)
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0)), lease.WithTraceIDFunc(otel.TraceID)))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	ctx, span := h.tp.Tracer("test").Start(context.Background(), "request")
	_, err := svc.Grant(ctx, "a", lease.Operation, time.Minute)
	require.NoError(t, err)
	span.End()
	_, err = svc.Grant(lease.WithTraceID(context.Background(), "from-header"), "b", lease.Operation, time.Minute)
	require.NoError(t, err)

	audit := svc.Audit()
	require.Len(t, audit, 2)
	assert.Equal(t, span.SpanContext().TraceID().String(), audit[0].TraceID)
	assert.Len(t, audit[0].TraceID, 32)
	assert.Equal(t, "from-header", audit[1].TraceID, "without a span, lease.WithTraceID's")
}

func TestClaimMetrics(t *testing.T) {
	h := newHarness(t)
	fake := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(fake)))
	b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc)), claim.WithObserver(h.tel.Claim())))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, svc.Close())
	})
	ctx := context.Background()
	for _, p := range []string{"a", "b", "c"} {
		_, err := b.Enqueue(ctx, "mail", []byte(p), claim.MaxAttempts(1))
		require.NoError(t, err)
	}
	fake.Advance(2 * time.Second)
	cs, err := b.Claim(ctx, "mail", "w", 3, time.Minute)
	require.NoError(t, err)
	require.Len(t, cs, 3)
	require.NoError(t, b.Complete(ctx, cs[0]))
	_, err = b.Fail(ctx, cs[1], "bad", time.Second, time.Second)
	require.NoError(t, err)
	require.NoError(t, b.Snooze(ctx, cs[2], 0))

	ms := h.metrics(t)
	mail := queue.String("mail")
	assert.Equal(t, int64(3), value(t, ms, "lease.claim.claimed", mail))
	assert.Equal(t, int64(1), value(t, ms, "lease.claim.settled", mail, outcome.String("completed")))
	assert.Equal(t, int64(1), value(t, ms, "lease.claim.settled", mail, outcome.String("dead_lettered")))
	assert.Equal(t, int64(1), value(t, ms, "lease.claim.settled", mail, outcome.String("snoozed")))
	n, sum := histogram(t, ms, "lease.claim.pickup.latency", mail)
	assert.Equal(t, uint64(3), n)
	assert.InDelta(t, 6.0, sum, 1e-9)
}

func TestClaimHandlerSpansAndDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		svc := lease.Must(lease.New())
		b := lease.Must(claim.New(lease.Must(claim.NewMemory(svc)), claim.WithObserver(h.tel.Claim())))
		t.Cleanup(func() {
			require.NoError(t, b.Close())
			require.NoError(t, svc.Close())
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- b.Work(ctx, claim.Worker{Queue: "mail", Owner: "w", Handler: func(ctx context.Context, c claim.Claim) error {
				<-time.After(2 * time.Second) // the bubble\'s fake time
				if string(c.Payload) == "bad" {
					return errors.New("bad address")
				}
				return nil
			}})
		}()
		for _, p := range []string{"good", "bad"} {
			_, err := b.Enqueue(context.Background(), "mail", []byte(p), claim.MaxAttempts(1))
			require.NoError(t, err)
			synctest.Wait()
		}
		<-time.After(5 * time.Second) // the bubble\'s fake time moves on
		synctest.Wait()
		ms := h.metrics(t)
		cancel()
		require.NoError(t, <-done)

		mail := queue.String("mail")
		n, sum := histogram(t, ms, "lease.claim.handler.duration", mail, outcome.String("ok"))
		assert.Equal(t, uint64(1), n)
		assert.InDelta(t, 2.0, sum, 1e-9)
		n, _ = histogram(t, ms, "lease.claim.handler.duration", mail, outcome.String("error"))
		assert.Equal(t, uint64(1), n)
		assert.Equal(t, int64(0), value(t, ms, "lease.claim.handlers.active", mail))
		ended := h.spans.Ended()
		require.Len(t, ended, 2)
		assert.Equal(t, "claim.handle mail", ended[0].Name())
		assert.Equal(t, codes.Unset, ended[0].Status().Code)
		assert.Equal(t, codes.Error, ended[1].Status().Code)
		assert.Equal(t, "bad address", ended[1].Status().Description)
		assert.Contains(t, ended[1].Attributes(), attribute.Int("lease.claim.attempt", 1))
	})
}

func TestLockMetricsAndSpans(t *testing.T) {
	h := newHarness(t, otel.WithLockNames())
	fake := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(fake)))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	m, err := lock.NewManager(lease.Must(lock.NewMemory(svc)), lock.WithLeaseDuration(30*time.Second), lock.WithObserver(h.tel.Lock()))
	require.NoError(t, err)
	ctx := context.Background()
	ok, err := m.TryLock(ctx, "jobs", func(ctx context.Context, _ lock.Lease) error {
		fake.Advance(11 * time.Second) // one renewal
		return nil
	})
	require.NoError(t, err)
	require.True(t, ok)
	var heldDuring int64
	_, err = m.TryLock(ctx, "jobs", func(ctx context.Context, _ lock.Lease) error {
		heldDuring = value(t, h.metrics(t), "lease.lock.held", attribute.String("lease.lock.name", "jobs"))
		return nil
	})
	require.NoError(t, err)

	ms := h.metrics(t)
	jobs := attribute.String("lease.lock.name", "jobs")
	ev := attribute.Key("lease.lock.event")
	assert.Equal(t, int64(1), heldDuring)
	assert.Equal(t, int64(0), value(t, ms, "lease.lock.held", jobs))
	assert.Equal(t, int64(2), value(t, ms, "lease.lock.events", jobs, ev.String("acquired")))
	assert.Equal(t, int64(1), value(t, ms, "lease.lock.events", jobs, ev.String("renewed")))
	assert.Equal(t, int64(2), value(t, ms, "lease.lock.events", jobs, ev.String("released")))
	n, sum := histogram(t, ms, "lease.lock.hold.duration", jobs)
	assert.Equal(t, uint64(2), n)
	assert.InDelta(t, 11.0, sum, 1e-9)
	n, sum = histogram(t, ms, "lease.lock.wait.duration", jobs)
	assert.Equal(t, uint64(2), n)
	assert.Zero(t, sum)

	spans := h.spans.Ended()
	require.Len(t, spans, 2)
	assert.Equal(t, "lock.hold jobs", spans[0].Name())
	assert.Contains(t, spans[0].Attributes(), attribute.String("lease.lock.name", "jobs"))
	assert.Equal(t, codes.Unset, spans[0].Status().Code)
}

func TestLockLossIsASpanError(t *testing.T) {
	h := newHarness(t)
	fake := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(fake)))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	m, err := lock.NewManager(lease.Must(lock.NewMemory(svc)), lock.WithLeaseDuration(30*time.Second), lock.WithObserver(h.tel.Lock()))
	require.NoError(t, err)
	_, err = m.TryLock(context.Background(), "jobs", func(ctx context.Context, l lock.Lease) error {
		_, err := svc.Revoke(context.Background(), lease.ID(l.Token)) // someone ends our lease
		require.NoError(t, err)
		fake.Advance(10 * time.Second) // the renewal finds it gone
		<-ctx.Done()
		return nil
	})
	require.ErrorIs(t, err, lock.ErrLockLost)
	ms := h.metrics(t)
	assert.Equal(t, int64(1), value(t, ms, "lease.lock.events", attribute.String("lease.lock.event", "lost")))
	assert.Equal(t, int64(0), value(t, ms, "lease.lock.held"))
	spans := h.spans.Ended()
	require.Len(t, spans, 1)
	assert.Equal(t, codes.Error, spans[0].Status().Code)
	assert.Equal(t, "lock lost", spans[0].Status().Description)
}

func TestElectionMetrics(t *testing.T) {
	h := newHarness(t)
	svc := lease.Must(lease.New(lease.WithClock(leasetest.NewFakeClock(t0))))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	el, err := election.New(lease.Must(lock.NewMemory(svc)), "scheduler", election.WithObserver(h.tel.Election()))
	require.NoError(t, err)
	ctx := context.Background()
	ld, err := el.Campaign(ctx, []byte("me"))
	require.NoError(t, err)
	name := attribute.String("lease.election.name", "scheduler")
	assert.Equal(t, int64(1), value(t, h.metrics(t), "lease.election.leader", name))
	require.NoError(t, ld.Resign(ctx))
	ms := h.metrics(t)
	change := attribute.Key("lease.election.change")
	assert.Equal(t, int64(0), value(t, ms, "lease.election.leader", name))
	assert.Equal(t, int64(1), value(t, ms, "lease.election.changes", name, change.String("elected")))
	assert.Equal(t, int64(1), value(t, ms, "lease.election.changes", name, change.String("deposed")))
}

// TestNewRefusesNilOption: a nil option is an error, not a panic.
func TestNewRefusesNilOption(t *testing.T) {
	tel, err := otel.New(nil, nil, nil)
	assert.Nil(t, tel)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	var le *lease.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "Option", le.Field)
}

func TestCloseIsIdempotentAndNilProvidersAreGlobal(t *testing.T) {
	tel, err := otel.New(nil, nil)
	require.NoError(t, err)
	tel.Lease().Observe(lease.Event{Kind: lease.EventGranted, Purpose: lease.Operation})
	require.NoError(t, tel.Close())
	require.NoError(t, tel.Close())
}

// TestJoinedLockObserverKeepsItsSpans: the Lock observer joined to another
// by lease.Observers still records its metrics and wraps the holding in
// its span, and the other observer sees the same events.
func TestJoinedLockObserverKeepsItsSpans(t *testing.T) {
	h := newHarness(t)
	fake := leasetest.NewFakeClock(t0)
	svc := lease.Must(lease.New(lease.WithClock(fake)))
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	var kinds []string
	mine := lock.ObserverFunc(func(e lock.Event) { kinds = append(kinds, e.Kind.String()) })
	m, err := lock.NewManager(lease.Must(lock.NewMemory(svc)), lock.WithObserver(lease.Observers(mine, h.tel.Lock())))
	require.NoError(t, err)
	ok, err := m.TryLock(context.Background(), "jobs", func(ctx context.Context, _ lock.Lease) error {
		assert.True(t, trace.SpanContextFromContext(ctx).IsValid(), "the function runs in the holding's span")
		return nil
	})
	require.NoError(t, err)
	require.True(t, ok)

	assert.Equal(t, []string{"acquired", "released"}, kinds)
	assert.Equal(t, int64(1), value(t, h.metrics(t), "lease.lock.events", attribute.String("lease.lock.event", "released")))
	spans := h.spans.Ended()
	require.Len(t, spans, 1)
	assert.Equal(t, "lock.hold jobs", spans[0].Name())
}

// A periodic job's skipped tick is counted by job, not as a settlement.
func TestClaimSkippedTicks(t *testing.T) {
	h := newHarness(t)
	o := h.tel.Claim()
	o.Observe(claim.Event{Kind: claim.EventTickSkipped, Queue: "mail", Job: "digest", Tick: t0})
	o.Observe(claim.Event{Kind: claim.EventTickSkipped, Queue: "mail", Job: "digest", Tick: t0.Add(time.Hour)})
	ms := h.metrics(t)
	assert.Equal(t, int64(2), value(t, ms, "lease.claim.ticks.skipped", queue.String("mail"), attribute.String("lease.claim.job", "digest")))
	_, settled := ms["lease.claim.settled"]
	assert.False(t, settled, "a skipped tick is no settlement")
}
