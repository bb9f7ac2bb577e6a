package lock_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/lock"
)

// Managers on every core race TryLock on one name, a bounded number of
// times; their functions must never overlap, and every run must be either a
// clean run or contention.
func TestTryLockStress(t *testing.T) {
	svc := lease.Must(lease.New())
	defer svc.Close()
	mem := lease.Must(lock.NewMemory(svc))
	const workers, tries = 8, 300
	var inside, overlaps, ran atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		m := newManager(t, mem)
		wg.Go(func() {
			for range tries {
				_, err := m.TryLock(context.Background(), "hot", func(ctx context.Context, l lock.Lease) error {
					if inside.Add(1) > 1 {
						overlaps.Add(1)
					}
					ran.Add(1)
					inside.Add(-1)
					return nil
				})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.Zero(t, overlaps.Load(), "functions ran under the same lock at once")
	assert.Positive(t, ran.Load())
	l, err := mem.Acquire(context.Background(), "hot", "after", lock.DefaultLeaseDuration)
	require.NoError(t, err)
	assert.NotNil(t, l, "every TryLock released")
}

// Workers race to acquire, renew and release two names of a Memory with a
// lock-delay, with leases short enough to expire often, on the system
// clock in a synctest bubble (so that many calls happen at the same
// instant). Every expiry the service reports starts a delay, and no
// acquisition may fall inside one: the Memory keeps the delay without
// holding its mutex across the service.
func TestLockDelayStress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 30 * time.Millisecond
		svc := lease.Must(lease.New())
		defer svc.Close()
		mem := lease.Must(lock.NewMemory(svc, lock.WithLockDelay(delay), lock.WithKeyPrefix("l/")))
		type event struct {
			name string
			at   time.Time
		}
		var mu sync.Mutex
		var grants, expiries []event
		stop := svc.OnEnd(func(l lease.Lease, reason lease.EndReason) {
			if reason != lease.EndExpired {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range l.Keys {
				expiries = append(expiries, event{strings.TrimPrefix(k, "l/"), l.ExpiresAt})
			}
		})
		defer stop()
		var wg sync.WaitGroup
		for w := range 8 {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			wg.Go(func() {
				ctx := context.Background()
				var mine []lock.Lease
				for range 300 {
					name := []string{"a", "b"}[rng.IntN(2)]
					d := time.Duration(10+rng.IntN(30)) * time.Millisecond
					switch op := rng.IntN(10); {
					case op < 3:
						l, err := mem.Acquire(ctx, name, "w"+strconv.Itoa(w), d)
						assert.NoError(t, err)
						if l != nil {
							mu.Lock()
							grants = append(grants, event{name, l.ExpiresAt.Add(-d)})
							mu.Unlock()
							mine = append(mine, *l)
						}
					case op < 4:
						got, err := mem.Renew(ctx, mine, d)
						assert.NoError(t, err)
						mine = got
					case op < 5:
						if len(mine) > 0 {
							assert.NoError(t, mem.Release(ctx, mine[:1]))
							mine = mine[1:]
						}
					default:
						<-time.After(time.Duration(rng.IntN(40)) * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		<-time.After(time.Second) // every lease expires and is reported
		svc.ActiveCount()
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, expiries)
		require.NotEmpty(t, grants)
		for _, g := range grants {
			for _, e := range expiries {
				if g.name == e.name && !g.at.Before(e.at) && g.at.Before(e.at.Add(delay)) {
					t.Errorf("%s acquired at %v, in the delay of the lease that expired at %v",
						g.name, g.at.Format("05.000000"), e.at.Format("05.000000"))
				}
			}
		}
		t.Logf("%d grants, %d expiries", len(grants), len(expiries))
	})
}
