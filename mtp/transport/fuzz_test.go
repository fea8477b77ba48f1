package transport

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// FuzzWireInbound runs what the pion adapter does to every packet from the
// wire (the tag check included) (and what the listeners do to strays) on arbitrary bytes: none may
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
		var tc tagCheck
		tc.outbound(in)
		_ = tc.inbound(in)
		tc.set(1, 2)
		_ = tc.inbound(in)
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

// FuzzListenerGate runs a listener's front door on arbitrary packets from
// a peer it accepts (the checksum fixed up when asked, to get past it):
// it never panics; every answer has a good checksum; an INIT ACK's cookie,
// echoed back, builds exactly the association it describes, and the same
// cookie from another port does not.
func FuzzListenerGate(f *testing.F) {
	g := newGate(buildOptions(nil))
	from := netip.MustParseAddrPort("127.0.0.2:2905")
	f.Add(rawInit(2905, 2905, true), false)
	f.Add(initPacket(param(5, 127, 0, 0, 1), param(0x8000)), true)
	f.Add(rawCookieEcho(2905, 2905, 7, make([]byte, 100)), true)
	f.Add(make([]byte, 16), true)
	f.Fuzz(func(t *testing.T, p []byte, fixCRC bool) {
		in := append([]byte(nil), p...)
		if fixCRC && len(in) >= sctpCommonHeaderLen {
			src, dst := packetPorts(in)
			setPorts(in, src, dst)
		}
		v := g.judge(in, from)
		if v.est != nil {
			t.Fatalf("state from an unsigned packet: %x", p)
		}
		if v.reply == nil {
			return
		}
		if !checksumOK(v.reply) {
			t.Fatalf("answer with a bad checksum: %x", v.reply)
		}
		if firstChunkType(v.reply) != chunkInitAck {
			return
		}
		peerTag := binary.BigEndian.Uint32(in[sctpCommonHeaderLen+4:])
		tag, cookie := initAckCookie(t, v.reply, peerTag)
		src, dst := packetPorts(in)
		echo := rawCookieEcho(src, dst, tag, cookie)
		if w := g.judge(echo, netip.AddrPortFrom(from.Addr(), from.Port()+1)); w.est != nil {
			t.Fatal("cookie verified from another port")
		}
		w := g.judge(echo, from)
		if w.est == nil || w.est.peerTag != peerTag || w.est.localTag != tag {
			t.Fatalf("own cookie did not verify: %+v", w)
		}
		local, remote := snapTokens(w.est, 1<<20, 16)
		if len(local) != 4+initFixedLen || len(remote) < 4+initFixedLen || remote[0] != chunkInit ||
			int(binary.BigEndian.Uint16(remote[2:])) != len(remote) {
			t.Fatalf("SNAP tokens %x %x", local, remote)
		}
	})
}
