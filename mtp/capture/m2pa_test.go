package capture

import (
	"errors"
	"testing"
)

// TestParseM2PA checks the M2PA framings the Reader meets: User Data with an
// MSU, an empty User Data (acknowledgement only, RFC 4165 section 4.2.2) and
// Link Status (counted), and malformed headers (errors, never a panic).
func TestParseM2PA(t *testing.T) {
	hdr := func(ver, class, typ byte, n int) []byte {
		return []byte{ver, 0, class, typ, 0, 0, 0, byte(n), 0, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	}
	msu := []byte{0x85, 2, 0x40, 0, 0x30, 1, 0, 0x10} // SIO, ITU label (DPC 2, OPC 1, SLS 3), CIC 1, RLC
	userData := append(append(hdr(1, 11, 1, 16+1+len(msu)), 0), msu...)
	cases := []struct {
		name    string
		in      []byte
		ok      bool
		err     error
		nonMSU  int
		opc     uint32
		dpc     uint32
		sls, si uint8
	}{
		{"user data", userData, true, nil, 0, 1, 2, 3, 5},
		{"empty user data", hdr(1, 11, 1, 16), false, nil, 1, 0, 0, 0, 0},
		{"link status", append(hdr(1, 11, 2, 20), 0, 0, 0, 1), false, nil, 1, 0, 0, 0, 0},
		{"short header", hdr(1, 11, 1, 16)[:10], false, ErrTruncated, 0, 0, 0, 0, 0},
		{"version 2", hdr(2, 11, 1, 16), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"class 10", hdr(1, 10, 1, 16), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"type 9", hdr(1, 11, 9, 16), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"length below header", hdr(1, 11, 1, 8), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"length past data", hdr(1, 11, 1, 40), false, ErrTruncated, 0, 0, 0, 0, 0},
		{"priority octet only", append(hdr(1, 11, 1, 17), 0), false, ErrTruncated, 0, 0, 0, 0, 0},
		{"label cut", append(hdr(1, 11, 1, 19), 0, 0x85, 2), false, ErrTruncated, 0, 0, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Reader
			m, ok, err := r.parseM2PA(c.in)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil || ok != c.ok || r.stats.M2PANonMSU != c.nonMSU {
				t.Fatalf("ok %v err %v nonMSU %d", ok, err, r.stats.M2PANonMSU)
			}
			if ok && (m.Framing != FramingM2PA || m.OPC != c.opc || m.DPC != c.dpc || m.SLS != c.sls || m.SI != c.si || len(m.Payload) != 3) {
				t.Fatalf("message %+v", m)
			}
		})
	}
}
