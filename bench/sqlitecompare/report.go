package sqlitecompare

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ms formats d in milliseconds.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

// thousands formats n with commas.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// header is the paragraph above the table: what ran, where, how often.
func (r *Report) header() string {
	c := r.Config
	history := ""
	if c.History > 0 || c.Retention {
		history = fmt.Sprintf("every file first holds %d finished items where the queue keeps them (ours with claim.StandardRetention), loaded then ANALYZEd; ", c.History)
	}
	return fmt.Sprintf("synchronous=%s, WAL, on %s/%s with %d CPUs; %smedians of %d runs, queues interleaved in each; every burn-down checked each item ran exactly once; "+
		"commit floor %.0f one-row transactions/s; load average %s at the start, %s at the end.",
		c.Sync, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), history, c.Runs, r.FloorMedian,
		cmp.Or(r.Load[0], "unknown"), cmp.Or(r.Load[1], "unknown"))
}

// row is one line of the table: a metric of every queue.
type row struct {
	name  string
	value func(Run) float64
	text  func(Run) string
	// higher says whether a higher value is better; the ratio column
	// compares ours with the best peer.
	higher bool
}

func (r *Report) rows() []row {
	c := r.Config
	rate := func(f func(Run) float64) func(Run) string {
		return func(m Run) string { return fmt.Sprintf("%.0f", f(m)) }
	}
	var rows []row
	for i, w := range c.Workers {
		f := func(m Run) float64 { return m.BurnDown[i] }
		rows = append(rows, row{fmt.Sprintf("burn-down, %d worker(s), items/s", w), f, rate(f), true})
	}
	batch := func(m Run) float64 { return m.EnqueueBatch }
	conc := func(m Run) float64 { return m.EnqueueConcurrent }
	serial := func(m Run) float64 { return m.EnqueueSerial }
	rows = append(rows,
		row{fmt.Sprintf("enqueue %s in batches of %s (1 goroutine), items/s", thousands(c.Enqueue), thousands(c.Batch)), batch, rate(batch), true},
		row{fmt.Sprintf("enqueue %s one per call, %d goroutines, items/s", thousands(c.EnqueueOne), c.Goroutines), conc, rate(conc), true},
		row{fmt.Sprintf("enqueue %s one per call, 1 goroutine, items/s", thousands(max(c.EnqueueOne/10, 1))), serial, rate(serial), true},
	)
	lat := func(f func(Run) time.Duration) (func(Run) float64, func(Run) string) {
		return func(m Run) float64 { return float64(f(m)) }, func(m Run) string { return ms(f(m)) }
	}
	for _, l := range []struct {
		name string
		f    func(Run) time.Duration
	}{
		{"pickup p50 in the process, ms", func(m Run) time.Duration { return m.PickupP50 }},
		{"pickup p99 in the process, ms", func(m Run) time.Duration { return m.PickupP99 }},
		{"pickup p50 from another process, ms", func(m Run) time.Duration { return m.CrossP50 }},
		{"pickup p99 from another process, ms", func(m Run) time.Duration { return m.CrossP99 }},
	} {
		v, t := lat(l.f)
		rows = append(rows, row{l.name, v, t, false})
	}
	return rows
}

// ratio compares ours (the column named OursName) with the best of the
// others on rw: ours over the best for a higher-is-better metric, the best
// over ours otherwise, so that above 1 means ours is better.
func (r *Report) ratio(rw row) string {
	ours, best, found := 0.0, 0.0, false
	for _, col := range r.Columns {
		v := rw.value(col.Median)
		if col.Queue == OursName {
			ours = v
			continue
		}
		if !found || (rw.higher && v > best) || (!rw.higher && v < best) {
			best, found = v, true
		}
	}
	if !found || ours == 0 || best == 0 {
		return ""
	}
	if rw.higher {
		return fmt.Sprintf("%.1f×", ours/best)
	}
	return fmt.Sprintf("%.1f×", best/ours)
}

// WriteMarkdown writes the settings paragraph, a table of the medians (a
// row a metric, a column a queue, and ours against the best peer), and
// the items each of our commits carried.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n\n", r.header())
	names := make([]string, len(r.Columns))
	for i, col := range r.Columns {
		names[i] = col.Queue
	}
	fmt.Fprintf(bw, "| metric | %s | ours vs best peer |\n", strings.Join(names, " | "))
	fmt.Fprintf(bw, "|---|%s--:|\n", strings.Repeat("--:|", len(names)))
	for _, rw := range r.rows() {
		fmt.Fprintf(bw, "| %s |", rw.name)
		for _, col := range r.Columns {
			fmt.Fprintf(bw, " %s |", rw.text(col.Median))
		}
		fmt.Fprintf(bw, " %s |\n", r.ratio(rw))
	}
	for _, col := range r.Columns {
		if col.Queue != OursName {
			continue
		}
		m := col.Median
		var parts []string
		for i, w := range r.Config.Workers {
			parts = append(parts, fmt.Sprintf("%.1f at %d worker(s)", m.BurnDownPerCommit[i], w))
		}
		fmt.Fprintf(bw, "\nItems per write transaction of %s: burn-down %s; enqueue one per call from %d goroutines %.1f.\n",
			OursName, strings.Join(parts, ", "), r.Config.Goroutines, m.ConcurrentPerCommit)
	}
	return bw.Flush()
}

// WriteMemory writes the samples of a MemorySoak as a markdown table.
func WriteMemory(w io.Writer, samples []MemorySample) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "| items passed | seconds | heap in use, MiB | live heap after GC, MiB |")
	fmt.Fprintln(bw, "|--:|--:|--:|--:|")
	for _, s := range samples {
		fmt.Fprintf(bw, "| %s | %.1f | %.1f | %.1f |\n", thousands(s.Items), s.Elapsed.Seconds(),
			float64(s.HeapInuse)/(1<<20), float64(s.LiveHeap)/(1<<20))
	}
	return bw.Flush()
}
