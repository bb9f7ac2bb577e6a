package replication

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText writes the results as an aligned table.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tscenario\tmetric\tmedian\truns\treference")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", res.Target, res.Scenario, res.Metric, format(res.Median), formatRuns(res.Runs), res.Reference)
	}
	return tw.Flush()
}

// WriteMarkdown writes the report as a Markdown section: the machine, the
// settings and a table of the results.
func (r *Report) WriteMarkdown(w io.Writer, command string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Replicated leases beside a 3-member etcd cluster\n\n")
	fmt.Fprintf(&b, "`%s`, %s, %s, %s, %d cores; load average %s at the start, %s at the end.\n\n",
		command, r.Date.Format("2006-01-02"), r.GoVersion, r.CPU, r.Cores, r.LoadStart, r.LoadEnd)
	fmt.Fprintf(&b, "Settings: %s.\n\n", r.Settings)
	b.WriteString("| target | scenario | metric | median | runs | reference |\n")
	b.WriteString("|---|---|---|--:|---|---|\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", res.Target, res.Scenario, res.Metric, format(res.Median), formatRuns(res.Runs), res.Reference)
	}
	r.writeSideBySide(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// counterparts names, for a scenario of ours whose name differs from
// etcd's, the figure of etcd it is set beside: a replicated Renew beside
// KeepAliveOnce, etcd's single renewal call.
var counterparts = map[string]string{"renew (Renew)": "renew (KeepAliveOnce)"}

// writeSideBySide writes, for every scenario and metric both targets
// measured, etcd's median beside ours and their ratio, in the order of the
// results.
func (r *Report) writeSideBySide(b *strings.Builder) {
	type key struct{ scenario, metric string }
	medians := map[key]map[string]float64{}
	var order []key
	for _, res := range r.Results {
		k := key{res.Scenario, res.Metric}
		if c, ok := counterparts[res.Scenario]; ok && res.Target == "ours" {
			k.scenario = c
		}
		if medians[k] == nil {
			medians[k] = map[string]float64{}
			order = append(order, k)
		}
		medians[k][res.Target] = res.Median
	}
	var rows []string
	for _, k := range order {
		etcd, okE := medians[k]["etcd"]
		ours, okO := medians[k]["ours"]
		if !okE || !okO {
			continue
		}
		ratio := "n/a"
		if etcd != 0 {
			ratio = strconv.FormatFloat(ours/etcd, 'f', 2, 64) + "x"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", k.scenario, k.metric, format(etcd), format(ours), ratio))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nSide by side (medians; ours / etcd):\n\n")
	b.WriteString("| scenario | metric | etcd | ours | ours / etcd |\n")
	b.WriteString("|---|---|--:|--:|--:|\n")
	for _, row := range rows {
		b.WriteString(row)
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// format prints v with thousands separators, and one decimal below 100.
func format(v float64) string {
	if math.Abs(v) < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func formatRuns(runs []float64) string {
	parts := make([]string, len(runs))
	for i, v := range runs {
		parts[i] = format(v)
	}
	return strings.Join(parts, " / ")
}
