package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"
)

// Machine describes where a report was measured.
type Machine struct {
	GoVersion string
	OSArch    string
	CPU       string
	Cores     int
	Date      time.Time
	Versions  map[string]string // module path -> version, for the peers
	Revision  string            // the repository commit measured, "+dirty" if modified
	LoadStart string            // /proc/loadavg's 1, 5 and 15 minute averages
	LoadEnd   string
}

// ThisMachine describes the running machine and the peer versions built in.
func ThisMachine() Machine {
	m := Machine{
		GoVersion: runtime.Version(),
		OSArch:    runtime.GOOS + "/" + runtime.GOARCH,
		CPU:       cpuModel(),
		Cores:     runtime.NumCPU(),
		Date:      time.Now().UTC(),
		Versions:  map[string]string{},
		LoadStart: LoadAverage(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			m.Versions[d.Path] = d.Version
		}
		for _, kv := range bi.Settings {
			switch {
			case kv.Key == "vcs.revision":
				m.Revision = kv.Value + m.Revision
			case kv.Key == "vcs.modified" && kv.Value == "true":
				m.Revision += "+dirty"
			}
		}
	}
	if m.Revision == "" {
		// go run does not stamp the commit; ask git, as the run starts.
		if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
			m.Revision = strings.TrimSpace(string(out))
		}
	}
	return m
}

// LoadAverage returns the 1, 5 and 15 minute load averages, or "unknown".
// Other work on the machine shows up in every number; this says how much.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// ours is the index of our peer in a report: the first.
const ours = 0

// cell formats one median for a table.
func (c Cell) format(metric string) string {
	switch {
	case c.NA != "":
		return "n/a"
	case c.Err != nil:
		return "error"
	case c.Median == nil:
		return "–"
	}
	return formatValue(c.Median[metric])
}

func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return groupDigits(fmt.Sprintf("%.0f", v))
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func groupDigits(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Ratio returns peer's median over ours for metric: how many times more
// time (or memory) the peer needs. ok is false when either is missing or
// ours is zero.
func (r Row) Ratio(peer int, metric string) (ratio float64, ok bool) {
	o, p := r.Cells[ours].Median, r.Cells[peer].Median
	if o == nil || p == nil || r.Cells[peer].NA != "" || r.Cells[peer].Err != nil || o[metric] <= 0 {
		return 0, false
	}
	return p[metric] / o[metric], true
}

func formatRatio(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	if v >= 10 {
		return groupDigits(fmt.Sprintf("%.0f", v)) + "×"
	}
	return fmt.Sprintf("%.2f×", v)
}

// table returns the header and rows of the results table: one row per
// scenario metric, a column per peer, then peer ÷ ours for every other peer.
func (r *Report) table() (header []string, rows [][]string) {
	header = []string{"scenario", "metric"}
	for _, p := range r.Peers {
		header = append(header, p.Name)
	}
	for _, p := range r.Peers[1:] {
		header = append(header, p.Name+" ÷ ours")
	}
	for _, row := range r.Rows {
		for mi, m := range row.Info.Metrics {
			title := ""
			if mi == 0 {
				title = row.Info.Title
			}
			line := []string{title, m.Unit}
			for _, c := range row.Cells {
				line = append(line, c.format(m.Name))
			}
			for pi := 1; pi < len(r.Peers); pi++ {
				line = append(line, formatRatio(row.Ratio(pi, m.Name)))
			}
			rows = append(rows, line)
		}
	}
	return header, rows
}

// WriteText prints the results table for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header, rows := r.table()
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "medians of %s; ratios are peer ÷ ours (above 1: ours is faster or smaller); took %v\n",
		plural(r.Runs, "run"), r.Took.Round(time.Second))
	for _, n := range r.sizeNotes() {
		fmt.Fprintln(w, "note:", n)
	}
	for _, g := range r.Goals() {
		fmt.Fprintf(w, "goal %-6s %s: %s\n", g.Verdict(), g.Goal, g.Detail)
	}
	return nil
}

// sizeNotes says how many leases each sized scenario used, and why a peer
// used fewer.
func (r *Report) sizeNotes() []string {
	var out []string
	for _, row := range r.Rows {
		var parts []string
		for pi, c := range row.Cells {
			if c.N > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", r.Peers[pi].Name, groupDigits(fmt.Sprint(c.N))))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s: leases per peer: %s", row.Info.Label, strings.Join(parts, ", ")))
		}
	}
	for _, row := range r.Rows {
		for pi, c := range row.Cells {
			if c.Err != nil {
				out = append(out, fmt.Sprintf("%s failed for %s: %v", row.Info.Label, r.Peers[pi].Name, c.Err))
			}
		}
	}
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
