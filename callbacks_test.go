package lease_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// TestPanickingSubscriberLosesNothingForOthers has the first of two ending
// subscribers panic: the panic is reported, the second subscriber (the claim
// broker, in real use) still sees the ending, and the service goes on.
func TestPanickingSubscriberLosesNothingForOthers(t *testing.T) {
	var p leasetest.PanicRecorder
	s, _ := newService(t, lease.WithPanicHandler(p.Handle))
	s.OnEnd(func(lease.Lease, lease.EndReason) { panic("first subscriber") })
	var seen []lease.ID
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) { seen = append(seen, l.ID) })

	a := grant(t, s, lease.Operation, time.Hour)
	b := grant(t, s, lease.Operation, time.Hour)
	require.NotPanics(t, func() {
		_, err := s.Revoke(ctx, a.ID)
		require.NoError(t, err)
	})
	_, err := s.Revoke(ctx, b.ID)
	require.NoError(t, err)

	assert.Equal(t, []lease.ID{a.ID, b.ID}, seen)
	assert.Equal(t, []string{"end subscriber", "end subscriber"}, p.Callbacks())
	got := p.Panics()
	assert.Equal(t, "first subscriber", got[0].Value)
	assert.Contains(t, string(got[0].Stack), "callbacks_test.go")
	assert.EqualError(t, got[0], "lease: end subscriber panicked: first subscriber")
}

// TestEveryCallbackFollowsThePanicPolicy makes each kind of callback of the
// service panic once: each panic is reported under the callback's name, the
// operation that triggered it returns normally, and the events after it
// are still delivered.
func TestEveryCallbackFollowsThePanicPolicy(t *testing.T) {
	tests := []struct {
		name     string
		callback string
		opts     func(fail func()) []lease.Option
	}{
		{"audit observer", "audit observer", func(fail func()) []lease.Option {
			return []lease.Option{auditFunc(func(lease.Decision) { fail() })}
		}},
		{"trace id", "trace id", func(fail func()) []lease.Option {
			return []lease.Option{lease.WithTraceIDFunc(func(context.Context) string { fail(); return "t" })}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p leasetest.PanicRecorder
			once := true
			fail := func() {
				if once {
					once = false
					panic(errors.New("boom"))
				}
			}
			s, clk := newService(t, append(tt.opts(fail), lease.WithPanicHandler(p.Handle))...)
			var ended []lease.ID
			s.OnEnd(func(l lease.Lease, _ lease.EndReason) { ended = append(ended, l.ID) })
			var a, b lease.Lease
			require.NotPanics(t, func() {
				a = grant(t, s, lease.Operation, time.Second)
				b = grant(t, s, lease.Operation, time.Second)
				clk.Advance(time.Second)
			})
			assert.Equal(t, []lease.ID{a.ID, b.ID}, ended, "both endings delivered")
			assert.Equal(t, []string{tt.callback}, p.Callbacks())
			assert.EqualError(t, errors.Unwrap(p.Panics()[0]), "boom", "Unwrap gives the panicked error")
			assert.Zero(t, s.ActiveCount())
		})
	}
}

// TestSubscriberMayCallBackAndClose has an ending subscriber grant, revoke
// and finally close the service from inside the notification: nothing
// deadlocks, and nothing is delivered after Close.
func TestSubscriberMayCallBackAndClose(t *testing.T) {
	s, _ := newService(t)
	var seen []lease.ID
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) {
		seen = append(seen, l.ID)
		if len(seen) == 1 {
			next, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
			require.NoError(t, err)
			_, err = s.Revoke(ctx, next.ID) // queued behind this call
			require.NoError(t, err)
			require.NoError(t, s.Close())
		}
	})
	l := grant(t, s, lease.Operation, time.Hour)
	_, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	assert.Equal(t, []lease.ID{l.ID}, seen, "the revoke queued before Close is not delivered after it")
}

// TestNothingDeliveredAfterClose blocks an expiry hook on the first of three
// expiries, closes the service while it is blocked, then lets it go: the
// two hooks still queued never run.
func TestNothingDeliveredAfterClose(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var ran []lease.ID
	s, clk := newService(t)
	onExpired(s, func(l lease.Lease) {
		mu.Lock()
		ran = append(ran, l.ID)
		first := len(ran) == 1
		mu.Unlock()
		if first {
			close(started)
			<-release
		}
	})
	for range 3 {
		grant(t, s, lease.Operation, time.Second)
	}
	advanced := make(chan struct{})
	go func() {
		defer close(advanced)
		clk.Advance(time.Second) // the timer settles all three, then delivers
	}()
	<-started
	require.NoError(t, s.Close())
	close(release)
	<-advanced

	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, ran, 1, "hooks queued before Close must not run after it returned")
}

// TestRevokedKeysAreNotShared edits the Keys that Revoke returned and that
// the first of two subscribers received: neither edit reaches the other
// subscriber, and none reaches the caller.
func TestRevokedKeysAreNotShared(t *testing.T) {
	s, _ := newService(t)
	var first, second []string
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) {
		first = l.Keys
		l.Keys[0] = "edited by first"
	})
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) { second = l.Keys })
	l := grant(t, s, lease.Operation, time.Hour)
	require.NoError(t, s.Put(ctx, "a", nil, l.ID))
	require.NoError(t, s.Put(ctx, "b", nil, l.ID))

	got, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got.Keys, "the caller's keys")
	assert.Equal(t, []string{"edited by first", "b"}, first)
	assert.Equal(t, []string{"a", "b"}, second, "the second subscriber's keys")
	got.Keys[1] = "edited by caller"
	assert.Equal(t, []string{"a", "b"}, second)
}

// TestBlockedSinkIsBounded blocks the audit sink while 1,000 more decisions
// are made: at most WithObserverBuffer of them wait for it, the rest are counted
// as dropped, and the audit ring still has them all.
func TestBlockedSinkIsBounded(t *testing.T) {
	const buffer = 100
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	delivered := 0
	blocked := true
	s, _ := newService(t, lease.WithObserverBuffer(buffer), auditFunc(func(lease.Decision) {
		mu.Lock()
		delivered++
		first := blocked
		blocked = false
		mu.Unlock()
		if first {
			close(entered)
			<-release
		}
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		grant(t, s, lease.Operation, time.Hour) // delivers its decision, and blocks
	}()
	<-entered
	for range 1000 {
		grant(t, s, lease.Operation, time.Hour)
	}
	assert.Equal(t, uint64(1001-buffer), s.DroppedDecisions(), "the one being delivered counts in the buffer")
	close(release)
	<-done
	mu.Lock()
	assert.Equal(t, buffer, delivered)
	mu.Unlock()
	assert.Len(t, s.Audit(), 1001, "the ring records every decision")
}

// TestDeliveryGoesOnAfterAPanickingPanicHandler checks that a panic handler
// that panics (against its contract) costs the call that met it, not the
// service: the panic reaches that caller, and later notifications are
// still delivered. Before, the service stayed marked as delivering and
// queued every later notification without delivering any.
func TestDeliveryGoesOnAfterAPanickingPanicHandler(t *testing.T) {
	s := lease.Must(lease.New(lease.WithPanicHandler(func(*lease.PanicError) { panic("handler") })))
	defer s.Close()
	var ended []lease.ID
	first := true
	s.OnEnd(func(l lease.Lease, _ lease.EndReason) {
		if first {
			first = false
			panic("subscriber")
		}
		ended = append(ended, l.ID)
	})
	a, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
	require.NoError(t, err)
	b, err := s.Grant(ctx, "h", lease.Operation, time.Hour)
	require.NoError(t, err)
	require.PanicsWithValue(t, "handler", func() { _, _ = s.Revoke(ctx, a.ID) })
	_, err = s.Revoke(ctx, b.ID)
	require.NoError(t, err)
	require.Equal(t, []lease.ID{b.ID}, ended, "the ending after the escaped panic is delivered")
}
