package m3ua

import (
	"bytes"
	"testing"

	"github.com/isupgw/isupgw/mtp"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// TestDataFastPathMatchesReference: the hand-written DATA encoder produces
// exactly what go-m3ua's messages.NewData does, for payload lengths that
// need 0..3 pad octets, with and without NA and RC, and decodes back.
func TestDataFastPathMatchesReference(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 100, 271} {
		for _, opt := range []struct{ rc, na bool }{{false, false}, {true, false}, {true, true}, {false, true}} {
			payload := bytes.Repeat([]byte{0xC5}, n)
			m := &mtp.Message{Label: mtp.Label{OPC: 0x3fff, DPC: 0x123456, SI: 5, NI: 2, MP: 1, SLS: 13}, Payload: payload}
			var rcP, naP *params.Param
			if opt.rc {
				rcP = params.NewRoutingContext(77)
			}
			if opt.na {
				naP = params.NewNetworkAppearance(9)
			}
			want := marshal(messages.NewData(naP, rcP, params.NewProtocolData(0x3fff, 0x123456, 5, 2, 1, 13, payload), nil))
			got := appendData(nil, m, 77, opt.rc, 9, opt.na)
			if !bytes.Equal(got, want) {
				t.Fatalf("n=%d %+v:\n got %x\nwant %x", n, opt, got, want)
			}
			if len(got) != dataLen(n, opt.rc, opt.na) {
				t.Fatalf("dataLen %d, encoded %d", dataLen(n, opt.rc, opt.na), len(got))
			}
			var d dataFields
			if err := decodeData(got, &d); err != nil {
				t.Fatal(err)
			}
			if d.Label != m.Label || !bytes.Equal(d.Payload, payload) || d.HasRC != opt.rc || d.HasNA != opt.na ||
				(opt.rc && d.RC != 77) || (opt.na && d.NA != 9) {
				t.Fatalf("decoded %+v", d)
			}
		}
	}
}

// TestDataDecodeErrors: the decoder's failures map to the RFC 4666 codes.
func TestDataDecodeErrors(t *testing.T) {
	ok := appendData(nil, &mtp.Message{Label: mtp.Label{SLS: 1}, Payload: []byte{1, 2, 3, 4}}, 1, true, 0, false)
	unexpected := append([]byte(nil), ok...)
	unexpected[8], unexpected[9] = 0x00, 0x11 // RC tag -> ASP Identifier
	noPD := ok[:16]
	cases := map[string]struct {
		b    []byte
		want ErrorCode
	}{
		"unexpected parameter": {unexpected, ErrUnexpectedParam},
		"no protocol data":     {noPD, ErrMissingParam},
		"param overruns":       {append(ok[:16:16], 0x02, 0x10, 0x00, 0x40), ErrParamField},
	}
	for name, c := range cases {
		var d dataFields
		if err := decodeData(c.b, &d); codeFor(err) != c.want {
			t.Fatalf("%s: %v -> 0x%02x, want 0x%02x", name, err, codeFor(err), c.want)
		}
	}
}

func BenchmarkAppendData(b *testing.B) {
	m := &mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: 5, SLS: 3}, Payload: make([]byte, 100)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendData(buf[:0], m, 1, true, 0, false)
	}
}

func BenchmarkDecodeData(b *testing.B) {
	enc := appendData(nil, &mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: 5, SLS: 3}, Payload: make([]byte, 100)}, 1, true, 0, false)
	b.ReportAllocs()
	for b.Loop() {
		var d dataFields
		if err := decodeData(enc, &d); err != nil {
			b.Fatal(err)
		}
	}
}
