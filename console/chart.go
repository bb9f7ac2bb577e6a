package console

import (
	"fmt"
	"html/template"
	"strings"
)

// chart draws points as an SVG: a bar per minute for the items completed,
// and a line for the failure rate on a 0–100% scale. It writes numbers
// only, never a caller's string, so the markup it returns is safe.
func chart(points []Point) template.HTML {
	const w, h, pad = 600, 120, 24
	peak := 1
	for _, p := range points {
		peak = max(peak, p.Completed+p.Failed+p.DeadLettered)
	}
	n := max(len(points), 1)
	slot := float64(w-2*pad) / float64(n)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="throughput and failure rate, last hour">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fff" stroke="#d5dae3"/>`, pad, 4, w-2*pad, h-pad-4)
	base := float64(h - pad)
	scale := (base - 8) / float64(peak)
	var line []string
	for i, p := range points {
		x := float64(pad) + float64(i)*slot
		ok := float64(p.Completed) * scale
		bad := float64(p.Failed+p.DeadLettered) * scale
		if ok > 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4a7bd0"><title>%s: %d completed</title></rect>`,
				x+0.5, base-ok, slot-1, ok, p.At.Format("15:04"), p.Completed)
		}
		if bad > 0 {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#d0644a"><title>%s: %d failed</title></rect>`,
				x+0.5, base-ok-bad, slot-1, bad, p.At.Format("15:04"), p.Failed+p.DeadLettered)
		}
		line = append(line, fmt.Sprintf("%.1f,%.1f", x+slot/2, base-p.FailureRate()*(base-8)))
	}
	if len(line) > 1 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#b3261e" stroke-width="1.5"/>`, strings.Join(line, " "))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#5b6475">-60 min</text>`, pad, h-8)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#5b6475" text-anchor="end">now</text>`, w-pad, h-8)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#5b6475" text-anchor="middle">peak %d/min · bars: completed (blue), failed (red) · line: failure rate</text>`, w/2, h-8, peak)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // numbers and constants only
}
