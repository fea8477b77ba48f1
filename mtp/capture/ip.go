package capture

import (
	"encoding/binary"
	"net/netip"
)

// IP protocol numbers the Reader follows.
const (
	protoUDP  = 17
	protoSCTP = 132
)

// decodeIP dispatches raw IP by the version nibble.
func (r *Reader) decodeIP(b []byte) error {
	if len(b) < 1 {
		return truncated("IP header")
	}
	switch b[0] >> 4 {
	case 4:
		return r.decodeIPv4(b)
	case 6:
		return r.decodeIPv6(b)
	}
	r.stats.Skipped++
	return nil
}

func (r *Reader) decodeIPv4(b []byte) error {
	if len(b) < 20 {
		return truncated("IPv4 header")
	}
	if v := b[0] >> 4; v != 4 {
		return malformedf("IPv4 header with version %d", v)
	}
	ihl := int(b[0]&0x0f) * 4
	if ihl < 20 {
		return malformedf("IPv4 header length %d", ihl)
	}
	if len(b) < ihl {
		return truncated("IPv4 options")
	}
	total := int(binary.BigEndian.Uint16(b[2:4]))
	switch {
	case total == 0:
		// TSO captures sometimes leave it zero; trust the capture.
		total = len(b)
	case total < ihl:
		return malformedf("IPv4 total length %d below header length %d", total, ihl)
	case total > len(b):
		return truncated("IPv4 packet")
	}
	// Fragments are rare for signaling (SCTP sizes to the path MTU) and
	// reassembly needs state across frames; skip and count them.
	if frag := binary.BigEndian.Uint16(b[6:8]); frag&0x3fff != 0 {
		r.stats.IPFragments++
		return nil
	}
	src := netip.AddrFrom4([4]byte(b[12:16]))
	dst := netip.AddrFrom4([4]byte(b[16:20]))
	return r.decodeTransport(b[9], src, dst, b[ihl:total])
}

// IPv6 extension headers that share the (next, len in 8-octet units) layout.
const (
	ip6HopByHop = 0
	ip6Routing  = 43
	ip6Fragment = 44
	ip6AH       = 51
	ip6DestOpts = 60
	ip6Mobility = 135
	ip6HIP      = 139
	ip6Shim6    = 140
)

func (r *Reader) decodeIPv6(b []byte) error {
	if len(b) < 40 {
		return truncated("IPv6 header")
	}
	if v := b[0] >> 4; v != 6 {
		return malformedf("IPv6 header with version %d", v)
	}
	plen := int(binary.BigEndian.Uint16(b[4:6]))
	next := b[6]
	src := netip.AddrFrom16([16]byte(b[8:24]))
	dst := netip.AddrFrom16([16]byte(b[24:40]))
	p := b[40:]
	switch {
	case plen == 0: // jumbogram or TSO: trust the capture
	case plen > len(p):
		return truncated("IPv6 packet")
	default:
		p = p[:plen]
	}
	for {
		switch next {
		case ip6HopByHop, ip6Routing, ip6DestOpts, ip6Mobility, ip6HIP, ip6Shim6:
			if len(p) < 8 {
				return truncated("IPv6 extension header")
			}
			n := (int(p[1]) + 1) * 8
			if len(p) < n {
				return truncated("IPv6 extension header")
			}
			next, p = p[0], p[n:]
		case ip6AH:
			if len(p) < 8 {
				return truncated("IPv6 authentication header")
			}
			n := (int(p[1]) + 2) * 4
			if len(p) < n {
				return truncated("IPv6 authentication header")
			}
			next, p = p[0], p[n:]
		case ip6Fragment:
			if len(p) < 8 {
				return truncated("IPv6 fragment header")
			}
			// Offset or M flag set: a real fragment; an atomic fragment
			// (both zero) is a whole datagram.
			if binary.BigEndian.Uint16(p[2:4])&0xfff9 != 0 {
				r.stats.IPFragments++
				return nil
			}
			next, p = p[0], p[8:]
		default:
			return r.decodeTransport(next, src, dst, p)
		}
	}
}

// decodeTransport handles SCTP directly in IP and SCTP over UDP.
func (r *Reader) decodeTransport(proto uint8, src, dst netip.Addr, b []byte) error {
	switch proto {
	case protoSCTP:
		return r.decodeSCTP(src, dst, b)
	case protoUDP:
		if len(b) < 8 {
			return truncated("UDP header")
		}
		sp, dp := binary.BigEndian.Uint16(b[0:2]), binary.BigEndian.Uint16(b[2:4])
		if sp != r.cfg.udpPort && dp != r.cfg.udpPort {
			r.stats.Skipped++
			return nil
		}
		ulen := int(binary.BigEndian.Uint16(b[4:6]))
		switch {
		case ulen == 0: // IPv6 jumbogram / offload: trust the capture
		case ulen < 8:
			return malformedf("UDP length %d", ulen)
		case ulen > len(b):
			return truncated("UDP datagram")
		default:
			b = b[:ulen]
		}
		return r.decodeSCTP(src, dst, b[8:])
	}
	r.stats.Skipped++
	return nil
}
