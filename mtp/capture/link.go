package capture

import (
	"encoding/binary"
	"fmt"
)

// EtherTypes the Reader follows.
const (
	etherIPv4  = 0x0800
	etherIPv6  = 0x86dd
	etherVLAN  = 0x8100 // 802.1Q
	etherQinQ  = 0x88a8 // 802.1ad
	etherQinQ2 = 0x9100 // pre-standard QinQ
)

func supportedLink(l LinkType) bool {
	switch l {
	case LinkNull, LinkEthernet, LinkRawDLT12, LinkRawDLT14, LinkRaw, LinkLoop,
		LinkSLL, LinkSLL2, LinkIPv4, LinkIPv6, LinkMTP2, LinkMTP2WithPHDR, LinkMTP3:
		return true
	}
	return false
}

// decodeFrame strips the link-layer header and hands the rest on. Frames
// that carry nothing of interest are counted and return nil.
func (r *Reader) decodeFrame(link LinkType, b []byte) error {
	switch link {
	case LinkEthernet:
		return r.decodeEthernet(b)
	case LinkRaw, LinkRawDLT12, LinkRawDLT14:
		return r.decodeIP(b)
	case LinkIPv4:
		return r.decodeIPv4(b)
	case LinkIPv6:
		return r.decodeIPv6(b)
	case LinkSLL:
		// Linux cooked v1: 16 octets, protocol (EtherType) in the last two.
		if len(b) < 16 {
			return truncated("SLL header")
		}
		return r.decodeEtherType(binary.BigEndian.Uint16(b[14:16]), b[16:])
	case LinkSLL2:
		// Linux cooked v2: 20 octets, protocol first.
		if len(b) < 20 {
			return truncated("SLL2 header")
		}
		return r.decodeEtherType(binary.BigEndian.Uint16(b[0:2]), b[20:])
	case LinkNull, LinkLoop:
		return r.decodeLoopback(link, b)
	case LinkMTP2:
		return r.decodeMTP2(b, r.cfg.mtp2Ext)
	case LinkMTP2WithPHDR:
		// Pseudo-header: sent(1) annex_a_used(1) link_number(2).
		if len(b) < 4 {
			return truncated("MTP2 pseudo-header")
		}
		return r.decodeMTP2(b[4:], b[1] != 0)
	case LinkMTP3:
		return r.decodeMSU(b, FramingMTP3)
	}
	if r.badLinks == nil {
		r.badLinks = make(map[LinkType]bool)
	}
	r.stats.Skipped++
	if r.badLinks[link] {
		return nil
	}
	r.badLinks[link] = true
	return fmt.Errorf("%w %d", ErrLinkType, link)
}

func (r *Reader) decodeEthernet(b []byte) error {
	if len(b) < 14 {
		return truncated("Ethernet header")
	}
	typ := binary.BigEndian.Uint16(b[12:14])
	b = b[14:]
	// Any number of VLAN tags: TCI(2) then the inner EtherType(2).
	for typ == etherVLAN || typ == etherQinQ || typ == etherQinQ2 {
		if len(b) < 4 {
			return truncated("802.1Q tag")
		}
		typ = binary.BigEndian.Uint16(b[2:4])
		b = b[4:]
	}
	return r.decodeEtherType(typ, b)
}

func (r *Reader) decodeEtherType(typ uint16, b []byte) error {
	switch typ {
	case etherIPv4:
		return r.decodeIPv4(b)
	case etherIPv6:
		return r.decodeIPv6(b)
	}
	r.stats.Skipped++
	return nil
}

// decodeLoopback handles the 4-octet address family header. LinkNull stores
// it in the capturing host's byte order, so both orders are tried; IPv6 has
// a different AF_INET6 value on each BSD.
func (r *Reader) decodeLoopback(link LinkType, b []byte) error {
	if len(b) < 4 {
		return truncated("loopback header")
	}
	af := binary.BigEndian.Uint32(b[:4])
	if link == LinkNull && af > 0xffff {
		af = binary.LittleEndian.Uint32(b[:4])
	}
	switch af {
	case 2:
		return r.decodeIPv4(b[4:])
	case 10, 24, 28, 30: // Linux, NetBSD/OpenBSD, FreeBSD, Darwin
		return r.decodeIPv6(b[4:])
	}
	r.stats.Skipped++
	return nil
}
