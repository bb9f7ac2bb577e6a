package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/leasetest"
	"github.com/leasehold/lease/lock"
)

// refLock is the reference model of one lock name.
type refLock struct {
	held       bool
	exec       string
	token      uint64
	expires    time.Time
	delayUntil time.Time // no acquisition before this (lock-delay)
	lastToken  uint64
}

// settle applies an expiry due at now.
func (r *refLock) settle(now time.Time, delay time.Duration) {
	if r.held && !now.Before(r.expires) {
		r.held = false
		r.delayUntil = r.expires.Add(delay)
	}
}

func (r *refLock) owns(l lock.Lease) bool {
	return r.held && r.exec == l.ExecutionID && r.token == l.Token
}

// FuzzMemory runs the memory provider and a reference model side by side on
// a script of operations over two names and two executions: acquire, renew
// and release (of current and stale leases) and clock moves, with or
// without a lock-delay, and with or without the service's timer firing. The
// first byte picks those two; then every three bytes are one operation.
func FuzzMemory(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 2, 0, 0})
	f.Add([]byte{1, 0, 0, 1, 3, 20, 0, 0, 1, 2, 0, 0})
	f.Add([]byte{3, 0, 1, 3, 3, 19, 0, 0, 0, 0, 3, 1, 0, 0, 0, 1})
	f.Add([]byte{2, 0, 0, 0, 1, 0, 3, 3, 7, 0, 1, 1, 0, 1, 2, 0, 2, 1, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) == 0 {
			return
		}
		ctx := context.Background()
		var delay time.Duration
		if script[0]&1 != 0 {
			delay = 3 * time.Second
		}
		fake := leasetest.NewFakeClock(epoch)
		var clock lease.Clock = fake
		if script[0]&2 != 0 {
			clock = leasetest.Stalled(fake)
		}
		svc := lease.Must(lease.New(lease.WithClock(clock)))
		defer svc.Close()
		mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(delay)))

		names, execs := [2]string{"x", "y"}, [2]string{"a", "b"}
		ref := map[string]*refLock{"x": {}, "y": {}}
		var leases []lock.Lease // every lease handed out, current or stale
		pick := func(b byte) (lock.Lease, bool) {
			if len(leases) == 0 {
				return lock.Lease{}, false
			}
			return leases[int(b)%len(leases)], true
		}
		for i := 1; i+2 < len(script); i += 3 {
			op, a, b := script[i]%4, script[i+1], script[i+2]
			now := fake.Now()
			for _, r := range ref {
				r.settle(now, delay)
			}
			d := time.Duration(b%4+1) * time.Second
			switch op {
			case 0: // acquire
				name, exec := names[a%2], execs[b/4%2]
				r := ref[name]
				got, err := mem.Acquire(ctx, name, exec, d)
				if err != nil {
					t.Fatalf("op %d: Acquire: %v", i, err)
				}
				want := !r.held && !now.Before(r.delayUntil)
				if (got != nil) != want {
					t.Fatalf("op %d at %v: Acquire(%s, %s) acquired=%t, model says %t (%+v)", i, now.Sub(epoch), name, exec, got != nil, want, *r)
				}
				if got == nil {
					continue
				}
				if got.Token <= r.lastToken || !got.ExpiresAt.Equal(now.Add(d)) {
					t.Fatalf("op %d: Acquire returned %+v after token %d at %v", i, *got, r.lastToken, now)
				}
				*r = refLock{held: true, exec: exec, token: got.Token, expires: got.ExpiresAt, lastToken: got.Token}
				leases = append(leases, *got)
			case 1: // renew one, or two in order
				l, ok := pick(a)
				if !ok {
					continue
				}
				batch := []lock.Lease{l}
				if m, ok := pick(a / 8); ok && b&8 != 0 && m.Name != l.Name {
					batch = append(batch, m)
				}
				got, err := mem.Renew(ctx, batch, d)
				if err != nil {
					t.Fatalf("op %d: Renew: %v", i, err)
				}
				var want []lock.Lease
				for _, l := range batch {
					if r := ref[l.Name]; r.owns(l) {
						r.expires = now.Add(d)
						l.ExpiresAt = r.expires
						want = append(want, l)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("op %d: Renew(%+v) = %+v, model says %+v", i, batch, got, want)
				}
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("op %d: Renew(%+v) = %+v, model says %+v", i, batch, got, want)
					}
				}
			case 2: // release
				l, ok := pick(a)
				if !ok {
					continue
				}
				if err := mem.Release(ctx, []lock.Lease{l}); err != nil {
					t.Fatalf("op %d: Release: %v", i, err)
				}
				if r := ref[l.Name]; r.owns(l) {
					r.held = false
					r.delayUntil = time.Time{}
				}
			case 3: // time passes
				fake.Advance(time.Duration(a%16) * 500 * time.Millisecond)
			}
		}
	})
}
