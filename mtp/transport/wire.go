package transport

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// SCTP wire constants (RFC 9260 §3).
const (
	sctpCommonHeaderLen = 12
	chunkInit           = 1
	chunkInitAck        = 2
	chunkHeartbeat      = 4
	chunkHeartbeatAck   = 5
	chunkAbort          = 6
	chunkShutdownAck    = 8
	chunkCookieEcho     = 10
	chunkShutdownCompl  = 14
	initFixedLen        = 16 // initiate tag, a_rwnd, OS, MIS, initial TSN
	// pionPort is the port pion/sctp writes into every packet it makes and
	// expects in every packet it reads.
	pionPort = 5000
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	fourZeroes [4]byte // the checksum field as the CRC sees it; global so it does not escape per call
)

var errBadPacket = errors.New("transport: malformed SCTP packet")

// sctpChecksum computes the CRC32c of an SCTP packet with the checksum field
// taken as zero (RFC 9260 appendix A).
func sctpChecksum(p []byte) uint32 {
	sum := crc32.Update(0, castagnoli, p[:8])
	sum = crc32.Update(sum, castagnoli, fourZeroes[:])
	return crc32.Update(sum, castagnoli, p[12:])
}

// checksumOK reports whether the packet's CRC32c is right.
func checksumOK(p []byte) bool {
	return len(p) >= sctpCommonHeaderLen && binary.LittleEndian.Uint32(p[8:]) == sctpChecksum(p)
}

// setPorts writes the ports into the common header and recomputes the CRC32c.
func setPorts(p []byte, src, dst uint16) {
	binary.BigEndian.PutUint16(p[0:], src)
	binary.BigEndian.PutUint16(p[2:], dst)
	binary.LittleEndian.PutUint32(p[8:], sctpChecksum(p))
}

// packetPorts returns the source and destination ports of a packet.
func packetPorts(p []byte) (src, dst uint16) {
	return binary.BigEndian.Uint16(p[0:]), binary.BigEndian.Uint16(p[2:])
}

// firstChunkType returns the type of the first chunk, or -1.
func firstChunkType(p []byte) int {
	if len(p) < sctpCommonHeaderLen+4 {
		return -1
	}
	return int(p[sctpCommonHeaderLen])
}

// isAddressParam reports the INIT parameters pion refuses as a server:
// IPv4 (5), IPv6 (6), cookie preservative (9), host name (11) and supported
// address types (12). Dropping them is harmless for a single-homed peer.
func isAddressParam(t uint16) bool {
	switch t {
	case 5, 6, 9, 11, 12:
		return true
	}
	return false
}

// stripInitAddresses removes address parameters from an INIT or INIT ACK
// chunk that is the packet's only chunk (RFC 9260 forbids bundling it) and
// returns the shortened packet. Other packets come back unchanged. The
// checksum is not recomputed here.
func stripInitAddresses(p []byte) ([]byte, error) {
	ct := firstChunkType(p)
	if ct != chunkInit && ct != chunkInitAck {
		return p, nil
	}
	c := p[sctpCommonHeaderLen:]
	clen := int(binary.BigEndian.Uint16(c[2:]))
	if clen < 4+initFixedLen || clen > len(c) {
		return nil, errBadPacket
	}
	out := 4 + initFixedLen // write cursor inside c
	in := out
	for in+4 <= clen {
		t := binary.BigEndian.Uint16(c[in:])
		l := int(binary.BigEndian.Uint16(c[in+2:]))
		if l < 4 || in+l > clen {
			return nil, errBadPacket
		}
		padded := (l + 3) &^ 3
		if in+padded > len(c) {
			padded = l // last parameter may lack padding at the chunk's end
		}
		if !isAddressParam(t) {
			copy(c[out:], c[in:in+padded])
			out += padded
		}
		in += padded
	}
	if out == in {
		return p, nil
	}
	// The chunk length excludes the last parameter's padding (§3.2).
	newLen := out
	binary.BigEndian.PutUint16(c[2:], uint16(newLen))
	return p[:sctpCommonHeaderLen+((newLen+3)&^3)], nil
}

// initStreams returns the outbound and inbound stream counts of an INIT or
// INIT ACK packet.
func initStreams(p []byte) (os, mis uint16, ok bool) {
	ct := firstChunkType(p)
	if (ct != chunkInit && ct != chunkInitAck) || len(p) < sctpCommonHeaderLen+4+initFixedLen {
		return 0, 0, false
	}
	c := p[sctpCommonHeaderLen+4:]
	return binary.BigEndian.Uint16(c[8:]), binary.BigEndian.Uint16(c[10:]), true
}

// setInitStreams writes stream counts into our own INIT or INIT ACK so the
// peer sees the configured number instead of pion's 65535.
func setInitStreams(p []byte, os, mis uint16) {
	if _, _, ok := initStreams(p); !ok {
		return
	}
	c := p[sctpCommonHeaderLen+4:]
	binary.BigEndian.PutUint16(c[8:], os)
	binary.BigEndian.PutUint16(c[10:], mis)
}

// ootbAbort builds the ABORT that answers an out-of-the-blue packet
// (RFC 9260 §8.4 rule 8, §8.5.1): ports swapped, the packet's verification
// tag reflected with the T bit set. It returns nil where §8.4 says to stay
// silent (ABORT, SHUTDOWN COMPLETE, or a malformed packet).
func ootbAbort(p []byte) []byte {
	if len(p) < sctpCommonHeaderLen+4 || !checksumOK(p) {
		return nil
	}
	var vtag uint32
	tbit := byte(1)
	switch firstChunkType(p) {
	case chunkAbort, chunkShutdownCompl:
		return nil
	case chunkShutdownAck:
		return nil // §8.4 rule 5 wants SHUTDOWN COMPLETE; staying silent is safe
	case chunkInit:
		// §8.4 rule 3: tag from the INIT's initiate tag, T bit clear.
		if len(p) < sctpCommonHeaderLen+8 {
			return nil
		}
		vtag = binary.BigEndian.Uint32(p[sctpCommonHeaderLen+4:])
		tbit = 0
	default:
		vtag = binary.BigEndian.Uint32(p[4:])
	}
	src, dst := packetPorts(p)
	a := make([]byte, sctpCommonHeaderLen+4)
	binary.BigEndian.PutUint32(a[4:], vtag)
	a[sctpCommonHeaderLen] = chunkAbort
	a[sctpCommonHeaderLen+1] = tbit
	binary.BigEndian.PutUint16(a[sctpCommonHeaderLen+2:], 4)
	setPorts(a, dst, src)
	return a
}

// heartbeatInfoLen is a HEARTBEAT chunk holding the Heartbeat Info
// parameter pion means to send: an 8-byte big-endian send time in Unix
// nanoseconds, which pion's HEARTBEAT ACK handler reads back as an RTT
// sample.
const heartbeatInfoLen = 4 + 4 + 8

// completeHeartbeats gives every HEARTBEAT chunk of an outgoing packet that
// lacks its Heartbeat Info parameter one, stamped with now. pion v1.12.1
// sends such chunks: chunkHeartbeat defines Marshal rather than marshal, so
// the encoder falls back to the embedded chunkHeader and writes a bare
// 4-byte chunk. RFC 9260 §3.3.5 makes Heartbeat Info mandatory, and Linux
// aborts the association on a HEARTBEAT shorter than chunk header plus
// parameter header (sctp_sf_beat_8_3: "The following chunk had invalid
// length"). Packets without such a chunk, or malformed ones, come back
// unchanged; otherwise the result is a new slice with the checksum not yet
// recomputed.
func completeHeartbeats(p []byte, now int64) []byte {
	bare := 0
	for off := sctpCommonHeaderLen; off+4 <= len(p); {
		l := int(binary.BigEndian.Uint16(p[off+2:]))
		if l < 4 {
			return p
		}
		if p[off] == chunkHeartbeat && l < 8 {
			bare++
		}
		off += (l + 3) &^ 3
	}
	if bare == 0 {
		return p
	}
	out := make([]byte, sctpCommonHeaderLen, len(p)+bare*heartbeatInfoLen)
	copy(out, p[:sctpCommonHeaderLen])
	for off := sctpCommonHeaderLen; off+4 <= len(p); {
		l := int(binary.BigEndian.Uint16(p[off+2:]))
		end := min(off+((l+3)&^3), len(p))
		if p[off] == chunkHeartbeat && l < 8 {
			var hb [heartbeatInfoLen]byte
			hb[0] = chunkHeartbeat
			binary.BigEndian.PutUint16(hb[2:], heartbeatInfoLen)
			binary.BigEndian.PutUint16(hb[4:], 1) // Heartbeat Info
			binary.BigEndian.PutUint16(hb[6:], 4+8)
			binary.BigEndian.PutUint64(hb[8:], uint64(now))
			out = append(out, hb[:]...)
		} else {
			out = append(out, p[off:end]...)
		}
		off = end
	}
	return out
}
