package transport

import (
	"encoding/binary"
	"testing"
)

// FuzzWireInbound runs what the pion adapter does to every packet from the
// wire (and what the listeners do to strays) on arbitrary bytes: none may
// panic; stripping never grows a packet and leaves a chunk length that fits
// it; an ABORT we would send is well formed.
func FuzzWireInbound(f *testing.F) {
	f.Add(initPacket(param(5, 127, 0, 0, 1), param(0x8000)))
	f.Add(initPacket(param(6, make([]byte, 16)...), param(12, 0, 5)))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, p []byte) {
		in := append([]byte(nil), p...)
		_ = checksumOK(in)
		_, _, _ = initStreams(in)
		out, err := stripInitAddresses(in)
		if err == nil {
			if len(out) > len(p) {
				t.Fatalf("grew from %d to %d", len(p), len(out))
			}
			if ct := firstChunkType(out); (ct == chunkInit || ct == chunkInitAck) && len(out) >= sctpCommonHeaderLen+4 {
				if clen := int(binary.BigEndian.Uint16(out[sctpCommonHeaderLen+2:])); sctpCommonHeaderLen+clen > len(out) {
					t.Fatalf("chunk length %d beyond packet %d", clen, len(out))
				}
			}
		}
		if a := ootbAbort(p); a != nil {
			if len(a) != sctpCommonHeaderLen+4 || a[sctpCommonHeaderLen] != chunkAbort || !checksumOK(a) {
				t.Fatalf("bad ABORT %x", a)
			}
		}
	})
}
