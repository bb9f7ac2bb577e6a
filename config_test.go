package lease_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// badOptions are options given a value they can never take, each with the
// option New must name.
var badOptions = []struct {
	option string
	opt    func() lease.Option
}{
	{"WithClock", func() lease.Option { return lease.WithClock(nil) }},
	{"WithTTLBounds", func() lease.Option { return lease.WithTTLBounds(0, time.Second) }},
	{"WithTTLBounds", func() lease.Option { return lease.WithTTLBounds(-time.Second, time.Second) }},
	{"WithTTLBounds", func() lease.Option { return lease.WithTTLBounds(time.Second, time.Millisecond) }},
	{"WithAuditCapacity", func() lease.Option { return lease.WithAuditCapacity(-1) }},
	{"WithEndedCapacity", func() lease.Option { return lease.WithEndedCapacity(-1) }},
	{"WithAuditObserver", func() lease.Option { return lease.WithAuditObserver(nil) }},
	{"WithAuditObserver", func() lease.Option { return lease.WithAuditObserver(lease.ObserverFunc[lease.Decision](nil)) }},
	{"WithAuditObserver", func() lease.Option { return lease.WithAuditObserver(lease.Observers[lease.Decision]()) }},
	{"WithObserverBuffer", func() lease.Option { return lease.WithObserverBuffer(0) }},
	{"WithTraceIDFunc", func() lease.Option { return lease.WithTraceIDFunc(nil) }},
	{"WithObserver", func() lease.Option { return lease.WithObserver(nil) }},
	{"WithObserver", func() lease.Option { return lease.WithObserver(lease.Observers[lease.Event](nil, nil)) }},
	{"WithObserverOf", func() lease.Option { return lease.WithObserverOf(nil, lease.AllEvents) }},
	{"WithObserverOf", func() lease.Option { return lease.WithObserverOf(&events{}, lease.AllEvents+1) }},
	{"WithPanicHandler", func() lease.Option { return lease.WithPanicHandler(nil) }},
	{"Option", func() lease.Option { return nil }},
}

// requireInvalidOption checks that err refuses option by name.
func requireInvalidOption(t *testing.T, err error, option string) {
	t.Helper()
	var le *lease.Error
	require.ErrorAs(t, err, &le, option)
	assert.Equal(t, lease.CodeInvalidArgument, le.Code, option)
	assert.Equal(t, option, le.Field)
	assert.ErrorIs(t, err, lease.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "lease: New "+option+": ")
}

// TestNewRefusesBadOptions: every option given a value it can never take
// is built without a panic, and New and Restore return an error naming it
// and no Service, with no goroutine left behind.
func TestNewRefusesBadOptions(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	good, _ := newService(t)
	sn, err := good.Snapshot()
	require.NoError(t, err)
	for _, tc := range badOptions {
		t.Run(tc.option, func(t *testing.T) {
			var opt lease.Option
			require.NotPanics(t, func() { opt = tc.opt() })
			s, err := lease.New(lease.WithClock(leasetest.NewFakeClock(time.Unix(0, 0))), opt)
			assert.Nil(t, s)
			requireInvalidOption(t, err, tc.option)

			s, err = lease.Restore(sn, opt)
			assert.Nil(t, s)
			requireInvalidOption(t, err, tc.option)
		})
	}
}

// TestNewReportsTheFirstBadOption: with several bad options, New names the
// first, whatever follows.
func TestNewReportsTheFirstBadOption(t *testing.T) {
	_, err := lease.New(lease.WithAuditCapacity(3), lease.WithObserverBuffer(0), lease.WithClock(nil))
	requireInvalidOption(t, err, "WithObserverBuffer")
}

// TestBadOptionsAreReusable: an option value refused once is refused again,
// and a good one configures every Service it is given to.
func TestBadOptionsAreReusable(t *testing.T) {
	bad := lease.WithTTLBounds(time.Second, 0)
	for range 2 {
		_, err := lease.New(bad)
		requireInvalidOption(t, err, "WithTTLBounds")
	}
	good := lease.WithTTLBounds(time.Second, time.Minute)
	for range 2 {
		s := lease.Must(lease.New(good))
		_, err := s.Grant(context.Background(), "h", lease.Operation, time.Hour)
		assert.Equal(t, lease.CodeInvalidArgument, lease.CodeOf(err))
		require.NoError(t, s.Close())
	}
}

func TestMust(t *testing.T) {
	assert.Equal(t, 7, lease.Must(7, nil))
	_, bad := lease.New(lease.WithClock(nil))
	require.Error(t, bad)
	assert.PanicsWithError(t, bad.Error(), func() { lease.Must(lease.New(lease.WithClock(nil))) })
}

// TestNilArgumentsOutsideOptionsAreDefaults: the functions that take a
// clock, a logger or a callback outside the options read nil as the
// default, or as nothing to do, rather than panicking.
func TestNilArgumentsOutsideOptionsAreDefaults(t *testing.T) {
	c := lease.MonotonicClock(nil)
	require.NotNil(t, c)
	assert.WithinDuration(t, time.Now(), c.Now(), time.Minute, "a nil clock reads as the system clock")

	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)
	s, _ := newService(t, lease.WithAuditObserver(lease.SlogObserver(nil)))
	grant(t, s, lease.Operation, time.Minute)
	assert.Contains(t, buf.String(), "lease decision", "a nil logger logs to slog.Default")

	stop := s.OnEnd(nil) // subscribes nothing: an ending calls no nil func
	require.NotNil(t, stop)
	_, err := s.Revoke(context.Background(), grant(t, s, lease.Operation, time.Minute).ID)
	require.NoError(t, err)
	stop()
}
