package lease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
)

// auditLog is an audit sink that keeps every decision it is given.
type auditLog struct {
	mu   sync.Mutex
	seen []lease.Decision
}

func (a *auditLog) sink(d lease.Decision) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, d)
}

func (a *auditLog) all() []lease.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]lease.Decision(nil), a.seen...)
}

// withoutReason blanks the Reason of each decision; reasons are not stable.
func withoutReason(t *testing.T, ds []lease.Decision) []lease.Decision {
	t.Helper()
	out := make([]lease.Decision, len(ds))
	for i, d := range ds {
		require.NotEmpty(t, d.Reason, "decision %d has no reason", i)
		d.Reason = ""
		out[i] = d
	}
	return out
}

// TestAuditEveryDecision runs one operation per step and checks that it
// adds exactly one decision, with every field right, to both Audit and the
// sink.
func TestAuditEveryDecision(t *testing.T) {
	log := &auditLog{}
	s, clk := newService(t, auditFunc(log.sink))
	tctx := lease.WithTraceID(ctx, "trace-1")
	var a, b lease.Lease // alice's lease (ID 1) and bob's (ID 2)

	steps := []struct {
		name string
		do   func(t *testing.T)
		want lease.Decision // Revision is checked against s.Revision()
	}{
		{"grant", func(t *testing.T) {
			var err error
			a, err = s.Grant(tctx, "alice", lease.Operation, 10*time.Second)
			require.NoError(t, err)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionGrant, Allowed: true, Holder: "alice", TraceID: "trace-1", Timestamp: t0}},
		{"renew", func(t *testing.T) {
			clk.Advance(time.Second)
			_, err := s.Renew(ctx, a.ID)
			require.NoError(t, err)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionRenew, Allowed: true, Holder: "alice", Timestamp: t0.Add(time.Second)}},
		{"use", func(t *testing.T) {
			_, err := s.Use(tctx, a.ID, lease.Operation)
			require.NoError(t, err)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionUse, Allowed: true, Holder: "alice", TraceID: "trace-1", Timestamp: t0.Add(time.Second)}},
		{"use mismatch", func(t *testing.T) {
			_, err := s.Use(ctx, a.ID, lease.StateWrite)
			require.ErrorIs(t, err, lease.ErrPurposeMismatch)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionUse, Code: lease.CodePurposeMismatch, Holder: "alice", Timestamp: t0.Add(time.Second)}},
		{"renew unknown", func(t *testing.T) {
			_, err := s.Renew(tctx, 99)
			require.ErrorIs(t, err, lease.ErrNotFound)
		}, lease.Decision{LeaseID: 99, Action: lease.ActionRenew, Code: lease.CodeNotFound, TraceID: "trace-1", Timestamp: t0.Add(time.Second)}},
		{"use unknown", func(t *testing.T) {
			_, err := s.Use(ctx, 99, lease.Operation)
			require.ErrorIs(t, err, lease.ErrNotFound)
		}, lease.Decision{LeaseID: 99, Action: lease.ActionUse, Code: lease.CodeNotFound, Timestamp: t0.Add(time.Second)}},
		{"revoke unknown", func(t *testing.T) {
			_, err := s.Revoke(ctx, 99)
			require.ErrorIs(t, err, lease.ErrNotFound)
		}, lease.Decision{LeaseID: 99, Action: lease.ActionRevoke, Code: lease.CodeNotFound, Timestamp: t0.Add(time.Second)}},
		{"grant bob", func(t *testing.T) {
			clk.Advance(time.Second)
			var err error
			b, err = s.Grant(ctx, "bob", lease.StateWrite, 5*time.Second)
			require.NoError(t, err)
		}, lease.Decision{LeaseID: 2, Action: lease.ActionGrant, Allowed: true, Holder: "bob", Timestamp: t0.Add(2 * time.Second)}},
		{"revoke", func(t *testing.T) {
			_, err := s.Revoke(tctx, b.ID)
			require.NoError(t, err)
		}, lease.Decision{LeaseID: 2, Action: lease.ActionRevoke, Allowed: true, Holder: "bob", TraceID: "trace-1", Timestamp: t0.Add(2 * time.Second)}},
		{"revoke revoked", func(t *testing.T) {
			_, err := s.Revoke(ctx, b.ID)
			require.ErrorIs(t, err, lease.ErrAlreadyRevoked)
		}, lease.Decision{LeaseID: 2, Action: lease.ActionRevoke, Code: lease.CodeAlreadyRevoked, Holder: "bob", Timestamp: t0.Add(2 * time.Second)}},
		{"renew revoked", func(t *testing.T) {
			_, err := s.Renew(ctx, b.ID)
			require.ErrorIs(t, err, lease.ErrAlreadyRevoked)
		}, lease.Decision{LeaseID: 2, Action: lease.ActionRenew, Code: lease.CodeAlreadyRevoked, Holder: "bob", Timestamp: t0.Add(2 * time.Second)}},
		{"use revoked", func(t *testing.T) {
			_, err := s.Use(ctx, b.ID, lease.StateWrite)
			require.ErrorIs(t, err, lease.ErrStaleUse)
		}, lease.Decision{LeaseID: 2, Action: lease.ActionUse, Code: lease.CodeStaleUse, Holder: "bob", Timestamp: t0.Add(2 * time.Second)}},
		{"expire", func(*testing.T) {
			// Alice's lease expires at t0+11s; the decision carries that
			// instant, not the clock's time after the advance.
			clk.Advance(20 * time.Second)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionExpire, Allowed: true, Holder: "alice", Timestamp: t0.Add(11 * time.Second)}},
		{"renew expired", func(t *testing.T) {
			_, err := s.Renew(ctx, a.ID)
			require.ErrorIs(t, err, lease.ErrExpired)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionRenew, Code: lease.CodeExpired, Holder: "alice", Timestamp: t0.Add(22 * time.Second)}},
		{"use expired", func(t *testing.T) {
			_, err := s.Use(ctx, a.ID, lease.Operation)
			require.ErrorIs(t, err, lease.ErrStaleUse)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionUse, Code: lease.CodeStaleUse, Holder: "alice", Timestamp: t0.Add(22 * time.Second)}},
		{"revoke expired", func(t *testing.T) {
			_, err := s.Revoke(tctx, a.ID)
			require.ErrorIs(t, err, lease.ErrExpired)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionRevoke, Code: lease.CodeExpired, Holder: "alice", TraceID: "trace-1", Timestamp: t0.Add(22 * time.Second)}},
		{"keep-alive refused", func(t *testing.T) {
			_, err := s.KeepAlive(ctx, a.ID)
			require.ErrorIs(t, err, lease.ErrExpired)
		}, lease.Decision{LeaseID: 1, Action: lease.ActionRenew, Code: lease.CodeExpired, Holder: "alice", Timestamp: t0.Add(22 * time.Second)}},
		{"grant with present key", func(t *testing.T) {
			require.NoError(t, s.Put(ctx, "k", nil, 0))
			_, err := s.GrantWithKey(tctx, "carol", lease.Operation, time.Second, "k", nil)
			require.ErrorIs(t, err, lease.ErrKeyExists)
		}, lease.Decision{Action: lease.ActionGrant, Code: lease.CodeKeyExists, TraceID: "trace-1", Timestamp: t0.Add(22 * time.Second)}},
	}
	var want []lease.Decision
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := len(s.Audit())
			st.do(t)
			got := s.Audit()
			require.Len(t, got, before+1, "step %d adds exactly one decision", i)
			w := st.want
			w.Revision = s.Revision()
			last := withoutReason(t, got[len(got)-1:])[0]
			require.Equal(t, w, last)
			want = append(want, w)
		})
	}
	require.Equal(t, a.Revision, s.Audit()[0].Revision, "a grant's decision carries the lease's revision")
	require.Equal(t, want, withoutReason(t, s.Audit()))
	require.Equal(t, want, withoutReason(t, log.all()), "the sink sees the same decisions in the same order")
}

// TestAuditBadInputNotAudited records the choice that a call refused for bad
// input (LS_INVALID_ARGUMENT) changes nothing, the audit trail included.
func TestAuditBadInputNotAudited(t *testing.T) {
	log := &auditLog{}
	s, _ := newService(t, auditFunc(log.sink))
	l := grant(t, s, lease.Operation, time.Minute)
	before := s.Audit()
	_, err := s.Grant(ctx, "", lease.Operation, time.Minute)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	_, err = s.Grant(ctx, "h", lease.Operation, -1)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	_, err = s.RenewTTL(ctx, l.ID, 0)
	require.ErrorIs(t, err, lease.ErrInvalidArgument)
	require.Equal(t, before, s.Audit())
	require.Len(t, log.all(), 1)
}

func TestAuditIsACopy(t *testing.T) {
	s, _ := newService(t)
	l := grant(t, s, lease.Operation, time.Minute)
	_, err := s.Use(ctx, l.ID, lease.Operation)
	require.NoError(t, err)
	first := s.Audit()
	require.Len(t, first, 2)
	want := append([]lease.Decision(nil), first...)
	first[0].Holder = "mallory"
	first[1].Allowed = false
	require.Equal(t, want, s.Audit())
}

func TestAuditRingBounded(t *testing.T) {
	const decisions = 10 // one grant and nine uses
	for _, tc := range []struct {
		name     string
		capacity int // -1: the default
		want     int
	}{
		{"default", -1, decisions},
		{"zero keeps none", 0, 0},
		{"one", 1, 1},
		{"three", 3, 3},
		{"exactly full", decisions, decisions},
		{"larger", 4 * decisions, decisions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &auditLog{}
			opts := []lease.Option{auditFunc(log.sink)}
			if tc.capacity >= 0 {
				opts = append(opts, lease.WithAuditCapacity(tc.capacity))
			}
			s, clk := newService(t, opts...)
			l := grant(t, s, lease.Operation, time.Hour)
			for range decisions - 1 {
				clk.Advance(time.Second) // distinct timestamps
				_, err := s.Use(ctx, l.ID, lease.Operation)
				require.NoError(t, err)
			}
			sunk := log.all()
			require.Len(t, sunk, decisions, "the sink sees every decision whatever the capacity")
			for i, d := range sunk {
				require.Equal(t, t0.Add(time.Duration(i)*time.Second), d.Timestamp, "sink order")
			}
			got := s.Audit()
			require.Len(t, got, tc.want)
			require.Equal(t, sunk[decisions-tc.want:], got, "the newest decisions, oldest first")
		})
	}
}

func TestAuditZeroCapacityNoSink(t *testing.T) {
	s, _ := newService(t, lease.WithAuditCapacity(0))
	l := grant(t, s, lease.Operation, time.Minute)
	_, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	require.Empty(t, s.Audit())
}

// spanKey is the kind of context key a tracing library keeps its span under.
type spanKey struct{}

func TestAuditTraceID(t *testing.T) {
	spanCtx := context.WithValue(lease.WithTraceID(ctx, "from-WithTraceID"), spanKey{}, "span-42")
	for _, tc := range []struct {
		name string
		opts []lease.Option
		ctx  context.Context
		want string
	}{
		{"none", nil, ctx, ""},
		{"WithTraceID", nil, lease.WithTraceID(ctx, "t-1"), "t-1"},
		{"WithTraceID innermost wins", nil, lease.WithTraceID(lease.WithTraceID(ctx, "outer"), "inner"), "inner"},
		{"default ignores other keys", nil, context.WithValue(ctx, spanKey{}, "span-42"), ""},
		{"WithTraceIDFunc", []lease.Option{lease.WithTraceIDFunc(func(c context.Context) string {
			id, _ := c.Value(spanKey{}).(string)
			return id
		})}, spanCtx, "span-42"},
		{"WithTraceIDFunc replaces WithTraceID", []lease.Option{lease.WithTraceIDFunc(func(context.Context) string {
			return "fixed"
		})}, lease.WithTraceID(ctx, "ignored"), "fixed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newService(t, tc.opts...)
			l, err := s.Grant(tc.ctx, "h", lease.Operation, time.Minute)
			require.NoError(t, err)
			_, err = s.Renew(tc.ctx, l.ID)
			require.NoError(t, err)
			_, err = s.Use(tc.ctx, l.ID, lease.Operation)
			require.NoError(t, err)
			_, err = s.Use(tc.ctx, l.ID, lease.StateWrite)
			require.Error(t, err)
			_, err = s.Revoke(tc.ctx, l.ID)
			require.NoError(t, err)
			_, err = s.Revoke(tc.ctx, l.ID)
			require.Error(t, err)
			got := s.Audit()
			require.Len(t, got, 6)
			for _, d := range got {
				assert.Equal(t, tc.want, d.TraceID, "%s decision", d.Action)
			}
		})
	}
}

func TestAuditKeepAliveRenewals(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, 3*time.Second)
	kctx, err := s.KeepAlive(lease.WithTraceID(ctx, "ka"), l.ID)
	require.NoError(t, err)
	clk.Advance(4 * time.Second) // renewals every TTL/3 = 1s
	_, err = s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	<-kctx.Done()
	require.ErrorIs(t, context.Cause(kctx), lease.ErrAlreadyRevoked)

	got := withoutReason(t, s.Audit())
	want := []lease.Decision{{LeaseID: 1, Action: lease.ActionGrant, Allowed: true, Holder: "holder", Timestamp: t0, Revision: 1}}
	for i := range 5 { // KeepAlive's own renewal at t0, then one a second
		want = append(want, lease.Decision{LeaseID: 1, Action: lease.ActionRenew, Allowed: true, Holder: "holder",
			TraceID: "ka", Timestamp: t0.Add(time.Duration(i) * time.Second), Revision: int64(2 + i)})
	}
	want = append(want, lease.Decision{LeaseID: 1, Action: lease.ActionRevoke, Allowed: true, Holder: "holder",
		Timestamp: t0.Add(4 * time.Second), Revision: 7})
	require.Equal(t, want, got)
}

func TestSlogObserver(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, clk := newService(t, lease.WithAuditObserver(lease.SlogObserver(logger)))
	l, err := s.Grant(lease.WithTraceID(ctx, "tr-9"), "alice", lease.StateWrite, time.Minute)
	require.NoError(t, err)
	clk.Advance(time.Second)
	_, err = s.Use(ctx, l.ID, lease.Operation)
	require.ErrorIs(t, err, lease.ErrPurposeMismatch)

	type record struct {
		Level    string         `json:"level"`
		Msg      string         `json:"msg"`
		Decision map[string]any `json:"decision"`
	}
	dec := json.NewDecoder(&buf)
	var got []record
	for dec.More() {
		var r record
		require.NoError(t, dec.Decode(&r))
		got = append(got, r)
	}
	want := []record{
		{"DEBUG", "lease decision", map[string]any{
			"lease_id": 1.0, "action": "grant", "allowed": true, "reason": "granted", "holder": "alice",
			"timestamp": t0.Format(time.RFC3339Nano), "revision": 1.0, "trace_id": "tr-9",
		}},
		{"WARN", "lease decision", map[string]any{
			"lease_id": 1.0, "action": "use", "allowed": false, "code": "LS_PURPOSE_MISMATCH",
			"holder": "alice", "timestamp": t0.Add(time.Second).Format(time.RFC3339Nano), "revision": 1.0,
		}},
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Level, got[i].Level)
		assert.Equal(t, want[i].Msg, got[i].Msg)
		reason, _ := got[i].Decision["reason"].(string)
		assert.NotEmpty(t, reason)
		if _, fixed := want[i].Decision["reason"]; !fixed {
			delete(got[i].Decision, "reason") // only "granted" is asserted
		}
		assert.Equal(t, want[i].Decision, got[i].Decision)
	}
}

// TestAuditSinkCallsBack checks that a sink may call into the service from
// every kind of decision, including expiries fired by the clock, without
// deadlocking.
func TestAuditSinkCallsBack(t *testing.T) {
	var (
		s     *lease.Service
		mu    sync.Mutex
		calls int
		seen  []int // len(Audit()) as the sink saw it
	)
	sink := func(d lease.Decision) {
		n := len(s.Audit())
		_, _ = s.Info(ctx, d.LeaseID)
		_, _, _ = mustGet(t, s, "k")
		_ = s.ActiveCount()
		mu.Lock()
		defer mu.Unlock()
		calls++
		seen = append(seen, n)
	}
	s, clk := newService(t, auditFunc(sink))

	done := make(chan struct{})
	go func() {
		defer close(done)
		l, err := s.Grant(ctx, "h", lease.Operation, time.Second)
		assert.NoError(t, err)
		assert.NoError(t, s.Put(ctx, "k", []byte("v"), l.ID))
		_, err = s.Use(ctx, l.ID, lease.StateWrite)
		assert.Error(t, err)
		clk.Advance(time.Second) // the expiry runs the sink from the timer
		_, err = s.Renew(ctx, l.ID)
		assert.Error(t, err)
	}()
	guard := time.NewTimer(10 * time.Second)
	defer guard.Stop()
	select {
	case <-done:
	case <-guard.C:
		t.Fatal("a sink calling back into the service deadlocked")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 4, calls)
	require.Equal(t, []int{1, 2, 3, 4}, seen, "each decision is in Audit before the sink sees it")
}

func TestAuditDefaultCapacity(t *testing.T) {
	s, clk := newService(t)
	l := grant(t, s, lease.Operation, time.Hour)
	const extra = 10
	for range lease.DefaultAuditCapacity + extra - 1 { // uses, after the grant
		_, err := s.Use(ctx, l.ID, lease.Operation)
		require.NoError(t, err)
	}
	clk.Advance(time.Second)
	_, err := s.Revoke(ctx, l.ID)
	require.NoError(t, err)
	got := s.Audit()
	require.Len(t, got, lease.DefaultAuditCapacity)
	require.Equal(t, lease.ActionUse, got[0].Action, "the grant and the oldest uses were dropped")
	require.Equal(t, lease.ActionRevoke, got[len(got)-1].Action)
}

func TestAuditExpireTimestampIsTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		silent bool
	}{
		{"timer fires", false},
		{"settled late by a call", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := leasetest.NewFakeClock(t0)
			var clk lease.Clock = fake
			if tc.silent {
				clk = leasetest.Stalled(fake)
			}
			log := &auditLog{}
			s := lease.Must(lease.New(lease.WithClock(clk), auditFunc(log.sink)))
			defer s.Close()
			a := grant(t, s, lease.Operation, 3*time.Second)
			b := grant(t, s, lease.Operation, 2*time.Second)
			fake.Advance(time.Minute)
			got := s.Audit()
			require.Len(t, got, 4)
			for i, l := range []lease.Lease{b, a} { // in deadline order
				d := got[2+i]
				require.Equal(t, lease.ActionExpire, d.Action)
				require.Equal(t, l.ID, d.LeaseID)
				require.Equal(t, l.ExpiresAt, d.Timestamp, "an expiry is decided at its deadline, not when it was noticed")
			}
			require.Equal(t, got, log.all())
		})
	}
}

// TestSlogObserverLevels checks each kind of decision is logged at its
// level: the defaults, and levels given.
func TestSlogObserverLevels(t *testing.T) {
	type testCase struct {
		name   string
		levels *lease.SlogLevels
		want   []string
	}
	cases := []testCase{
		{"defaults", nil, []string{"DEBUG grant", "DEBUG renew", "WARN use", "DEBUG grant", "INFO revoke", "INFO expire"}},
		{"given", &lease.SlogLevels{Routine: slog.LevelInfo, Ended: slog.LevelWarn, Denied: slog.LevelError},
			[]string{"INFO grant", "INFO renew", "ERROR use", "INFO grant", "WARN revoke", "WARN expire"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			obs := lease.SlogObserver(logger)
			if tc.levels != nil {
				obs = lease.SlogObserverLevels(logger, *tc.levels)
			}
			s, clk := newService(t, lease.WithAuditObserver(obs))
			l := grant(t, s, lease.Operation, time.Second)
			_, _ = s.Renew(ctx, l.ID)
			_, _ = s.Use(ctx, l.ID, lease.StateWrite)
			m := grant(t, s, lease.Operation, time.Hour)
			_, _ = s.Revoke(ctx, m.ID)
			clk.Advance(time.Second)

			var got []string
			dec := json.NewDecoder(&buf)
			for dec.More() {
				var r struct {
					Level    string
					Decision struct{ Action string }
				}
				require.NoError(t, dec.Decode(&r))
				got = append(got, r.Level+" "+r.Decision.Action)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
