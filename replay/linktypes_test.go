package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/isupgw/isupgw/isup"
)

func (lc linkCase) variant() isup.Variant {
	if lc.ansi {
		return isup.ANSI
	}
	return isup.ITU
}

func (lc linkCase) traffic(t testing.TB) []Msg {
	if lc.ansi {
		return encode(t, ansiTraffic(), isup.ANSI)
	}
	return encode(t, richTraffic(), isup.ITU)
}

func (lc linkCase) tsharkPrefs() []string {
	switch {
	case lc.draft:
		return []string{"m3ua.version:Internet Draft version 6"}
	case lc.ansi:
		return []string{"mtp3.standard:ANSI"}
	}
	return nil
}

func flowOf(t testing.TB, msgs []Msg, v isup.Variant) string {
	c := &Capture{Msgs: msgs}
	_, calls := Analyze(c, v)
	var b bytes.Buffer
	if err := WriteFlow(&b, msgs, calls); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLinkTypesDecodeTheSame writes the same ISUP traffic (every call and
// supervision procedure the checker knows) with the project's encoder and
// capture.Writer in every link type and framing the Reader handles, reads
// each back through Load's path, and requires the same messages (frame,
// label, CIC, type, octets), the same flow, no anomaly, and tshark's count
// of each ISUP message type.
func TestLinkTypesDecodeTheSame(t *testing.T) {
	for _, lc := range linkCases {
		t.Run(lc.name, func(t *testing.T) {
			v := lc.variant()
			ref := lc.traffic(t)
			data := writeCapture(t, lc, ref)
			c, err := Read(bytes.NewReader(data), lc.name+".pcap", Options{Variant: v})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.FrameErrors) != 0 || len(c.Msgs) != len(ref) {
				t.Fatalf("%d messages (want %d), frame errors %v", len(c.Msgs), len(ref), c.FrameErrors)
			}
			for i := range ref {
				g, w := c.Msgs[i], ref[i]
				if g.Frame != w.Frame || !g.Time.Equal(w.Time) || g.OPC != w.OPC || g.DPC != w.DPC || g.SLS != w.SLS || g.NI != w.NI ||
					g.CIC != w.CIC || g.Type != w.Type || !bytes.Equal(g.Raw, w.Raw) || g.Msg == nil {
					t.Errorf("message %d: got %s sls=%d ni=%d % x, want %s sls=%d ni=%d % x", i, &g, g.SLS, g.NI, g.Raw, &w, w.SLS, w.NI, w.Raw)
				}
			}
			if got, want := flowOf(t, c.Msgs, v), flowOf(t, ref, v); got != want {
				t.Errorf("flow differs:\n%s\nwant:\n%s", got, want)
			}
			a, _ := Analyze(c, v)
			if r := a.Report(); len(r.Violations) != 0 {
				t.Errorf("violations: %v", r.Violations)
			}

			path := filepath.Join(t.TempDir(), lc.name+".pcap")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := map[int]int{}
			for _, m := range ref {
				want[int(m.Type)]++
			}
			got := tsharkTypes(t, path, lc.tsharkPrefs()...)
			if len(got) != len(want) {
				t.Errorf("tshark types %v, want %v", got, want)
			}
			for typ, n := range want {
				if got[typ] != n {
					t.Errorf("tshark: %d of type %s, want %d", got[typ], isup.MessageType(typ), n)
				}
			}
		})
	}
}
