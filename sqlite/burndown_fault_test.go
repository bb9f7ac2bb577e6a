package sqlite_test

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/lease"
	"github.com/leasehold/lease/claim"
	"github.com/leasehold/lease/sqlite"
)

const burnQueue = "burn"

func init() {
	children["producer"] = produce
	children["worker"] = work
}

// produce enqueues the keyed items from..to-1 of the burn-down, in chunks
// of 20, one chunk at a time, saying "acked ID INDEX" for each once its
// Enqueue returned.
func produce(args []string) error {
	path := args[0]
	from, _ := strconv.Atoi(args[1])
	to, _ := strconv.Atoi(args[2])
	ctx, cancel := childContext()
	defer cancel()
	s, err := sqlite.NewClaimStore(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	for i := from; i < to; i += 20 {
		var items []claim.NewItem
		for j := i; j < min(i+20, to); j++ {
			items = append(items, claim.NewItem{Queue: burnQueue, Key: "k" + strconv.Itoa(j),
				Payload: []byte(strconv.Itoa(j)), MaxAttempts: 100})
		}
		got, err := s.Enqueue(ctx, items)
		if err != nil {
			return err
		}
		for j, it := range got {
			say("acked %d %d", it.ID, i+j)
		}
	}
	return nil
}

// work claims items of the burn-down 25 at a time, with leases of a
// second, and completes each from a goroutine of its own (so that the
// completions share commits), saying "ran ID TOKEN" before the completion
// and "done ID TOKEN" once it returned. It exits once the queue is empty
// and the file args[0]+".stop" exists.
func work(args []string) error {
	path := args[0]
	ctx, cancel := childContext()
	defer cancel()
	s, err := sqlite.NewClaimStore(ctx, path)
	if err != nil {
		return err
	}
	defer s.Close()
	say("ready")
	for {
		ready, stop := s.Notify(burnQueue)
		got, err := s.Claim(ctx, claim.ClaimRequest{Queue: burnQueue, Owner: args[1], Limit: 25, Lease: time.Second})
		if err != nil {
			stop()
			return err
		}
		if len(got) == 0 {
			if _, err := os.Stat(path + ".stop"); err == nil {
				stop()
				return nil
			}
			select {
			case <-ready:
			case <-time.After(100 * time.Millisecond):
			}
			stop()
			continue
		}
		stop()
		var wg sync.WaitGroup
		errs := make(chan error, len(got))
		for _, c := range got {
			wg.Go(func() {
				say("ran %d %d", c.Item, c.Ref.Token)
				err := s.Settle(ctx, claim.Settlement{Ref: c.Ref, How: claim.SettleComplete})
				switch {
				case err == nil:
					say("done %d %d", c.Item, c.Ref.Token)
				case !errors.Is(err, claim.ErrClaimLost) && !errors.Is(err, lease.ErrStaleUse):
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
	}
}

// burnLine is one line of a child of the burn-down.
type burnLine struct {
	from int
	line string
}

// TestBurnDownSurvivesKills: four worker processes burn down 2,000 items
// that a producer process enqueues; two workers and the producer are
// killed with SIGKILL mid-run and started again. No acknowledged enqueue
// is lost, every item is completed exactly once, and no item runs again
// after its completion.
func TestBurnDownSurvivesKills(t *testing.T) {
	t.Parallel()
	const total = 2000
	path := tempFile(t)
	s := newClaimStore(t, path)

	lines := make(chan burnLine, 4096)
	var relay sync.WaitGroup
	follow := func(n int, c *child) {
		relay.Go(func() {
			for l := range c.lines {
				lines <- burnLine{n, l}
			}
		})
	}
	var workers []*child
	startWorker := func() {
		n := len(workers)
		c := startChild(t, "worker", path, "w"+strconv.Itoa(n))
		c.expect(t, "ready", 30*time.Second)
		workers = append(workers, c)
		follow(1+n, c)
	}
	for range 4 {
		startWorker()
	}
	producer := startChild(t, "producer", path, "0", strconv.Itoa(total))
	follow(0, producer)

	acked := map[int64]int{}     // item ID -> key index
	ran := map[int64][]uint64{}  // item ID -> tokens of its runs
	ranOn := map[int64][]int{}   // item ID -> the children that ran it
	done := map[int64][]uint64{} // item ID -> tokens of its completions
	record := func(l burnLine) {
		f := strings.Fields(l.line)
		if len(f) != 3 {
			return
		}
		id, _ := strconv.ParseInt(f[1], 10, 64)
		n, _ := strconv.ParseUint(f[2], 10, 64)
		switch f[0] {
		case "acked":
			acked[id] = int(n)
		case "ran":
			ran[id] = append(ran[id], n)
			ranOn[id] = append(ranOn[id], l.from)
		case "done":
			done[id] = append(done[id], n)
		}
	}
	var killedWorkers, killedProducer, producerDone bool
	deadline := time.After(150 * time.Second) // a loaded machine, with the race detector
	stopped := false
	for !stopped {
		select {
		case <-deadline:
			t.Fatalf("burn-down not over: %d acked, %d items done", len(acked), len(done))
		case err := <-producer.done:
			producer.done <- err
			if killedProducer && !producerDone {
				require.NoError(t, err, "producer")
				producerDone = true
			}
		case l := <-lines:
			record(l)
			// Keep up with the children: the kills go by what they said.
			for drained := false; !drained; {
				select {
				case l := <-lines:
					record(l)
				default:
					drained = true
				}
			}
		case <-time.After(50 * time.Millisecond):
		}
		if !killedProducer && len(acked) >= total/2 {
			producer.kill()
			killedProducer = true
			// Start again after what was acknowledged: the keys make the
			// chunk under way when it died idempotent.
			producer = startChild(t, "producer", path, strconv.Itoa(len(acked)), strconv.Itoa(total))
			follow(0, producer)
		}
		if !killedWorkers && len(done) >= total/4 {
			workers[0].kill()
			workers[1].kill()
			killedWorkers = true
			startWorker()
			startWorker()
		}
		// Both kills happen before the end, even when the children finish
		// faster than their lines are read.
		if producerDone && killedWorkers && !stopped {
			c, err := s.Counts(t.Context(), burnQueue)
			require.NoError(t, err)
			if c == (claim.Counts{}) {
				require.NoError(t, os.WriteFile(path+".stop", nil, 0o600))
				stopped = true
			}
		}
	}
	for _, w := range workers[2:] {
		w.wait(t, 30*time.Second)
	}
	relay.Wait()
	close(lines)
	for l := range lines {
		record(l)
	}

	require.True(t, killedWorkers && killedProducer)
	killed := func(from int) bool { return from == 1 || from == 2 } // workers[0] and workers[1]
	keys := map[int]bool{}
	for id, k := range acked {
		keys[k] = true
		if len(done[id]) == 0 && slices.ContainsFunc(ranOn[id], killed) {
			// Its completion may have committed with the worker's last
			// batch just before the kill cut the worker off: the queue,
			// empty at the end, says it was not lost.
			continue
		}
		if !assert.Len(t, done[id], 1, "item %d (key %d): completions", id, k) {
			continue
		}
		for _, tok := range ran[id] {
			assert.LessOrEqual(t, tok, done[id][0], "item %d ran with token %d after its completion with %d", id, tok, done[id][0])
		}
	}
	assert.Len(t, keys, total, "every key was acknowledged")
	t.Logf("%d items acknowledged, %d runs", len(acked), countRuns(ran))
}

func countRuns(ran map[int64][]uint64) int {
	n := 0
	for _, r := range ran {
		n += len(r)
	}
	return n
}
