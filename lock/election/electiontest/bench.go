package electiontest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/leasehold/lease/lock"
	"github.com/leasehold/lease/lock/election"
)

// Failover is how BenchmarkFailover ends a leadership. It is a plain value.
type Failover int

const (
	// Resign: the leader calls Resign, which releases the lock.
	Resign Failover = iota
	// Crash: the leader stops renewing and its release fails, as if its
	// process had died: the waiter leads once the lease has expired.
	Crash
)

// BenchmarkFailover measures, b.N times, how long a waiting candidate
// takes to lead once the leader's leadership ends as how says: from the
// Resign call, or the crash, to the return of the waiter's Campaign. Each
// round elects a leader with a lease of d on p, starts the waiter, lets it
// settle (a real-time wait, so that it is waiting on the provider, not
// still starting: a few milliseconds for a remote provider, 0 for a local
// one) and then ends the leadership. It reports the median and the 90th
// percentile as the metrics "p50-ms" and "p90-ms"; ns/op includes the
// settling and, for a crash, the lease.
//
// p must be a provider New accepts, on the system clock; a fresh one, or
// one whose lock "electiontest" is free.
func BenchmarkFailover(b *testing.B, p lock.Provider, d time.Duration, how Failover, settle time.Duration) {
	b.Helper()
	leader, waiter := &faults{}, &faults{entered: make(chan struct{}, 1)}
	opts := []election.Option{election.WithLeaseDuration(d)}
	elL, err := election.New(leader.wrap(p), electionName, opts...)
	if err != nil {
		b.Fatal(err)
	}
	elW, err := election.New(waiter.wrap(p), electionName, opts...)
	if err != nil {
		b.Fatal(err)
	}
	type won struct {
		ld  *election.Leadership
		at  time.Time
		err error
	}
	samples := make([]time.Duration, 0, b.N)
	for range b.N {
		leader.renew.Store(false)
		leader.release.Store(false)
		ctx, cancel := context.WithCancel(background)
		ld, err := elL.Campaign(ctx, nil)
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		ch := make(chan won, 1)
		go func() {
			l, err := elW.Campaign(background, nil)
			ch <- won{l, time.Now(), err}
		}()
		<-waiter.entered
		if settle > 0 {
			<-time.After(settle)
		}
		start := time.Now()
		if how == Crash {
			leader.renew.Store(true)
			leader.release.Store(true)
			cancel()
		} else if err := ld.Resign(background); err != nil {
			b.Fatal(err)
		}
		w := <-ch
		cancel()
		_ = ld.Resign(background)
		if w.err != nil {
			b.Fatal(w.err)
		}
		samples = append(samples, w.at.Sub(start))
		if err := w.ld.Resign(background); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(samples)
	ms := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.9), "p90-ms")
}
