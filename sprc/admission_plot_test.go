package sprc

import (
	"image/color"
	"os"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestAdmissionPlot draws a simulated run for docs/congestion.md: half the
// capacity, 60 s at three times it (the capacity halves for 15 s in the
// middle), then half again (ISUPGW_ADMISSION_PLOT=docs/admission.png).
func TestAdmissionPlot(t *testing.T) {
	path := os.Getenv("ISUPGW_ADMISSION_PLOT")
	if path == "" {
		t.Skip("set ISUPGW_ADMISSION_PLOT to the PNG to write")
	}
	const rate = 1000
	s := newSim(t, rate, 5*time.Millisecond, true)
	capacity := plotter.XYs{}
	phase := func(load, srv float64, d time.Duration) {
		from := len(s.secs)
		s.srv.rate = srv
		s.run(load, d)
		capacity = append(capacity, plotter.XY{X: float64(from), Y: srv}, plotter.XY{X: float64(len(s.secs)), Y: srv})
	}
	phase(rate/2, rate, 10*time.Second)
	phase(3*rate, rate, 25*time.Second)
	phase(3*rate, rate/2, 15*time.Second)
	phase(3*rate, rate, 20*time.Second)
	phase(rate/2, rate, 10*time.Second)

	calls, lim := plot.New(), plot.New()
	calls.Title.Text = "Calls (simulated server, fake clock)"
	calls.X.Label.Text, calls.Y.Label.Text = "s", "calls/s"
	lim.Title.Text = "Limit on calls in set-up, queue wait, level"
	lim.X.Label.Text, lim.Y.Label.Text = "s", "calls / ms / level x 10"
	var offered, admitted, completed, limit, wait, level plotter.XYs
	for i, x := range s.secs {
		f := float64(i)
		offered = append(offered, plotter.XY{X: f, Y: float64(x.offered)})
		admitted = append(admitted, plotter.XY{X: f, Y: float64(x.admitted)})
		completed = append(completed, plotter.XY{X: f, Y: float64(x.completed)})
		limit = append(limit, plotter.XY{X: f, Y: float64(x.limit)})
		wait = append(wait, plotter.XY{X: f, Y: float64(x.meanWait()) / float64(time.Millisecond)})
		level = append(level, plotter.XY{X: f, Y: 10 * float64(x.level)})
	}
	add := func(p *plot.Plot, name string, xys plotter.XYs, c color.RGBA, dashed bool) {
		l, err := plotter.NewLine(xys)
		if err != nil {
			t.Fatal(err)
		}
		l.Color, l.Width = c, vg.Points(1.5)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		p.Legend.Add(name, l)
	}
	blue, green, red, grey, orange := color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
		color.RGBA{0x80, 0x80, 0x80, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}
	add(calls, "offered", offered, red, true)
	add(calls, "admitted", admitted, blue, false)
	add(calls, "completed", completed, green, false)
	add(calls, "server capacity", capacity, grey, true)
	add(lim, "limit (calls in set-up)", limit, blue, false)
	add(lim, "mean queue wait (ms)", wait, orange, false)
	add(lim, "admission level x 10", level, red, true)
	for _, p := range []*plot.Plot{calls, lim} {
		p.Add(plotter.NewGrid())
		p.Y.Min = 0
		p.Legend.Top = true
	}
	const w, h = 12 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	cs := plot.Align([][]*plot.Plot{{calls, lim}}, tiles, dc)
	calls.Draw(cs[0][0])
	lim.Draw(cs[0][1])
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		t.Fatal(err)
	}
}
