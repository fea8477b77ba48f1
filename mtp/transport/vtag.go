package transport

import (
	"encoding/binary"
	"sync"
)

// tagCheck enforces the verification tag rules of RFC 9260 §8.5 on the
// packets of one association, which pion does not: it takes an ABORT or
// DATA with any tag, so anyone able to forge the peer's address and ports
// could end or feed a live association blind. The tags come from pion's
// own packets (and, for an accepted association, from the cookie), never
// from an unverified inbound packet.
type tagCheck struct {
	mu      sync.Mutex
	my      uint32    // ours; 0 until known (a client before its INIT)
	peer    uint32    // the peer's, as pion writes it
	offered [4]uint32 // tags of pion's restart INIT ACKs (§5.2.2), newest first
	echoed  uint32    // tag of the last restart COOKIE ECHO let through
}

func (t *tagCheck) set(my, peer uint32) {
	t.mu.Lock()
	t.my, t.peer = my, peer
	t.mu.Unlock()
}

// inbound reports whether a packet from the peer may reach pion.
func (t *tagCheck) inbound(p []byte) bool {
	if len(p) < sctpCommonHeaderLen+4 {
		return true // pion drops it
	}
	vtag := binary.BigEndian.Uint32(p[4:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.my == 0 {
		return true
	}
	switch firstChunkType(p) {
	case chunkInit:
		return vtag == 0 // §8.5.1 A; pion answers a restart or a duplicate
	case chunkAbort, chunkShutdownCompl:
		if p[sctpCommonHeaderLen+1]&1 != 0 { // T bit: the tag reflected (§8.5.1 B, C)
			return vtag == t.peer
		}
	case chunkCookieEcho:
		// §5.2.4: a restart's COOKIE ECHO carries the tag of pion's
		// restart INIT ACK; pion checks the cookie's MAC.
		for _, o := range t.offered {
			if o != 0 && vtag == o {
				t.echoed = vtag
				return true
			}
		}
	}
	return vtag == t.my
}

// outbound learns the tags from a packet pion sends.
func (t *tagCheck) outbound(p []byte) {
	if len(p) < sctpCommonHeaderLen+4 {
		return
	}
	vtag := binary.BigEndian.Uint32(p[4:])
	ct := firstChunkType(p)
	if (ct == chunkInit || ct == chunkInitAck) && len(p) < sctpCommonHeaderLen+8 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ct {
	case chunkInit: // we dial: our tag is the INIT's initiate tag
		t.my = binary.BigEndian.Uint32(p[sctpCommonHeaderLen+4:])
	case chunkInitAck: // a restart offer; it takes effect with COOKIE ACK
		copy(t.offered[1:], t.offered[:])
		t.offered[0] = binary.BigEndian.Uint32(p[sctpCommonHeaderLen+4:])
	case chunkCookieAck: // pion accepted a restart
		if t.echoed != 0 {
			t.my, t.echoed, t.offered = t.echoed, 0, [4]uint32{}
		}
		t.peer = vtag
	case chunkAbort, chunkError, chunkShutdownCompl:
		// may answer an INIT or cookie that did not change the association
	default:
		t.peer = vtag
	}
}
