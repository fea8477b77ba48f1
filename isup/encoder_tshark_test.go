package isup

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/capture"
)

// allTypes is every message type of the digest's section 1 table.
var allTypes = []MessageType{IAM, SAM, INR, INF, COT, ACM, CON, FOT, ANM, REL, SUS, RES, RLC, CCR, RSC,
	BLO, UBL, BLA, UBA, GRS, CGB, CGU, CGBA, CGUA, CMR, CMC, CMRJ, FAR, FAA, FRJ, FAD, FAI, LPA,
	CSVR, CSVS, DRS, PAM, GRA, CQM, CQR, CPG, USR, UCIC, CFN, OLM, CRG, NRM, FAC, UPT, UPA, IDR,
	IRS, SGM, LOP, APM, PRI, SDN, CRA, CRM, CVR, CVT, EXM}

// sampleMessages returns at least one message of every type the codec encodes in
// variant v: the table cases, plus a minimal well-formed one for each other type.
func sampleMessages(t testing.TB, v Variant) []Message {
	var out []Message
	seen := map[MessageType]bool{}
	for _, tc := range messageCases(t) {
		if tc.variant == v {
			out = append(out, tc.msg)
			seen[tc.msg.MessageType()] = true
		}
	}
	for i, code := range allTypes {
		if seen[code] {
			continue
		}
		m := newMessage(code, v)
		m.SetCircuitID(uint16(100 + i))
		switch x := m.(type) {
		case *GroupSupervision:
			x.RangeAndStatus = RangeAndStatus{Range: 3, Status: []byte{0x05}}
		case *GroupReset:
			x.RangeAndStatus = RangeAndStatus{Range: 3}
			if code == GRA {
				x.RangeAndStatus.Status = []byte{0x00}
			}
		case *CircuitQuery:
			x.RangeAndStatus = RangeAndStatus{Range: 1}
		case *CircuitQueryResponse:
			x.RangeAndStatus = RangeAndStatus{Range: 1}
			x.States = CircuitStateIndicator{NewCircuitState(0, CallStateIdle, 0), NewCircuitState(BlockingLocal, CallStateOutgoingBusy, 0)}
		case *Generic:
			f := genericFormats[code]
			if f.opaque {
				x.Body = []byte{}
				if code == PAM {
					x.Body = []byte{byte(ANM), 0x00} // a pass-along carries a message
				}
				break
			}
			x.Fixed = make([]byte, f.fixed)
			for range f.variable {
				x.Variable = append(x.Variable, []byte{0x80, 0x90})
			}
			if f.optional {
				x.Optional = Optional{}
			}
		case *Unknown:
			x.Body = []byte{}
		}
		out = append(out, m)
	}
	return out
}

// TestEncoderAgainstTshark encodes every message type in both variants, wraps each
// in M3UA DATA in SCTP in IPv4 in a pcap, and checks tshark's reading of it field by
// field against the message we encoded.
func TestEncoderAgainstTshark(t *testing.T) {
	for _, v := range []Variant{ITU, ANSI} {
		t.Run(v.String(), func(t *testing.T) {
			msgs := sampleMessages(t, v)
			types := map[MessageType]bool{}
			for _, m := range msgs {
				types[m.MessageType()] = true
			}
			for _, code := range allTypes {
				if !types[code] {
					t.Errorf("no sample of %s", code)
				}
			}

			dir := t.TempDir()
			if keep := os.Getenv("ISUPGW_KEEP_PCAP"); keep != "" {
				dir = keep // to open the capture in Wireshark after the run
			}
			path := filepath.Join(dir, "encoded-"+v.String()+".pcap")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := capture.NewWriter(f)
			if err != nil {
				t.Fatal(err)
			}
			opc, dpc := uint32(1), uint32(2)
			if v == ANSI {
				opc, dpc = 0x010203, 0x040506 // 24-bit point codes
			}
			src := netip.MustParseAddrPort("127.0.0.1:2905")
			dst := netip.MustParseAddrPort("127.0.0.2:2905")
			ours := map[int][]Message{}
			ts := time.Unix(1700000000, 0)
			for i, m := range msgs {
				payload, err := Marshal(m, v)
				if err != nil {
					t.Fatalf("%s: %v", describe(m), err)
				}
				data := capture.DataMessage(opc, dpc, 5, 2, 0, uint8(i%16), payload)
				if err := w.WriteM3UA(ts.Add(time.Duration(i)*time.Millisecond), src, dst, 1, data); err != nil {
					t.Fatal(err)
				}
				ours[i+1] = []Message{m}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}

			// Our own reader first: what we wrote comes back the same.
			back := decodeCapture(t, path, v)
			if len(back) != len(msgs) {
				t.Fatalf("read back %d messages, wrote %d", len(back), len(msgs))
			}

			tshark := needTshark(t)
			fields := fieldsFor(v)
			var prefs []string
			if v == ANSI {
				prefs = []string{"mtp3.standard:ANSI"}
			}
			theirs := tsharkFrames(t, tshark, path, prefs, fields)
			compared := compareFrames(t, ours, theirs, fields)
			t.Logf("%d messages of %d types, %d field values equal to tshark's", len(msgs), len(types), compared)
		})
	}
}
