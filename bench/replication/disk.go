package replication

import (
	"errors"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// fsyncProbe measures the disk a run keeps its data on while the run goes
// on: it rewrites one 4 KiB block of a file of its own and syncs it, every
// probeEvery, and records how long each sync took. A commit can be no
// faster than the syncs it waits for (ours: the leader's log write, then a
// follower's), so the probe shows the floor the disk sets beside the
// figures of the same moment.
type fsyncProbe struct {
	stop chan struct{}
	wg   sync.WaitGroup
	took []time.Duration // owned by the probe's goroutine until stop
	n    atomic.Int64    // len(took), for anyone
	err  error
}

const probeEvery = 10 * time.Millisecond

// startFsyncProbe starts a probe in dir.
func startFsyncProbe(dir string) (*fsyncProbe, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-")
	if err != nil {
		return nil, err
	}
	p := &fsyncProbe{stop: make(chan struct{})}
	p.wg.Go(func() {
		defer func() {
			p.err = errors.Join(p.err, f.Close(), os.Remove(f.Name()))
		}()
		block := make([]byte, 4096)
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			if _, err := f.WriteAt(block, 0); err != nil {
				p.err = err
				return
			}
			start := time.Now()
			if err := f.Sync(); err != nil {
				p.err = err
				return
			}
			p.took = append(p.took, time.Since(start))
			p.n.Add(1)
		}
	})
	return p, nil
}

// finish stops the probe and returns its p50 and p99 sync latency in
// milliseconds.
func (p *fsyncProbe) finish() (p50, p99 float64, err error) {
	close(p.stop)
	p.wg.Wait()
	if p.err != nil {
		return 0, 0, p.err
	}
	lat := make([]float64, len(p.took))
	for i, d := range p.took {
		lat[i] = ms(d)
	}
	slices.Sort(lat)
	return percentile(lat, 0.50), percentile(lat, 0.99), nil
}
