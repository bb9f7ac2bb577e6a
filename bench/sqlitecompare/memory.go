package sqlitecompare

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"
)

// MemorySample is the heap of the process after Items items passed
// through the queue.
type MemorySample struct {
	Items int
	// HeapInuse is runtime.MemStats.HeapInuse as sampled, and LiveHeap
	// HeapInuse right after a collection: what the process keeps.
	HeapInuse, LiveHeap uint64
	Elapsed             time.Duration
}

// MemorySoak passes total items through this repository's store on a
// fresh file in dir, with workers workers working them off while one
// goroutine enqueues batches of batch items, keeping at most backlog
// items waiting, and samples the heap ten times on the way.
func MemorySoak(ctx context.Context, dir string, sync Sync, total, workers, batch, backlog int) (samples []MemorySample, err error) {
	sys, err := openOurs(ctx, filepath.Join(dir, "memory.db"), sync)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, sys.Stop(context.WithoutCancel(ctx))) }()
	done := newCounter()
	if err := sys.Start(ctx, workers, Observer{Started: func(uint64) {}, Completed: done.add}); err != nil {
		return nil, err
	}
	sample := func(items int, start time.Time) MemorySample {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := MemorySample{Items: items, HeapInuse: ms.HeapInuse, Elapsed: time.Since(start)}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		s.LiveHeap = ms.HeapInuse
		return s
	}
	start := time.Now()
	samples = append(samples, sample(0, start))
	step := max(total/10, 1)
	nextSample := step
	for enqueued := 0; enqueued < total; {
		// Keep the backlog bounded: wait until the workers caught up.
		if enqueued-int(done.n.Load()) >= backlog {
			if err := wait(ctx, done.await(int64(enqueued-backlog/2)), 10*time.Minute, "memory soak"); err != nil {
				return samples, err
			}
			continue
		}
		n := min(batch, total-enqueued)
		if err := sys.EnqueueBatch(ctx, n); err != nil {
			return samples, fmt.Errorf("enqueue: %w", err)
		}
		enqueued += n
		if completed := int(done.n.Load()); completed >= nextSample {
			samples = append(samples, sample(completed, start))
			nextSample += step
		}
	}
	if err := wait(ctx, done.await(int64(total)), 10*time.Minute, "memory soak"); err != nil {
		return samples, err
	}
	if err := sys.Settled(ctx); err != nil {
		return samples, err
	}
	return append(samples, sample(total, start)), nil
}
