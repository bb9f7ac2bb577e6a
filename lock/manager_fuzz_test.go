package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// outcomes is a provider whose renewals answer from a script: each byte is
// one renewal's outcome (0 renewed, 1 an error, 2 not renewed, cycling when
// the script runs out), and it records when each renewal was made.
type outcomes struct {
	lock.Provider
	clock  *leasetest.FakeClock
	script []byte
	calls  []time.Time
}

func (p *outcomes) Renew(_ context.Context, leases []lock.Lease, d time.Duration) ([]lock.Lease, error) {
	n := len(p.calls)
	p.calls = append(p.calls, p.clock.Now())
	switch p.script[n%len(p.script)] % 3 {
	case 0:
		l := leases[0]
		l.ExpiresAt = p.clock.Now().Add(d)
		return []lock.Lease{l}, nil
	case 1:
		return nil, errors.New("unavailable")
	}
	return nil, nil
}

func (p *outcomes) Acquire(_ context.Context, name, exec string, d time.Duration) (*lock.Lease, error) {
	return &lock.Lease{Name: name, ExecutionID: exec, ExpiresAt: p.clock.Now().Add(d), Token: 1}, nil
}

func (p *outcomes) Release(context.Context, []lock.Lease) error { return nil }

// managerModel computes, for a 30 s lease with a 3 s margin and a 3 s retry,
// the times of the renewals and of the loss, given the renewal outcomes.
func managerModel(script []byte, until time.Duration) (renewals []time.Duration, lostAt time.Duration) {
	const d, margin, retry = 30 * time.Second, 3 * time.Second, 3 * time.Second
	deadline, next := d-margin, d/3
	for {
		if next < 0 || next >= deadline { // no renewal before the deadline
			return renewals, deadline
		}
		if next > until {
			return renewals, -1
		}
		now := next
		outcome := script[len(renewals)%len(script)] % 3
		renewals = append(renewals, now)
		switch outcome {
		case 0:
			deadline, next = now+d-margin, now+d/3
		case 1:
			next = -1
			if now+retry < deadline {
				next = now + retry
			}
		case 2:
			return renewals, now
		}
	}
}

// FuzzManagerTiming checks the Manager's renewal schedule, retries, safety
// deadline and loss against managerModel: the script's first byte sets how
// far fn advances the clock per step, the rest are renewal outcomes.
func FuzzManagerTiming(f *testing.F) {
	f.Add([]byte{0, 1}) // half-second steps: loss at the deadline exactly
	f.Add([]byte{0, 1, 1, 0, 2})
	f.Add([]byte{0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{7, 0})
	f.Add([]byte{3, 1})
	f.Add([]byte{5, 2})
	f.Add([]byte{1, 1, 1, 0, 1, 2})
	f.Add([]byte{11, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) < 2 {
			return
		}
		step := time.Duration(script[0]%16+1) * 500 * time.Millisecond
		script = script[1:]
		clock := leasetest.NewFakeClock(epoch)
		p := &outcomes{clock: clock, script: script}
		m := newManager(t, p, lease.WithClock(clock), lock.WithLeaseDuration(30*time.Second))
		const horizon = 5 * time.Minute
		end := (horizon + step - 1) / step * step // where fn's last step lands
		wantCalls, wantLost := managerModel(script, end)
		var lostAt time.Duration = -1
		_, err := m.TryLock(context.Background(), "job", func(ctx context.Context, _ lock.Lease) error {
			for clock.Now().Sub(epoch) < horizon && ctx.Err() == nil {
				clock.Advance(step)
			}
			if ctx.Err() != nil {
				lostAt = clock.Now().Sub(epoch)
				if cause := context.Cause(ctx); cause != lock.ErrLockLost {
					t.Fatalf("cause %v, want ErrLockLost", cause)
				}
			}
			return nil
		})
		// fn notices a loss at the end of the step it happened in.
		if wantLost >= 0 && wantLost <= end {
			if lostAt < wantLost || lostAt >= wantLost+step {
				t.Fatalf("lost seen at %v, model says %v (step %v)", lostAt, wantLost, step)
			}
			if !errors.Is(err, lock.ErrLockLost) {
				t.Fatalf("TryLock error %v, want ErrLockLost", err)
			}
		} else if lostAt >= 0 || err != nil {
			t.Fatalf("lost at %v (err %v), model says held through %v", lostAt, err, end)
		}
		var got []time.Duration
		for _, c := range p.calls {
			got = append(got, c.Sub(epoch))
		}
		if wantLost >= 0 && wantLost <= end {
			var upTo []time.Duration
			for _, c := range wantCalls {
				if c <= lostAt {
					upTo = append(upTo, c)
				}
			}
			wantCalls = upTo
		}
		if len(got) != len(wantCalls) {
			t.Fatalf("renewals at %v, model says %v", got, wantCalls)
		}
		for i := range got {
			if got[i] != wantCalls[i] {
				t.Fatalf("renewals at %v, model says %v", got, wantCalls)
			}
		}
	})
}
