package mtp2

import (
	"bytes"
	"errors"
	"testing"
)

func TestDecodeTable(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want SU
		err  bool
	}{
		{"FISU after reset", []byte{0xFF, 0xFF, 0, 0, 0}, SU{BSN: 127, BIB: true, FSN: 127, FIB: true, Kind: FISU}, false},
		{"LSSU SIO", []byte{0xFF, 0xFF, 1, 0, 0, 0}, SU{BSN: 127, BIB: true, FSN: 127, FIB: true, Kind: LSSU, Status: SIO}, false},
		{"LSSU SIE", []byte{0x7F, 0x7F, 1, 2, 0, 0}, SU{BSN: 127, FSN: 127, Kind: LSSU, Status: SIE}, false},
		{"two-octet LSSU", []byte{0, 0, 2, 3, 0, 0, 0}, SU{Kind: LSSU, Status: SIOS}, false},
		{"MSU", []byte{0x85, 0x03, 4, 0x85, 1, 2, 3, 0, 0}, SU{BSN: 5, BIB: true, FSN: 3, Kind: MSU, Data: []byte{0x85, 1, 2, 3}}, false},
		{"too short", []byte{0, 0, 0, 0}, SU{}, true},
		{"FISU with content", []byte{0, 0, 0, 9, 0, 0}, SU{}, true},
		{"LI disagrees", []byte{0, 0, 5, 1, 2, 3, 0, 0}, SU{}, true},
		{"LSSU status 6", []byte{0, 0, 1, 6, 0, 0}, SU{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(c.in)
			if c.err {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.BSN != c.want.BSN || got.BIB != c.want.BIB || got.FSN != c.want.FSN || got.FIB != c.want.FIB ||
				got.Kind != c.want.Kind || got.Status != c.want.Status || !bytes.Equal(got.Data, c.want.Data) {
				t.Fatalf("got %+v want %+v", got, c.want)
			}
			if c.name != "two-octet LSSU" {
				if re := got.Append(nil); !bytes.Equal(re, c.in) {
					t.Fatalf("re-encoded % x, want % x", re, c.in)
				}
			}
		})
	}
}

func TestLongMSUHasLI63(t *testing.T) {
	su := SU{Kind: MSU, Data: make([]byte, 200)}
	b := su.Append(nil)
	if b[2] != LIMax || len(b) != HeaderLen+200+FCSLen {
		t.Fatalf("LI %d, %d octets", b[2], len(b))
	}
	got, err := Decode(b)
	if err != nil || len(got.Data) != 200 {
		t.Fatalf("%v %d", err, len(got.Data))
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0xFF, 0xFF, 0, 0, 0})
	f.Add([]byte{0xFF, 0xFF, 1, 2, 0, 0})
	f.Add([]byte{0x85, 0x03, 4, 0x85, 1, 2, 3, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		su, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			return
		}
		back, err := Decode(su.Append(nil))
		if err != nil || back.BSN != su.BSN || back.FSN != su.FSN || back.BIB != su.BIB || back.FIB != su.FIB ||
			back.Kind != su.Kind || back.Status != su.Status || !bytes.Equal(back.Data, su.Data) {
			t.Fatalf("round trip %+v -> %+v %v", su, back, err)
		}
	})
}
