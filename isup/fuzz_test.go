package isup

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func FuzzDecodeITU(f *testing.F)  { fuzzDecode(f, ITU) }
func FuzzDecodeANSI(f *testing.F) { fuzzDecode(f, ANSI) }

// fuzzDecode checks decode -> encode -> decode: anything that decodes must encode
// (unless the canonical layout needs a pointer past 255, which a sender can avoid by
// ordering parameters differently), decode again to the same message, and encode to
// the same bytes the second time.
func fuzzDecode(f *testing.F, v Variant) {
	for _, tc := range messageCases(f) {
		if tc.variant == v {
			f.Add(tc.wire)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b, v)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if m.CircuitID() > v.MaxCIC() {
			t.Fatalf("CIC %d beyond %s range", m.CircuitID(), v)
		}
		first, err := Marshal(m, v)
		if errors.Is(err, ErrPointer) {
			return
		}
		if err != nil {
			t.Fatalf("decoded %#v but cannot encode: %v", m, err)
		}
		m2, err := Decode(first, v)
		if err != nil {
			t.Fatalf("re-decode of % X: %v", first, err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("decode/encode/decode differs:\n%#v\n%#v", m, m2)
		}
		second, err := Marshal(m2, v)
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("encoding not stable: % X / % X (%v)", first, second, err)
		}
	})
}
