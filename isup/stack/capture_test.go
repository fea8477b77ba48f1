package stack

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
)

// TestAnswersCaptureAsPointCode2 replays point code 1's side of m3ua_isup.cap
// into a stack acting as point code 2 with a host that answers every call, and
// compares what the stack sends, per CIC, with what the real exchange sent.
func TestAnswersCaptureAsPointCode2(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "captures", "m3ua_isup.cap")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("capture absent (%v): ../shared/captures is not beside the repository", err)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	want := map[uint16][]string{} // CIC -> message types point code 2 sent
	got := map[uint16][]string{}
	var c *core
	cfg := Config{OPC: 2, NI: 2, Groups: []Group{{DPC: 1, Variant: isup.ITU, CICs: []CICRange{{First: 1, Last: 255}}}}}
	out := func(lbl mtp.Label, b []byte) {
		m, err := isup.Decode(b, isup.ITU)
		if err != nil {
			t.Fatalf("sent undecodable % X", b)
		}
		got[m.CircuitID()] = append(got[m.CircuitID()], m.MessageType().String())
	}
	host := func(e Event) {
		if in, ok := e.(Incoming); ok { // the host answers at once
			c.request(Alert{Call: in.Call})
			c.request(Answer{Call: in.Call})
		}
	}
	calls := 0
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !m.HasLabel || m.SI != 5 {
			continue
		}
		if c == nil {
			c = newCore(cfg, m.Time, out, host)
		}
		c.advance(m.Time)
		switch {
		case m.OPC == 1 && m.DPC == 2:
			if m.Payload[2] == byte(isup.IAM) {
				calls++
			}
			c.receive(mtp.Label{OPC: 1, DPC: 2, SI: 5, NI: m.NI, SLS: m.SLS}, m.Payload)
		case m.OPC == 2:
			cic, typ, _ := isup.Peek(m.Payload, isup.ITU)
			want[cic] = append(want[cic], typ.String())
		}
	}
	if calls != 94 {
		t.Fatalf("%d call attempts in the capture, want 94", calls)
	}
	for cic, w := range want {
		if strings.Join(got[cic], " ") != strings.Join(w, " ") {
			t.Errorf("CIC %d: stack sent %v, the capture shows %v", cic, got[cic], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("stack answered on %d CICs, capture on %d", len(got), len(want))
	}
	if len(c.calls) != 0 || c.pendingTimers() != 0 {
		t.Errorf("after the capture: %d calls, %d timers", len(c.calls), c.pendingTimers())
	}
}
