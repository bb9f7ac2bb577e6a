package hacompare

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease/bench/pgcompare"
)

// RetainedResult is what MeasureRetained found: a plain value.
type RetainedResult struct {
	Items int // completed items the cluster kept
	// HeapBefore and HeapAfter are the process's live heap (HeapAlloc
	// after two garbage collections) with the three nodes up and empty,
	// and once they keep Items completed items; HeapTwoNodes once one
	// follower is closed and nothing here refers to it (what its Close
	// released).
	HeapBefore, HeapAfter, HeapTwoNodes uint64
	// Fill is how long the Items took to enqueue, work off and settle.
	Fill time.Duration
	// SnapshotLeader and SnapshotFollower are how long a raft snapshot
	// (raft.Raft.Snapshot, to disk with fsync) took on the leader and on
	// the follower then closed; SnapshotBytes the size of the
	// follower's newest snapshot.
	SnapshotLeader, SnapshotFollower time.Duration
	SnapshotBytes                    int64
	// Restore is how long replicated.Open of the closed follower took on
	// its directory (restoring its snapshot), and CatchUp how long after
	// that it took to apply the leader's last index.
	Restore, CatchUp time.Duration
}

// liveHeap returns HeapAlloc after two garbage collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// latestSnapshotSize returns the size of the files of the newest
// snapshot in the node directory dir (raft's file snapshot store keeps
// them in dir/snapshots, one directory each).
func latestSnapshotSize(dir string) (int64, error) {
	root := filepath.Join(dir, "snapshots")
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	var (
		newest string
		at     time.Time
	)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return 0, err
		}
		if e.IsDir() && !strings.HasSuffix(e.Name(), ".tmp") && info.ModTime().After(at) {
			newest, at = e.Name(), info.ModTime()
		}
	}
	if newest == "" {
		return 0, fmt.Errorf("no snapshot in %s", root)
	}
	var n int64
	err = filepath.WalkDir(filepath.Join(root, newest), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}

// MeasureRetained has cfg's cluster (with retention, whatever cfg says)
// enqueue, work off and keep items completed items, batch per enqueue,
// then measures the heap, a snapshot on the leader and on a follower, and
// the follower's restart on its directory.
func MeasureRetained(ctx context.Context, cfg SystemConfig, items, batch int, progress io.Writer) (RetainedResult, error) {
	cfg.Retention = true
	res := RetainedResult{Items: items}
	s, err := openSystem(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer func() { _ = s.Stop(context.WithoutCancel(ctx)) }()
	res.HeapBefore = liveHeap()
	t0 := time.Now()
	for left := items; left > 0; left -= batch {
		if err := s.Enqueue(ctx, min(left, batch)); err != nil {
			return res, fmt.Errorf("enqueue: %w", err)
		}
	}
	var done atomic.Int64
	reached := make(chan struct{})
	if err := s.Start(ctx, pgcompare.Observer{Started: func(uint64) {}, Completed: func() {
		if done.Add(1) == int64(items) {
			close(reached)
		}
	}}); err != nil {
		return res, err
	}
	select {
	case <-reached:
	case <-ctx.Done():
		return res, ctx.Err()
	}
	c, err := s.settled(ctx, s.leader)
	if err != nil {
		return res, fmt.Errorf("settled: %w", err)
	}
	if c.Completed != items {
		return res, fmt.Errorf("the cluster keeps %d completed items, want %d", c.Completed, items)
	}
	res.Fill = time.Since(t0)
	s.cancel()
	s.wg.Wait()
	res.HeapAfter = liveHeap()
	if progress != nil {
		fmt.Fprintf(progress, "retained %d items in %s; heap %d MB before, %d MB after\n", items, res.Fill.Round(time.Millisecond), res.HeapBefore>>20, res.HeapAfter>>20)
	}

	nodes := s.c.running()
	t0 = time.Now()
	if err := nodes[s.leader].Raft().Snapshot().Error(); err != nil {
		return res, fmt.Errorf("leader snapshot: %w", err)
	}
	res.SnapshotLeader = time.Since(t0)
	f := (s.leader + 1) % clusterSize
	t0 = time.Now()
	if err := nodes[f].Raft().Snapshot().Error(); err != nil {
		return res, fmt.Errorf("follower snapshot: %w", err)
	}
	res.SnapshotFollower = time.Since(t0)
	if res.SnapshotBytes, err = latestSnapshotSize(s.c.cfgs[f].Dir); err != nil {
		return res, err
	}
	// The follower's broker goes first: it holds the node's store. Then
	// nothing here refers to the node, so that its heap can go.
	if err := s.brokers[f].Close(); err != nil {
		return res, err
	}
	s.brokers[f], s.stores[f] = nil, nil
	leader := nodes[s.leader]
	nodes = nil
	if err := s.c.stop(f); err != nil {
		return res, fmt.Errorf("stop follower: %w", err)
	}
	res.HeapTwoNodes = liveHeap()
	t0 = time.Now()
	if err := s.c.start(ctx, f); err != nil {
		return res, fmt.Errorf("restart follower: %w", err)
	}
	res.Restore = time.Since(t0)
	t0 = time.Now()
	last := leader.Raft().LastIndex()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for s.c.running()[f].Raft().AppliedIndex() < last {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
	}
	res.CatchUp = time.Since(t0)
	return res, nil
}

// WriteMarkdown writes what r found as a table, under a line of settings.
func (r RetainedResult) WriteMarkdown(w io.Writer, cfg SystemConfig) error {
	mb := func(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	_, err := fmt.Fprintf(w, "Retained items: %s keeps %d completed items (claim.StandardRetention); heap is HeapAlloc after two GCs, of the one process holding all three nodes.\n\n"+
		"| figure | value |\n|---|--:|\n"+
		"| enqueue, work off and settle the items | %.1f s |\n"+
		"| heap, 3 nodes empty | %s MB |\n| heap, 3 nodes keeping the items | %s MB |\n"+
		"| heap per node, (keeping − empty) / 3 | %s MB (%.0f bytes an item) |\n"+
		"| heap once a follower is closed | %s MB |\n"+
		"| raft snapshot on the leader | %s ms |\n| raft snapshot on a follower | %s ms |\n| snapshot on disk | %s MB |\n"+
		"| follower restart (Open, restoring its snapshot) | %s ms |\n| then catching up to the leader's last index | %s ms |\n",
		cfg.Name(), r.Items, r.Fill.Seconds(), mb(r.HeapBefore), mb(r.HeapAfter),
		mb((r.HeapAfter-min(r.HeapBefore, r.HeapAfter))/3), float64(r.HeapAfter-min(r.HeapBefore, r.HeapAfter))/3/float64(max(r.Items, 1)),
		mb(r.HeapTwoNodes), msText(r.SnapshotLeader), msText(r.SnapshotFollower), mb(uint64(r.SnapshotBytes)), msText(r.Restore), msText(r.CatchUp))
	return err
}

// msText formats d in milliseconds.
func msText(d time.Duration) string {
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}
