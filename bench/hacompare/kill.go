package hacompare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease/bench/pgcompare"
)

// KillResult is what MeasureKill found: a plain value.
type KillResult struct {
	Items int
	// KilledAt is how many items had completed when the leader was
	// closed.
	KilledAt int
	// RateBefore is the items started per second from Start to the kill.
	RateBefore float64
	// Election is the time from the kill until another node led and
	// served; Recovery until the first Window after the kill in which the
	// items started reached half of RateBefore (from the kill to that
	// window's end).
	Election, Recovery, Window time.Duration
	// Total is the whole burn-down, from Start until every item was
	// settled on the new leader.
	Total time.Duration
	// Reruns counts the items that ran more than once: each had a run
	// before the new leader served whose completion the cluster did not
	// commit, and ran again once its claim's lease ran out.
	// RerunsKilledNode counts those whose first run was on the killed
	// node: its workers died with it, before or while settling, so the
	// queue gives the item to another worker (at least once, for a
	// crashed worker). RerunsSurvivor counts those whose first run was on
	// a node that lived: a settlement forwarded to the killed leader that
	// the cluster did not commit.
	Reruns, RerunsKilledNode, RerunsSurvivor int
	// Lease is the claims' lease, which bounds how long such an item
	// waits.
	Lease time.Duration
	// Phases breaks Election down, each from the kill.
	Phases KillPhases
}

// run is one handler run: when, on which node, which item.
type run struct {
	at   time.Duration // since Start
	node int
	id   uint64
}

// MeasureKill works items items off cfg's cluster with the workers spread
// over the nodes (whatever cfg says: workers on the leader alone die with
// it), closes the leader once half of them completed, and measures how
// long the cluster took to elect another and to work at half its rate
// again. It checks that every item ran, that an item ran again only after
// a run that started before the new leader served, and that the cluster
// settled every item (completed each once, with cfg.Retention).
func MeasureKill(ctx context.Context, cfg SystemConfig, items, batch int, progress io.Writer) (KillResult, error) {
	cfg.Spread = true
	cfg = cfg.withDefaults()
	res := KillResult{Items: items, Lease: cfg.Lease, Window: 200 * time.Millisecond}
	s, err := openSystem(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer func() { _ = s.Stop(context.WithoutCancel(ctx)) }()
	for left := items; left > 0; left -= batch {
		if err := s.Enqueue(ctx, min(left, batch)); err != nil {
			return res, fmt.Errorf("enqueue: %w", err)
		}
	}
	var (
		mu    sync.Mutex
		runs  = make([]run, 0, items+items/10)
		start time.Time
		half  = make(chan struct{})
		done  atomic.Int64
	)
	s.onStart = func(node int, id uint64) {
		at := time.Since(start)
		mu.Lock()
		runs = append(runs, run{at: at, node: node, id: id})
		mu.Unlock()
	}
	start = time.Now()
	err = s.Start(ctx, pgcompare.Observer{Started: func(uint64) {}, Completed: func() {
		if done.Add(1) == int64(items/2) {
			close(half)
		}
	}})
	if err != nil {
		return res, err
	}
	select {
	case <-half:
	case <-ctx.Done():
		return res, ctx.Err()
	}
	killed := s.leader
	killAt := time.Since(start)
	res.KilledAt = int(done.Load())
	// A hard stop of the leader: its node closes under its workers, whose
	// Work then ends; the followers' stores see its transport go.
	watch := s.c.watch(killed, start)
	closed := make(chan error, 1)
	go func() { closed <- s.c.stop(killed) }()
	ectx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	next, err := s.c.leader(ectx, killed)
	if err != nil {
		return res, errors.Join(err, <-closed)
	}
	res.Election = time.Since(start) - killAt
	if err := <-closed; err != nil {
		return res, fmt.Errorf("close the leader: %w", err)
	}
	res.Phases = watch.stop(killAt)
	if res.Phases.Serving < 0 {
		res.Phases.Serving = res.Election // served between two of the watch's looks
	}
	s.leader = next
	c, err := s.settled(ctx, next)
	if err != nil {
		return res, fmt.Errorf("settled: %w", err)
	}
	res.Total = time.Since(start)
	s.cancel()
	s.wg.Wait()
	s.errs = nil // the killed node's Work ended with its node: expected
	if progress != nil {
		fmt.Fprintf(progress, "kill: leader node%d closed after %d of %d items at %s; node%d leads after %s; all settled after %s: %+v\n",
			killed, res.KilledAt, items, killAt.Round(time.Millisecond), next, res.Election.Round(time.Millisecond), res.Total.Round(time.Millisecond), c)
	}

	mu.Lock()
	defer mu.Unlock()
	defer func() {
		if progress != nil {
			fmt.Fprintf(progress, "kill phases: %s\n", res.Phases)
		}
	}()
	byItem := map[uint64][]run{}
	for _, r := range runs {
		byItem[r.id] = append(byItem[r.id], r)
	}
	if len(byItem) != items {
		return res, fmt.Errorf("%d distinct items ran, want %d", len(byItem), items)
	}
	served := killAt + res.Election
	for id, rs := range byItem {
		if len(rs) == 1 {
			continue
		}
		res.Reruns++
		first := rs[0]
		if first.node == killed {
			res.RerunsKilledNode++
		} else {
			res.RerunsSurvivor++
		}
		// A run whose settlement the cluster did not commit started
		// before a new leader served: on the killed node, or on a follower
		// that forwarded its settlement to the killed leader.
		if first.at >= served {
			return res, fmt.Errorf("item %d ran %d times, first on node%d at %s, after the new leader served at %s", id, len(rs), first.node, first.at, served)
		}
	}
	if c.Dead != 0 {
		return res, fmt.Errorf("%d items dead-lettered", c.Dead)
	}
	if cfg.Retention && c.Completed != items {
		return res, fmt.Errorf("the cluster completed %d items, want %d", c.Completed, items)
	}
	before := 0
	for _, r := range runs {
		if r.at < killAt {
			before++
		}
	}
	res.RateBefore = float64(before) / killAt.Seconds()
	if res.Phases.Leader >= 0 {
		from := killAt + res.Phases.Leader
		for _, r := range runs {
			if r.at >= from && (res.Phases.FirstRun < 0 || r.at-killAt < res.Phases.FirstRun) {
				res.Phases.FirstRun = r.at - killAt
			}
		}
		const w = 50 * time.Millisecond
		for t := from; t < min(res.Total, from+time.Second) && res.Phases.Full < 0; t += time.Millisecond {
			n := 0
			for _, r := range runs {
				if r.at >= t && r.at < t+w {
					n++
				}
			}
			if float64(n) >= res.RateBefore*w.Seconds() {
				res.Phases.Full = t + w - killAt
			}
		}
	}
	res.Recovery = -1
	want := res.RateBefore / 2 * res.Window.Seconds()
	for t := killAt; t < res.Total; t += 10 * time.Millisecond {
		n := 0
		for _, r := range runs {
			if r.at >= t && r.at < t+res.Window {
				n++
			}
		}
		if float64(n) >= want {
			res.Recovery = t + res.Window - killAt
			break
		}
	}
	return res, nil
}

// WriteMarkdown writes what r found as a table, under a line of settings.
func (r KillResult) WriteMarkdown(w io.Writer, cfg SystemConfig) error {
	recovery := "not within the run"
	if r.Recovery >= 0 {
		recovery = msText(r.Recovery) + " ms"
	}
	cfg.Spread = true
	_, err := fmt.Fprintf(w, "Leader killed mid burn-down: %s, %d items, the leader's node closed once half had completed (%d), claim lease %s, raft's default timeouts.\n\n"+
		"| figure | value |\n|---|--:|\n| rate before the kill | %.0f items/s |\n| kill to a new leader serving | %s ms |\n"+
		"%s| kill to a %s window at half the rate before | %s |\n| whole burn-down | %.2f s |\n| items run again (a run before the new leader served, not committed) | %d |\n"+
		"| of which first run on the killed node (its workers died with it) | %d |\n| of which first run on a surviving node (settlement lost with the leader) | %d |\n"+
		"| every item ran; the cluster settled each once | yes%s |\n",
		cfg.withDefaults().Name(), r.Items, r.KilledAt, r.Lease, r.RateBefore, msText(r.Election), r.Phases.rows(), r.Window, recovery, r.Total.Seconds(), r.Reruns, r.RerunsKilledNode, r.RerunsSurvivor, completedText(cfg))
	return err
}

// completedText says what the final check could count.
func completedText(cfg SystemConfig) string {
	if cfg.Retention {
		return " (completed count = items)"
	}
	return " (none left unsettled or dead; without retention completions are not counted)"
}
