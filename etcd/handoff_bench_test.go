package etcd

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/leasehold/lease/lock"
)

// handOffLock is one lock of one implementation, with one holder and one
// waiter, as BenchmarkHandOff drives it.
type handOffLock interface {
	// hold takes the free lock for the holder.
	hold(ctx context.Context) (release func(context.Context) error, err error)
	// wait blocks until the waiter holds the lock.
	wait(ctx context.Context) (release func(context.Context) error, err error)
	// queue is the key prefix where a waiter's key appears once it queued.
	queue() string
}

// ourLock is a lock of this package's Provider.
type ourLock struct {
	p    *Provider
	name string
}

func (o ourLock) take(l *lock.Lease, err error) (func(context.Context) error, error) {
	if err != nil || l == nil {
		return nil, err
	}
	return func(ctx context.Context) error { return o.p.Release(ctx, []lock.Lease{*l}) }, nil
}

func (o ourLock) hold(ctx context.Context) (func(context.Context) error, error) {
	l, err := o.p.Acquire(ctx, o.name, "holder", 10*time.Second)
	return o.take(l, err)
}

func (o ourLock) wait(ctx context.Context) (func(context.Context) error, error) {
	l, err := o.p.AcquireWait(ctx, o.name, "waiter", 10*time.Second)
	return o.take(l, err)
}

func (o ourLock) queue() string { return o.p.queuePrefix(o.name) }

// etcdMutex is a lock of etcd's concurrency.Mutex, the holder and the
// waiter each on a session of their own.
type etcdMutex struct {
	holder, waiter *concurrency.Mutex
	prefix         string
}

func lockMutex(ctx context.Context, m *concurrency.Mutex) (func(context.Context) error, error) {
	if err := m.Lock(ctx); err != nil {
		return nil, err
	}
	return m.Unlock, nil
}

func (e etcdMutex) hold(ctx context.Context) (func(context.Context) error, error) {
	return lockMutex(ctx, e.holder)
}

func (e etcdMutex) wait(ctx context.Context) (func(context.Context) error, error) {
	return lockMutex(ctx, e.waiter)
}

// queue is the Mutex's whole prefix, the holder's key included: a new key
// there is the waiter's.
func (e etcdMutex) queue() string { return e.prefix + "/" }

// BenchmarkHandOff measures how long a lock takes to pass from its holder
// to a blocked waiter: from the start of the holder's release to the
// waiter's return with the lock. A settled waiter queued 200 ms before the
// release; a fresh one 10 ms before. Each runs for this package's Provider
// and for etcd's concurrency.Mutex on the same server, and reports the
// median and the 99th percentile of its iterations in milliseconds (ns/op
// is the whole cycle, the waiter's age included). Run it with a fixed
// count of iterations, for example -benchtime 50x -count 5.
func BenchmarkHandOff(b *testing.B) {
	for _, age := range []struct {
		name string
		d    time.Duration
	}{{"settled", 200 * time.Millisecond}, {"fresh", 10 * time.Millisecond}} {
		b.Run("impl=lease/waiter="+age.name, func(b *testing.B) {
			p, err := New(testClient, WithPrefix("bench/"+b.Name()+"/"))
			if err != nil {
				b.Fatal(err)
			}
			benchHandOff(b, ourLock{p: p, name: "x"}, age.d)
		})
		b.Run("impl=etcd-mutex/waiter="+age.name, func(b *testing.B) {
			prefix := "bench/" + b.Name()
			benchHandOff(b, etcdMutex{holder: newMutex(b, prefix), waiter: newMutex(b, prefix), prefix: prefix}, age.d)
		})
	}
}

// newMutex returns a Mutex on prefix, on a session of its own that ends
// with the benchmark.
func newMutex(b *testing.B, prefix string) *concurrency.Mutex {
	s, err := concurrency.NewSession(testClient, concurrency.WithTTL(10))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return concurrency.NewMutex(s, prefix)
}

func benchHandOff(b *testing.B, l handOffLock, age time.Duration) {
	ctx := b.Context()
	var took []time.Duration
	for b.Loop() {
		took = append(took, handOff(b, ctx, l, age))
	}
	slices.Sort(took)
	ms := func(q float64) float64 {
		return float64(took[int(q*float64(len(took)-1)+0.5)]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// handOff runs one hand-off: the holder takes the lock, the waiter queues,
// age later the holder releases, and it returns the time from the release
// to the waiter's return with the lock.
func handOff(b *testing.B, ctx context.Context, l handOffLock, age time.Duration) time.Duration {
	release, err := l.hold(ctx)
	if err != nil || release == nil {
		b.Fatalf("the holder could not take the free lock: %v", err)
	}
	// A watch from the present, which etcd serves at once, created before
	// the waiter starts, so its queue key's put is seen as it happens.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	wch := testClient.Watch(wctx, l.queue(), clientv3.WithPrefix(), clientv3.WithFilterDelete(), clientv3.WithCreatedNotify())
	if r, ok := <-wch; !ok || r.Err() != nil {
		b.Fatal("the watch of the queue failed")
	}
	type result struct {
		release func(context.Context) error
		err     error
		at      time.Time
	}
	done := make(chan result, 1)
	go func() {
		rel, err := l.wait(ctx)
		done <- result{rel, err, time.Now()}
	}()
	awaitPut(b, wch)
	<-time.After(age) // the waiter's age at the release
	start := time.Now()
	if err := release(ctx); err != nil {
		b.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.release == nil {
		b.Fatalf("the waiter did not get the lock: %v", r.err)
	}
	if err := r.release(ctx); err != nil {
		b.Fatal(err)
	}
	return r.at.Sub(start)
}

// awaitPut waits for the first put that wch reports: the waiter's key.
func awaitPut(b *testing.B, wch clientv3.WatchChan) {
	for r := range wch {
		for _, ev := range r.Events {
			if ev.Type == mvccpb.PUT {
				return
			}
		}
	}
	b.Fatal("the watch of the queue ended before the waiter queued")
}
