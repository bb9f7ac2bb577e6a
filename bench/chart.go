package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// peerColors are the bar colours of the peers after ours, in order.
var peerColors = []color.Color{
	color.RGBA{R: 0x41, G: 0x6b, B: 0xa8, A: 0xff},
	color.RGBA{R: 0xe0, G: 0x8a, B: 0x1e, A: 0xff},
	color.RGBA{R: 0x5a, G: 0x9e, B: 0x4b, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x9e, A: 0xff},
}

// WriteSVG draws each scenario's primary metric as peer ÷ ours on a log
// scale: a bar to the right means the peer needs that many times more time
// or memory than ours. A missing bar is a scenario the peer cannot run.
func (r *Report) WriteSVG(w io.Writer) error {
	p := plot.New()
	p.Title.Text = "peer ÷ lease, per scenario (log scale; right of 1× = lease is faster or smaller)"
	p.X.Label.Text = "times the time (or heap) lease needs"
	labels := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		// Nominal Y runs bottom-up; list the scenarios top-down.
		labels[len(r.Rows)-1-i] = row.Info.Label
	}
	others := len(r.Peers) - 1
	width := vg.Points(7)
	lo, hi := 0.0, 0.0
	for pi := 1; pi < len(r.Peers); pi++ {
		vals := make(plotter.Values, len(r.Rows))
		for i, row := range r.Rows {
			if v, ok := row.Ratio(pi, row.Info.Primary); ok && v > 0 {
				vals[len(r.Rows)-1-i] = math.Log10(v)
			}
		}
		for _, v := range vals {
			lo, hi = min(lo, v), max(hi, v)
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return err
		}
		bars.Horizontal = true
		bars.LineStyle.Width = 0
		bars.Color = peerColors[(pi-1)%len(peerColors)]
		bars.Offset = width * vg.Length(float64(pi-1)-float64(others-1)/2)
		p.Add(bars)
		p.Legend.Add(r.Peers[pi].Name, bars)
	}
	p.Add(plotter.NewGrid())
	p.NominalY(labels...)
	p.X.Min, p.X.Max = math.Floor(lo), math.Ceil(hi)
	p.X.Tick.Marker = ratioTicks{}
	p.Legend.Top = true
	wt, err := p.WriterTo(9*vg.Inch, vg.Length(1.2+0.45*float64(len(r.Rows)))*vg.Inch, "svg")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// ratioTicks labels a log10 axis with powers of ten as ratios.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		ts = append(ts, plot.Tick{Value: e, Label: fmt.Sprintf("%g×", math.Pow(10, e))})
	}
	return ts
}
