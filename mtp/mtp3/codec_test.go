package mtp3

import (
	"bytes"
	"errors"
	"testing"

	"github.com/isupgw/isupgw/mtp"
)

func TestDecodeMSUFromCapture(t *testing.T) {
	// SLTM from PC 1 to PC 2, national network, from the Yate M2PA capture.
	b := []byte{0x81, 0x02, 0x40, 0x00, 0x00, 0x11, 0x40, 0x00, 0x01, 0x02, 0x03}
	l, p, err := DecodeMSU(ITU, b)
	if err != nil {
		t.Fatal(err)
	}
	if l.SI != SISLT || l.NI != 2 || l.DPC != 2 || l.OPC != 1 || l.SLS != 0 {
		t.Fatalf("label %v", l)
	}
	tm, err := DecodeSLT(ITU, p)
	if err != nil || tm.H0H1 != SLTM || !bytes.Equal(tm.Pattern, []byte{0, 1, 2, 3}) {
		t.Fatalf("%+v %v", tm, err)
	}
	if re := tm.Append(ITU, AppendMSU(ITU, nil, l, nil)); !bytes.Equal(re, b) {
		t.Fatalf("re-encoded % x", re)
	}
}

func TestMSURoundTrip(t *testing.T) {
	cases := []struct {
		v Variant
		l mtp.Label
	}{
		{ITU, mtp.Label{OPC: 0x3FFF, DPC: 1, SI: 5, NI: 2, SLS: 15}},
		{ITU, mtp.Label{OPC: 1234, DPC: 16383, SI: 5, NI: 0, SLS: 7}},
		{ANSI, mtp.Label{OPC: 0x010203, DPC: 0xFFFEFD, SI: 5, NI: 2, MP: 3, SLS: 0xA5}},
		{ANSI, mtp.Label{OPC: 1, DPC: 2, SI: 0, NI: 2, MP: 0, SLS: 31}},
	}
	for _, c := range cases {
		b := AppendMSU(c.v, nil, c.l, []byte{9, 8})
		if len(b) != 1+c.v.LabelLen()+2 {
			t.Fatalf("%v: length %d", c.v, len(b))
		}
		l, p, err := DecodeMSU(c.v, b)
		if err != nil || l != c.l || !bytes.Equal(p, []byte{9, 8}) {
			t.Fatalf("%v: %v %v %v, want %v", c.v, l, p, err, c.l)
		}
	}
	if _, _, err := DecodeMSU(ANSI, make([]byte, 7)); !errors.Is(err, ErrShort) {
		t.Fatalf("short ANSI MSU: %v", err)
	}
}

func TestSNMRoundTripAndLayout(t *testing.T) {
	cases := []struct {
		v    Variant
		s    SNM
		wire []byte
	}{
		{ITU, SNM{H0H1: COO, FSN: 0x55}, []byte{0x11, 0x55}},
		{ITU, SNM{H0H1: COA, FSN: 0x7F}, []byte{0x21, 0x7F}},
		{ITU, SNM{H0H1: XCO, FSN: 0xABCDEF}, []byte{0x31, 0xEF, 0xCD, 0xAB}},
		{ITU, SNM{H0H1: XCA, FSN: 1}, []byte{0x41, 1, 0, 0}},
		{ITU, SNM{H0H1: CBD, CBC: 0x9A}, []byte{0x51, 0x9A}},
		{ITU, SNM{H0H1: CBA, CBC: 1}, []byte{0x61, 1}},
		{ITU, SNM{H0H1: ECO}, []byte{0x12}},
		{ITU, SNM{H0H1: ECA}, []byte{0x22}},
		{ITU, SNM{H0H1: TFP, Dest: 0x1234}, []byte{0x14, 0x34, 0x12}},
		{ITU, SNM{H0H1: TFR, Dest: 5}, []byte{0x34, 5, 0}},
		{ITU, SNM{H0H1: TFA, Dest: 0x3FFF}, []byte{0x54, 0xFF, 0x3F}},
		{ITU, SNM{H0H1: TFC, Dest: 7, Status: 2}, []byte{0x23, 7, 0x80}},
		{ITU, SNM{H0H1: TRA}, []byte{0x17}},
		{ITU, SNM{H0H1: UPU, Dest: 2, UserPart: 5, Cause: 1}, []byte{0x1A, 2, 0, 0x15}},
		{ANSI, SNM{H0H1: COO, SLC: 3, FSN: 0x7F}, []byte{0x11, 0xF3, 0x07}},
		{ANSI, SNM{H0H1: XCA, SLC: 1, FSN: 0x010203}, []byte{0x41, 1, 3, 2, 1}},
		{ANSI, SNM{H0H1: CBD, SLC: 2, CBC: 0xFF}, []byte{0x51, 0xF2, 0x0F}},
		{ANSI, SNM{H0H1: ECO, SLC: 9}, []byte{0x12, 9}},
		{ANSI, SNM{H0H1: TFP, Dest: 0x0A0B0C}, []byte{0x14, 0x0C, 0x0B, 0x0A}},
		{ANSI, SNM{H0H1: TFC, Dest: 1, Status: 3}, []byte{0x23, 1, 0, 0, 3}},
		{ANSI, SNM{H0H1: UPU, Dest: 0x020304, UserPart: 5, Cause: 2}, []byte{0x1A, 4, 3, 2, 0x25}},
		{ANSI, SNM{H0H1: TRW}, []byte{0x27}},
	}
	for _, c := range cases {
		got := c.s.Append(c.v, nil)
		if !bytes.Equal(got, c.wire) {
			t.Fatalf("%v %v: % x, want % x", c.v, c.s, got, c.wire)
		}
		back, err := DecodeSNM(c.v, got)
		if err != nil || back != c.s {
			t.Fatalf("%v %v: decoded %+v %v", c.v, c.s, back, err)
		}
		if len(c.wire) > 1 {
			if _, err := DecodeSNM(c.v, c.wire[:len(c.wire)-1]); !errors.Is(err, ErrShort) {
				t.Fatalf("%v %v truncated: %v", c.v, c.s, err)
			}
		}
	}
	if _, err := DecodeSNM(ITU, []byte{0x99}); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown heading: %v", err)
	}
}

func TestSLTANSICarriesSLC(t *testing.T) {
	b := SLT{H0H1: SLTA, SLC: 5, Pattern: []byte{1, 2}}.Append(ANSI, nil)
	if !bytes.Equal(b, []byte{0x21, 0x25, 1, 2}) {
		t.Fatalf("% x", b)
	}
	s, err := DecodeSLT(ANSI, b)
	if err != nil || s.SLC != 5 || s.H0H1 != SLTA {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := DecodeSLT(ITU, []byte{0x11, 0x40, 1}); !errors.Is(err, ErrShort) {
		t.Fatalf("short pattern: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), []byte{0x81, 0x02, 0x40, 0x00, 0x00, 0x11, 0x40, 0x00, 0x01, 0x02, 0x03})
	f.Add(uint8(1), AppendMSU(ANSI, nil, mtp.Label{SI: 0, NI: 2}, SNM{H0H1: TFC, Dest: 1, Status: 3}.Append(ANSI, nil)))
	f.Add(uint8(0), AppendMSU(ITU, nil, mtp.Label{SI: 0, NI: 2}, SNM{H0H1: UPU, Dest: 1, UserPart: 5}.Append(ITU, nil)))
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		v := Variant(sel & 1)
		l, p, err := DecodeMSU(v, b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			return
		}
		// ITU's SIO bits 5-6 are spare: the codec sends them as zero.
		want := append([]byte(nil), b...)
		if v == ITU {
			want[0] &^= 0x30
		}
		if re := AppendMSU(v, nil, l, p); !bytes.Equal(re, want) {
			t.Fatalf("MSU round trip % x -> % x", b, re)
		}
		switch l.SI {
		case SISNM:
			s, err := DecodeSNM(v, p)
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatal(err)
				}
				return
			}
			if s2, err := DecodeSNM(v, s.Append(v, nil)); err != nil || s2 != s {
				t.Fatalf("SNM round trip %+v -> %+v %v", s, s2, err)
			}
		case SISLT, SISLTANSI:
			s, err := DecodeSLT(v, p)
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatal(err)
				}
				return
			}
			if s2, err := DecodeSLT(v, s.Append(v, nil)); err != nil || !bytes.Equal(s2.Pattern, s.Pattern) {
				t.Fatalf("SLT round trip %+v -> %+v %v", s, s2, err)
			}
		}
	})
}
