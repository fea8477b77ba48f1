package bench

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// series is how each mode is drawn.
var series = map[Mode]struct {
	name   string
	color  color.RGBA
	dashed bool
	glyph  draw.GlyphDrawer
}{
	ModeShipped:     {"shipped defaults (adaptive admission)", color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, false, draw.PyramidGlyph{}},
	ModeCooperative: {"shipped defaults, cooperative host", color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, false, draw.CrossGlyph{}},
	ModeOn:          {"control on (level 1 refuses all)", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, false, draw.CircleGlyph{}},
	ModeThrottle:    {"control on (level 1 throttles)", color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, false, draw.TriangleGlyph{}},
	ModeOff:         {"control off", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, true, draw.BoxGlyph{}},
}

// Plot draws goodput and admitted p99 setup latency against offered load,
// for each mode, side by side, into a PNG.
func Plot(path string, r *Results) error {
	good := plot.New()
	good.Title.Text = "Goodput"
	good.X.Label.Text = "offered load (multiple of capacity)"
	good.Y.Label.Text = "completed calls/s"
	lat := plot.New()
	lat.Title.Text = "Admitted setup latency p99"
	lat.X.Label.Text = "offered load (multiple of capacity)"
	lat.Y.Label.Text = "ms (log scale)"
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	for _, mode := range Modes {
		var gp, lp plotter.XYs
		for _, row := range r.Rows {
			if row.Mode != mode {
				continue
			}
			gp = append(gp, plotter.XY{X: row.Multiplier, Y: row.Goodput})
			lp = append(lp, plotter.XY{X: row.Multiplier, Y: max(row.P99MS, 0.1)})
		}
		if len(gp) == 0 {
			continue
		}
		look := series[mode]
		for _, x := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{good, gp}, {lat, lp}} {
			l, pts, err := plotter.NewLinePoints(x.xys)
			if err != nil {
				return err
			}
			l.Color, pts.Color = look.color, look.color
			l.Width = vg.Points(2)
			if look.dashed {
				l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			}
			pts.Shape = look.glyph
			x.p.Add(l, pts)
			x.p.Legend.Add(look.name, l, pts)
		}
	}
	// Reference lines: the capacity and 90 % of it; 100 ms.
	for _, ref := range []struct {
		p     *plot.Plot
		y     float64
		label string
	}{{good, r.Capacity, fmt.Sprintf("capacity %.0f/s", r.Capacity)}, {good, 0.9 * r.Capacity, "90 % of capacity"}, {lat, 100, "100 ms"}} {
		xs := plotter.XYs{{X: 0.8, Y: ref.y}, {X: 5.2, Y: ref.y}}
		l, err := plotter.NewLine(xs)
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 0x80}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		ref.p.Add(l)
		ref.p.Legend.Add(ref.label, l)
	}
	good.Y.Min = 0
	good.Legend.Top = false
	good.Legend.Left = true
	lat.Legend.Top = true
	lat.Legend.Left = true
	for _, p := range []*plot.Plot{good, lat} {
		p.Add(plotter.NewGrid())
		p.X.Tick.Marker = plot.ConstantTicks(multTicks(r))
	}

	const w, h = 12 * vg.Inch, 5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{good, lat}}, t, dc)
	good.Draw(canvases[0][0])
	lat.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func multTicks(r *Results) []plot.Tick {
	seen := map[float64]bool{}
	var ticks []plot.Tick
	for _, row := range r.Rows {
		if !seen[row.Multiplier] {
			seen[row.Multiplier] = true
			ticks = append(ticks, plot.Tick{Value: row.Multiplier, Label: fmt.Sprintf("%gx\n%.0f/s", row.Multiplier, row.Asked)})
		}
	}
	return ticks
}
