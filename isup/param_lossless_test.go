package isup

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// checkLossless decodes b into a fresh value of the type made by newP and, if that
// succeeds, requires the value to encode back to exactly b. It reports whether b
// decoded.
func checkLossless(t testing.TB, newP func() Param, b []byte) bool {
	t.Helper()
	p := newP()
	if err := p.UnmarshalBinary(b); err != nil {
		return false
	}
	n := p.MarshalLen()
	if n != len(b) {
		t.Fatalf("%T: decoded % x, MarshalLen %d", p, b, n)
	}
	out := make([]byte, n)
	m, err := p.MarshalTo(out)
	if err != nil || m != n || !bytes.Equal(out, b) {
		t.Fatalf("%T: decoded % x, encoded % x (n=%d, err=%v)", p, b, out, m, err)
	}
	return true
}

// TestParamsLosslessRandom feeds random strings of 0 to 20 octets to every type; what
// decodes must re-encode byte-identical.
func TestParamsLosslessRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(0x15d9, 0x763))
	const perLength = 500
	for _, newP := range paramTypes {
		decoded := 0
		for n := 0; n <= 20; n++ {
			for range perLength {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				if checkLossless(t, newP, b) {
					decoded++
				}
			}
		}
		if decoded == 0 {
			t.Errorf("%T: no random input decoded", newP())
		}
	}
}

// FuzzParams feeds the input to every parameter type and checks the lossless property.
func FuzzParams(f *testing.F) {
	for _, c := range paramCases {
		f.Add(c.wire)
	}
	f.Add([]byte{})
	f.Add([]byte{0xc0, 0x01, 0x01, 0x81, 0x3d, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newP := range paramTypes {
			checkLossless(t, newP, b)
		}
	})
}
