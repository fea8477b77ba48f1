package capture

import (
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
)

// castagnoli is the CRC32c table SCTP uses (RFC 9260 appendix B); the
// standard library picks the SSE4.2/ARMv8 instruction when it can.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var zero4 [4]byte

// sctpChecksum computes the CRC32c of an SCTP packet as if its checksum
// field (octets 8..11) were zero, without modifying pkt. len(pkt) >= 12.
func sctpChecksum(pkt []byte) uint32 {
	c := crc32.Update(0, castagnoli, pkt[:8])
	c = crc32.Update(c, castagnoli, zero4[:])
	return crc32.Update(c, castagnoli, pkt[12:])
}

// storedChecksum reads the checksum field. SCTP transmits the CRC32c value
// least significant byte first (RFC 9260 appendix B), unlike its other fields.
func storedChecksum(pkt []byte) uint32 { return binary.LittleEndian.Uint32(pkt[8:12]) }

// putChecksum fills in the checksum of a complete SCTP packet.
func putChecksum(pkt []byte) {
	binary.LittleEndian.PutUint32(pkt[8:12], sctpChecksum(pkt))
}

// adler32OK reports whether pkt carries an RFC 2960 Adler-32 checksum, which
// SCTP used before RFC 3309 (old captures such as draft-era M3UA have it).
// That checksum is stored in network byte order.
func adler32OK(pkt []byte) bool {
	h := adler32.New()
	h.Write(pkt[:8])
	h.Write(zero4[:])
	h.Write(pkt[12:])
	return h.Sum32() == binary.BigEndian.Uint32(pkt[8:12])
}
