package m2pa

import (
	"bytes"
	"errors"
	"testing"
)

func TestDecodeTable(t *testing.T) {
	hdr := func(typ byte, n byte, bsn, fsn [3]byte) []byte {
		return []byte{1, 0, 11, typ, 0, 0, 0, n, 0, bsn[0], bsn[1], bsn[2], 0, fsn[0], fsn[1], fsn[2]}
	}
	ff := [3]byte{0xff, 0xff, 0xff}
	cases := []struct {
		name string
		in   []byte
		want Message
		err  error
	}{
		{"empty user data is an ack", hdr(1, 16, [3]byte{0, 0, 5}, ff), Message{Type: TypeUserData, BSN: 5, FSN: SeqInitial}, nil},
		{"user data with SIO and priority", append(hdr(1, 20, [3]byte{0, 1, 0}, [3]byte{0, 0, 0}), 0xC0, 0x85, 1, 2),
			Message{Type: TypeUserData, BSN: 256, FSN: 0, Priority: 3, Data: []byte{0x85, 1, 2}}, nil},
		{"alignment", append(hdr(2, 20, ff, ff), 0, 0, 0, 1), Message{Type: TypeLinkStatus, BSN: SeqInitial, FSN: SeqInitial, State: StateAlignment}, nil},
		{"proving emergency with filler", append(hdr(2, 22, ff, ff), 0, 0, 0, 3, 9, 9),
			Message{Type: TypeLinkStatus, BSN: SeqInitial, FSN: SeqInitial, State: StateProvingEmergency, Filler: []byte{9, 9}}, nil},
		{"out of service", append(hdr(2, 20, ff, ff), 0, 0, 0, 9), Message{Type: TypeLinkStatus, BSN: SeqInitial, FSN: SeqInitial, State: StateOutOfService}, nil},
		{"upper BSN bits ignored", []byte{1, 0, 11, 1, 0, 0, 0, 16, 0xAA, 0, 0, 1, 0xBB, 0, 0, 2}, Message{Type: TypeUserData, BSN: 1, FSN: 2}, nil},
		{"short", []byte{1, 0, 11, 1}, Message{}, ErrMalformed},
		{"version 2", []byte{2, 0, 11, 1, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0}, Message{}, ErrVersion},
		{"class 1 (M3UA transfer)", []byte{1, 0, 1, 1, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0}, Message{}, ErrClass},
		{"unknown type", hdr(3, 16, ff, ff), Message{}, ErrType},
		{"length too big", hdr(1, 17, ff, ff), Message{}, ErrLength},
		{"user data with only PRI octet", append(hdr(1, 17, ff, ff), 0), Message{}, ErrMalformed},
		{"link status without state", append(hdr(2, 18, ff, ff), 0, 0), Message{}, ErrMalformed},
		{"link status 0", append(hdr(2, 20, ff, ff), 0, 0, 0, 0), Message{}, ErrState},
		{"link status 10", append(hdr(2, 20, ff, ff), 0, 0, 0, 10), Message{}, ErrState},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(c.in)
			if c.err != nil {
				if !errors.Is(err, c.err) || !errors.Is(err, ErrMalformed) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != c.want.Type || got.BSN != c.want.BSN || got.FSN != c.want.FSN || got.State != c.want.State ||
				got.Priority != c.want.Priority || !bytes.Equal(got.Data, c.want.Data) || !bytes.Equal(got.Filler, c.want.Filler) ||
				(got.Data == nil) != (c.want.Data == nil) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if c.name != "upper BSN bits ignored" {
				if re := got.Append(nil); !bytes.Equal(re, c.in) {
					t.Fatalf("re-encoded % x, want % x", re, c.in)
				}
			}
		})
	}
}

func TestDecodeTooLong(t *testing.T) {
	m := Message{Type: TypeUserData, Data: make([]byte, MaxMessage)}
	if _, err := Decode(m.Append(nil)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("err %v", err)
	}
}

func TestSeqArithmeticWraps(t *testing.T) {
	if seqAdd(SeqInitial, 1) != 0 || seqDist(SeqInitial, 2) != 3 || seqDist(5, 5) != 0 || seqDist(1, 0) != SeqMask {
		t.Fatal("24-bit arithmetic wrong")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add((&Message{Type: TypeUserData, BSN: 1, FSN: 2, Data: []byte{0x85, 1, 2, 3}}).Append(nil))
	f.Add((&Message{Type: TypeUserData, BSN: SeqInitial, FSN: SeqInitial}).Append(nil))
	f.Add((&Message{Type: TypeLinkStatus, State: StateProvingEmergency, Filler: []byte{1}}).Append(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		// A decoded message re-encodes to the same bytes, apart from the
		// spare bits (header octet 1, the top octets of BSN/FSN and the
		// PRI octet's low six bits), which the codec zeroes.
		re := m.Append(nil)
		if len(re) != len(b) {
			t.Fatalf("re-encoded length %d, input %d", len(re), len(b))
		}
		m2, err := Decode(re)
		if err != nil || m2.BSN != m.BSN || m2.FSN != m.FSN || m2.State != m.State || !bytes.Equal(m2.Data, m.Data) {
			t.Fatalf("round trip changed the message: %v %+v %+v", err, m, m2)
		}
	})
}
