package replay

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp/capture"
)

// fuzzMsgs turns arbitrary bytes into labelled ISUP messages: each record
// is a selector octet (sender among three point codes, receiver, variant
// bit for the whole run in the first one) then a length octet and the
// message. Undecodable messages are kept, as Load keeps them.
func fuzzMsgs(in []byte) ([]Msg, isup.Variant) {
	v := isup.ITU
	if len(in) > 0 && in[0]&0x80 != 0 {
		v = isup.ANSI
	}
	var msgs []Msg
	for len(in) >= 2 && len(msgs) < 2000 {
		sel, n := in[0], int(in[1])
		in = in[2:]
		if n > len(in) {
			n = len(in)
		}
		opc := uint32(sel&3) + 1
		dpc := uint32(sel>>2&3) + 1
		m := capture.Message{Frame: len(msgs) + 1, Time: t0.Add(time.Duration(len(msgs)) * time.Millisecond), HasLabel: true,
			OPC: opc, DPC: dpc, SI: 5, SLS: sel >> 4, Payload: append([]byte(nil), in[:n]...)}
		msgs = append(msgs, decodeMsg(len(msgs), &m, v))
		in = in[n:]
	}
	return msgs, v
}

func fuzzCheck(t *testing.T, msgs []Msg, v isup.Variant) {
	c := &Capture{File: "fuzz", Msgs: msgs}
	a, calls := Analyze(c, v)
	r := a.Report()
	if r.Messages != len(msgs) || len(calls) != len(msgs) {
		t.Fatalf("%d messages analysed of %d", r.Messages, len(msgs))
	}
	if r.Answered+r.Unanswered+r.InProgress != len(r.Calls) {
		t.Fatalf("calls %d != answered %d + unanswered %d + in progress %d", len(r.Calls), r.Answered, r.Unanswered, r.InProgress)
	}
	frames := map[int]bool{}
	for i := range msgs {
		frames[msgs[i].Frame] = true
	}
	for i, cl := range r.Calls {
		if cl.ID != i+1 || !frames[cl.Frame] || (cl.End != EndNone && (!frames[cl.EndFrame] || cl.EndFrame < cl.Frame)) {
			t.Fatalf("call %+v", *cl)
		}
	}
	for i, id := range calls {
		if id < 0 || id > len(r.Calls) {
			t.Fatalf("message %d in call %d of %d", i, id, len(r.Calls))
		}
	}
	prev := 0
	for _, vi := range r.Violations {
		if !frames[vi.Frame] || vi.Frame < prev || vi.Kind == 0 || vi.Text == "" {
			t.Fatalf("violation %+v", vi)
		}
		prev = vi.Frame
	}
	for _, w := range []func(io.Writer) error{
		func(w io.Writer) error { return WriteFlow(w, msgs, calls) },
		func(w io.Writer) error { return WriteSummary(w, c, r) },
		func(w io.Writer) error { return WriteCheck(w, c, r) },
	} {
		if err := w(io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	// The live replayer's script from the same messages (no network).
	if runs, _, err := script(msgs, 1, 0, 1); err == nil {
		for _, run := range runs {
			for i, s := range run.sends {
				if s.needRecv > len(run.expected) || s.at < 0 || (i > 0 && s.needRecv < run.sends[i-1].needRecv) {
					t.Fatalf("script step %+v", s)
				}
			}
		}
	}
}

// FuzzAnalyzer: any sequence of (possibly malformed) ISUP messages between
// three exchanges goes through the checker, the reports and the live
// script without panic, with consistent accounting.
func FuzzAnalyzer(f *testing.F) {
	for _, steps := range [][]step{richTraffic(), violationTraffic(), ansiTraffic()} {
		var seed []byte
		for _, m := range encode(f, steps, isup.ITU) {
			seed = append(seed, byte(m.OPC-1)|byte(m.DPC-1)<<2, byte(len(m.Raw)))
			seed = append(seed, m.Raw...)
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		msgs, v := fuzzMsgs(in)
		fuzzCheck(t, msgs, v)
	})
}

// FuzzLoadCapture: whole capture files (seeded with the committed ones)
// through Read and then the checker.
func FuzzLoadCapture(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdataDir, "*.pcap"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, v := range []isup.Variant{isup.ITU, isup.ANSI} {
			c, err := Read(bytes.NewReader(in), "fuzz.pcap", Options{Variant: v})
			if err != nil && c == nil {
				continue
			}
			if len(c.Msgs) > 5000 {
				c.Msgs = c.Msgs[:5000]
			}
			fuzzCheck(t, c.Msgs, v)
		}
	})
}
