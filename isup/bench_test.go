package isup

import "testing"

// The hot-path benchmarks the issue asks for: an IAM with calling number and a REL
// with cause and ACL, each decoded and encoded, in both variants.

func benchMessages(b *testing.B) map[string]messageCase {
	out := map[string]messageCase{}
	for _, tc := range messageCases(b) {
		out[tc.name] = tc
	}
	return out
}

func benchDecode(b *testing.B, name string) {
	tc := benchMessages(b)[name]
	b.ReportAllocs()
	b.SetBytes(int64(len(tc.wire)))
	for b.Loop() {
		if _, err := Decode(tc.wire, tc.variant); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEncode(b *testing.B, name string) {
	tc := benchMessages(b)[name]
	buf := make([]byte, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(tc.wire)))
	for b.Loop() {
		if _, err := MarshalTo(buf, tc.msg, tc.variant); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeIAMITU(b *testing.B)  { benchDecode(b, "IAM ITU") }
func BenchmarkDecodeIAMANSI(b *testing.B) { benchDecode(b, "IAM ANSI") }
func BenchmarkEncodeIAMITU(b *testing.B)  { benchEncode(b, "IAM ITU") }
func BenchmarkEncodeIAMANSI(b *testing.B) { benchEncode(b, "IAM ANSI") }
func BenchmarkDecodeRELITU(b *testing.B)  { benchDecode(b, "REL with ACL") }
func BenchmarkDecodeRELANSI(b *testing.B) { benchDecode(b, "REL ANSI with diagnostics") }
func BenchmarkEncodeRELITU(b *testing.B)  { benchEncode(b, "REL with ACL") }
func BenchmarkEncodeRELANSI(b *testing.B) { benchEncode(b, "REL ANSI with diagnostics") }

// BenchmarkPeek is the cost of the level-2 shedding decision.
func BenchmarkPeek(b *testing.B) {
	tc := benchMessages(b)["IAM ITU"]
	b.ReportAllocs()
	for b.Loop() {
		if _, t, _ := Peek(tc.wire, ITU); t != IAM {
			b.Fatal(t)
		}
	}
}
