package pgcompare

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// header is the line above the table: what ran, where, how often.
func (r *Report) header() string {
	c := r.Config
	var other []string // the settings measuring another number of pickups
	for _, row := range r.Rows {
		if row.Pickup != 0 && row.Pickup != c.Pickup && !slices.Contains(other, row.Setting) {
			other = append(other, row.Setting)
			other = append(other, strconv.Itoa(row.Pickup))
		}
	}
	pickups := strconv.Itoa(c.Pickup)
	for i := 0; i < len(other); i += 2 {
		pickups += fmt.Sprintf(" (%s: %s)", other[i], other[i+1])
	}
	return fmt.Sprintf("PostgreSQL %s, fsync=%s, synchronous_commit=%s, shared_buffers=%s; "+
		"burn-down of %d no-op items enqueued in batches of %d; pickup of %s items one at a time (after %d unmeasured) into an idle queue and right after the burn-down; "+
		"%d items enqueued in one caller transaction, median of %d; medians of %d runs; load average %s at the start, %s at the end.",
		r.Server["server_version"], r.Server["fsync"], r.Server["synchronous_commit"], r.Server["shared_buffers"],
		c.N, c.Batch, pickups, c.PickupWarmup, c.TxItems, c.TxRounds, c.Runs, cmp.Or(r.Load[0], "unknown"), cmp.Or(r.Load[1], "unknown"))
}

// ms formats d in milliseconds.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

// WriteMarkdown writes the settings line and a table of the medians, one
// row a setting.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n\n", r.header())
	fmt.Fprintf(bw, "| setting | history rows | pool | enqueue items/s | tx enqueue of %d ms | burn-down jobs/s | pickup p50 ms | pickup p99 ms | after burn-down p50 ms | after burn-down p99 ms |\n", r.Config.TxItems)
	fmt.Fprintln(bw, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, row := range r.Rows {
		m := row.Median
		fmt.Fprintf(bw, "| %s | %d | %d | %.0f | %s | %.0f | %s | %s | %s | %s |\n", row.Setting, row.History, row.PoolSize, m.EnqueuePerSec, ms(m.TxEnqueue),
			m.BurnDownPerSec, ms(m.PickupP50), ms(m.PickupP99), ms(m.PickupAfterP50), ms(m.PickupAfterP99))
	}
	return bw.Flush()
}

// WriteHistoryMarkdown writes the settings line and, for each setting, a
// table of how each figure's median changes with the history the tables
// held (Config.History): one column a size, and beside the largest its
// ratio to the smallest.
func (r *Report) WriteHistoryMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s History: %v finished rows bulk-loaded into each database before each run, then VACUUM ANALYZE; Queues and Counts are medians of %d calls on the idle database.\n",
		r.header(), r.Config.History, statsCalls)
	figures := []struct {
		name  string
		value func(Run) float64
		text  func(Run) string
	}{
		{"history load + VACUUM ANALYZE s", func(m Run) float64 { return m.Fill.Seconds() }, func(m Run) string { return fmt.Sprintf("%.2f", m.Fill.Seconds()) }},
		{"table + indexes MB", func(m Run) float64 { return float64(m.TableBytes) }, func(m Run) string { return fmt.Sprintf("%.1f", float64(m.TableBytes)/(1<<20)) }},
		{"enqueue items/s", func(m Run) float64 { return m.EnqueuePerSec }, func(m Run) string { return fmt.Sprintf("%.0f", m.EnqueuePerSec) }},
		{"burn-down jobs/s", func(m Run) float64 { return m.BurnDownPerSec }, func(m Run) string { return fmt.Sprintf("%.0f", m.BurnDownPerSec) }},
		{"pickup p50 ms", func(m Run) float64 { return float64(m.PickupP50) }, func(m Run) string { return ms(m.PickupP50) }},
		{"pickup p99 ms", func(m Run) float64 { return float64(m.PickupP99) }, func(m Run) string { return ms(m.PickupP99) }},
		{"after burn-down p50 ms", func(m Run) float64 { return float64(m.PickupAfterP50) }, func(m Run) string { return ms(m.PickupAfterP50) }},
		{"after burn-down p99 ms", func(m Run) float64 { return float64(m.PickupAfterP99) }, func(m Run) string { return ms(m.PickupAfterP99) }},
		{fmt.Sprintf("tx enqueue of %d ms", r.Config.TxItems), func(m Run) float64 { return float64(m.TxEnqueue) }, func(m Run) string { return ms(m.TxEnqueue) }},
		{"Queues ms", func(m Run) float64 { return float64(m.Queues) }, func(m Run) string { return fmt.Sprintf("%.2f", float64(m.Queues)/float64(time.Millisecond)) }},
		{"Counts ms", func(m Run) float64 { return float64(m.Counts) }, func(m Run) string { return fmt.Sprintf("%.2f", float64(m.Counts)/float64(time.Millisecond)) }},
	}
	sizes := len(r.Config.History)
	for i := 0; i+sizes <= len(r.Rows); i += sizes {
		rows := r.Rows[i : i+sizes]
		fmt.Fprintf(bw, "\n%s (pool %d):\n\n| figure |", rows[0].Setting, rows[0].PoolSize)
		for _, row := range rows {
			fmt.Fprintf(bw, " %d rows |", row.History)
		}
		fmt.Fprintf(bw, " largest / smallest |\n|---|%s--:|\n", strings.Repeat("--:|", sizes))
		for _, f := range figures {
			if f.value(rows[0].Median) == 0 && f.value(rows[sizes-1].Median) == 0 {
				continue // a figure this system does not have
			}
			fmt.Fprintf(bw, "| %s |", f.name)
			for _, row := range rows {
				fmt.Fprintf(bw, " %s |", f.text(row.Median))
			}
			ratio := "–"
			if first := f.value(rows[0].Median); first > 0 {
				ratio = fmt.Sprintf("%.2f×", f.value(rows[sizes-1].Median)/first)
			}
			fmt.Fprintf(bw, " %s |\n", ratio)
		}
	}
	return bw.Flush()
}

// barColors are the bar colours of the settings, in order, as in the
// bench module's charts.
var barColors = []string{"#416ba8", "#e08a1e", "#5a9e4b", "#8c569e", "#c0504d", "#4bacc6"}

// WriteSVG draws the medians as four panels of horizontal bars, one panel
// a metric and one bar a setting, each labelled with its value.
func (r *Report) WriteSVG(w io.Writer) error {
	type panel struct {
		title string
		value func(Run) float64
		label func(Run) string
	}
	panels := []panel{
		{"enqueue, items/s (longer is better)", func(m Run) float64 { return m.EnqueuePerSec }, func(m Run) string { return fmt.Sprintf("%.0f", m.EnqueuePerSec) }},
		{"burn-down, jobs/s (longer is better)", func(m Run) float64 { return m.BurnDownPerSec }, func(m Run) string { return fmt.Sprintf("%.0f", m.BurnDownPerSec) }},
		{"pickup latency p50, ms (shorter is better)", func(m Run) float64 { return float64(m.PickupP50) }, func(m Run) string { return ms(m.PickupP50) }},
		{"pickup latency p99, ms (shorter is better)", func(m Run) float64 { return float64(m.PickupP99) }, func(m Run) string { return ms(m.PickupP99) }},
	}
	const (
		width, labelW, barMax = 900, 260, 520
		barH, gap, titleH     = 18, 6, 26
	)
	panelH := titleH + len(r.Rows)*(barH+gap) + 10
	height := 60 + len(panels)*panelH
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(bw, `<text x="10" y="20" font-size="14" font-weight="bold">Work queues on PostgreSQL: medians of %d runs</text>`+"\n", r.Config.Runs)
	fmt.Fprintf(bw, `<text x="10" y="40" font-size="11" fill="#555">PostgreSQL %s, fsync=%s, synchronous_commit=%s; N=%d, pickup %d</text>`+"\n",
		html.EscapeString(r.Server["server_version"]), html.EscapeString(r.Server["fsync"]), html.EscapeString(r.Server["synchronous_commit"]),
		r.Config.N, r.Config.Pickup)
	for pi, p := range panels {
		top := 60 + pi*panelH
		fmt.Fprintf(bw, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", top+16, html.EscapeString(p.title))
		peak := 0.0
		for _, row := range r.Rows {
			peak = max(peak, p.value(row.Median))
		}
		for i, row := range r.Rows {
			y := top + titleH + i*(barH+gap)
			v := p.value(row.Median)
			bar := 0
			if peak > 0 {
				bar = int(v / peak * barMax)
			}
			fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-8, y+barH-5, html.EscapeString(row.Setting))
			fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", labelW, y, bar, barH, barColors[i%len(barColors)])
			fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", labelW+bar+6, y+barH-5, html.EscapeString(p.label(row.Median)))
		}
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}
