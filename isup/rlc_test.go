package isup

import "testing"

// An ITU RLC of CIC and type only (no optional-part pointer) decodes as an
// RLC without optional part; the encoder still writes the pointer.
func TestITURLCWithoutOptionalPointer(t *testing.T) {
	m, err := Decode([]byte{0x05, 0x00, byte(RLC)}, ITU)
	if err != nil {
		t.Fatalf("RLC without pointer: %v", err)
	}
	r, ok := m.(*ReleaseComplete)
	if !ok || r.CIC != 5 || r.Optional != nil {
		t.Fatalf("decoded %#v", m)
	}
	b, err := Marshal(r, ITU)
	if err != nil || len(b) != 4 || b[3] != 0 {
		t.Fatalf("re-encoded % X, %v; want the pointer octet 00", b, err)
	}
	// With its pointer, and with a cause in the optional part, as before.
	if m, err := Decode([]byte{0x05, 0x00, byte(RLC), 0x01, 0x12, 0x02, 0x82, 0x90, 0x00}, ITU); err != nil || len(m.(*ReleaseComplete).Optional) != 1 {
		t.Fatalf("RLC with cause: %v %v", m, err)
	}
}
