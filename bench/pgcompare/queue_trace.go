package pgcompare

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/postgres"
)

// TraceEnv names the environment variable that, when set, makes the claim
// store's systems time each pickup's steps (enqueue, the notification,
// the claims, the previous item's settlement) and write their medians to
// standard error as the system stops.
const TraceEnv = "PGCOMPARE_TRACE"

// pickupTrace records, for each pickup (from an Enqueue of one item to
// the start of its handler), when each step first and last happened after
// the enqueue began.
type pickupTrace struct {
	label string
	out   io.Writer
	// counts are the Broker's calls during the burn-down.
	counts   burnCounts
	reported atomic.Bool

	mu   sync.Mutex
	t0   time.Time
	open bool
	cur  map[string]time.Duration
	rows []map[string]time.Duration
	// at holds when each of rows began, in the same order.
	at []time.Time
}

func (t *pickupTrace) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t0, t.open, t.cur = time.Now(), true, map[string]time.Duration{}
}

func (t *pickupTrace) mark(name string) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.open {
		return
	}
	d := now.Sub(t.t0)
	if _, ok := t.cur[name]; !ok {
		t.cur[name] = d
	}
	t.cur["last "+name] = d
	if name == "handler" {
		t.rows = append(t.rows, t.cur)
		t.at = append(t.at, t.t0)
		t.open = false
	}
}

// report writes the medians of the steps of the pickups traced since the
// last report, then the steps of the slowest of them (slowTraced), each
// with the time it began so that it can be matched with the server's log
// (checkpoints, autovacuum), and forgets them.
func (t *pickupTrace) report() {
	t.mu.Lock()
	rows, at := t.rows, t.at
	t.rows, t.at, t.open = nil, nil, false
	t.mu.Unlock()
	if len(rows) == 0 {
		return
	}
	var names []string
	for _, r := range rows {
		for k := range r {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return int(medianOf(rows, a) - medianOf(rows, b))
	})
	fmt.Fprintf(t.out, "trace %s, %d pickups, medians after the enqueue began:", t.label, len(rows))
	for _, k := range names {
		n := 0
		for _, r := range rows {
			if _, ok := r[k]; ok {
				n++
			}
		}
		fmt.Fprintf(t.out, " %s %.2f ms (%d);", k, float64(medianOf(rows, k))/1e6, n)
	}
	fmt.Fprintln(t.out)
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(rows[b]["handler"] - rows[a]["handler"]) })
	for _, i := range order[:min(len(order), slowTraced(len(rows)))] {
		r := rows[i]
		steps := slices.Collect(maps.Keys(r))
		slices.SortFunc(steps, func(a, b string) int { return int(r[a] - r[b]) })
		fmt.Fprintf(t.out, "trace %s, slow pickup %d of %d at %s:", t.label, i+1, len(rows), at[i].UTC().Format("15:04:05.000"))
		for _, k := range steps {
			fmt.Fprintf(t.out, " %s %.2f ms;", k, float64(r[k])/1e6)
		}
		fmt.Fprintln(t.out)
	}
}

// slowTraced is how many of n traced pickups report writes step by step:
// the slowest 2%, so that the 99th percentile is among them, at least 3.
func slowTraced(n int) int { return max(3, (2*n+99)/100) }

func medianOf(rows []map[string]time.Duration, k string) time.Duration {
	var ds []time.Duration
	for _, r := range rows {
		if d, ok := r[k]; ok {
			ds = append(ds, d)
		}
	}
	return percentile(ds, 50)
}

// tracedStore is a claim store whose calls mark a pickupTrace.
type tracedStore struct {
	*postgres.ClaimStore
	t *pickupTrace
}

func (s tracedStore) Enqueue(ctx context.Context, items []claim.NewItem) ([]claim.Item, error) {
	out, err := s.ClaimStore.Enqueue(ctx, items)
	s.t.mark("enqueued")
	return out, err
}

func (s tracedStore) Claim(ctx context.Context, req claim.ClaimRequest) ([]claim.Claim, error) {
	s.t.mark("claim sent")
	t0 := s.t.counts.claimStart()
	out, err := s.ClaimStore.Claim(ctx, req)
	s.t.counts.claimEnd(t0, len(out))
	if len(out) > 0 {
		s.t.mark("claimed")
	} else {
		s.t.mark("claimed none")
	}
	return out, err
}

func (s tracedStore) Settle(ctx context.Context, st claim.Settlement) error {
	s.t.mark("settle sent")
	t0 := s.t.counts.settleStart()
	err := s.ClaimStore.Settle(ctx, st)
	s.t.counts.settleEnd(t0)
	s.t.mark("settled")
	return err
}

func (s tracedStore) Notify(queue string) (<-chan struct{}, func()) {
	ch, stop := s.ClaimStore.Notify(queue)
	quit := make(chan struct{})
	go func() {
		select {
		case <-ch:
			s.t.mark("notified")
		case <-quit:
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(quit) }); stop() }
}
