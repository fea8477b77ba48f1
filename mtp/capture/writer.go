package capture

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writerSnaplen is libpcap's maximum; records are never truncated.
const writerSnaplen = 262144

// Writer writes a classic pcap file of M3UA messages (over SCTP, optionally
// over UDP, in IPv4/IPv6) or of MTP3 MSUs (MTP2/MTP3 link types). Its
// methods are safe for concurrent use; each call writes one record.
type Writer struct {
	mu   sync.Mutex
	pw   *pcapgo.Writer
	cfg  config
	tsn  map[[2]netip.AddrPort]uint32 // next TSN per direction
	ssn  map[streamKey]uint16         // next SSN per direction and stream
	ipID uint16
	fsn  uint8 // MTP2 forward sequence number
}

type streamKey struct {
	src, dst netip.AddrPort
	stream   uint16
}

// NewWriter writes the pcap file header to w and returns a Writer. Options:
// WithLinkType (default LinkEthernet), WithSCTPOverUDP, WithANSI (label
// layout for WriteMSU), WithMicroseconds.
func NewWriter(w io.Writer, opts ...Option) (*Writer, error) {
	cfg := newConfig(opts)
	switch cfg.link {
	case LinkEthernet, LinkRaw, LinkIPv4, LinkIPv6, LinkSLL, LinkSLL2, LinkNull, LinkLoop,
		LinkMTP2, LinkMTP2WithPHDR, LinkMTP3:
	default:
		return nil, fmt.Errorf("capture: writer: %w %d", ErrLinkType, cfg.link)
	}
	pw := pcapgo.NewWriter(w)
	if cfg.nanosecond {
		pw = pcapgo.NewWriterNanos(w)
	}
	if err := pw.WriteFileHeader(writerSnaplen, layers.LinkType(cfg.link)); err != nil {
		return nil, fmt.Errorf("capture: writer: %w", err)
	}
	return &Writer{
		pw:  pw,
		cfg: cfg,
		tsn: make(map[[2]netip.AddrPort]uint32),
		ssn: make(map[streamKey]uint16),
	}, nil
}

func (w *Writer) isMTP() bool {
	return w.cfg.link == LinkMTP2 || w.cfg.link == LinkMTP2WithPHDR || w.cfg.link == LinkMTP3
}

// WriteM3UA writes one M3UA message as a single SCTP DATA chunk (PPID 3, B
// and E set) from src to dst on the given stream. TSNs rise per direction
// and SSNs per direction and stream; the SCTP CRC32c, IPv4 header checksum
// and UDP checksum are valid. Both addresses must be IPv4 or both IPv6. A
// zero ts means now.
func (w *Writer) WriteM3UA(ts time.Time, src, dst netip.AddrPort, stream uint16, m3ua []byte) error {
	return w.writeData("WriteM3UA", ts, src, dst, stream, ppidM3UA, m3ua)
}

// WriteSCTP is WriteM3UA for another SCTP user: payload goes in one DATA
// chunk with the given PPID (M2PA is 5, RFC 4165 §7.2).
func (w *Writer) WriteSCTP(ts time.Time, src, dst netip.AddrPort, stream uint16, ppid uint32, payload []byte) error {
	return w.writeData("WriteSCTP", ts, src, dst, stream, ppid, payload)
}

func (w *Writer) writeData(op string, ts time.Time, src, dst netip.AddrPort, stream uint16, ppid uint32, m3ua []byte) error {
	if w.isMTP() {
		return fmt.Errorf("capture: %s: %w %d (want an IP link type)", op, ErrLinkType, w.cfg.link)
	}
	sa, da := src.Addr().Unmap(), dst.Addr().Unmap()
	if !sa.IsValid() || !da.IsValid() || sa.Is4() != da.Is4() {
		return fmt.Errorf("capture: %s: %w: %v -> %v", op, ErrAddress, src, dst)
	}
	if (w.cfg.link == LinkIPv4 && !sa.Is4()) || (w.cfg.link == LinkIPv6 && sa.Is4()) {
		return fmt.Errorf("capture: %s: %w: %v on link type %d", op, ErrAddress, sa, w.cfg.link)
	}
	src, dst = netip.AddrPortFrom(sa, src.Port()), netip.AddrPortFrom(da, dst.Port())

	chunkLen := dataHeaderLen + len(m3ua)
	sctpLen := sctpCommonHeaderLen + (chunkLen+3)&^3
	l4Len := sctpLen
	if w.cfg.udp {
		l4Len += 8
	}
	if l4Len > 0xffff-60 {
		return fmt.Errorf("capture: %s: %w: message of %d octets too large", op, ErrMalformed, len(m3ua))
	}

	w.mu.Lock()
	defer w.mu.Unlock()

	dir := [2]netip.AddrPort{src, dst}
	tsn, ok := w.tsn[dir]
	if !ok {
		tsn = 1
	}
	w.tsn[dir] = tsn + 1
	sk := streamKey{src, dst, stream}
	ssn := w.ssn[sk]
	w.ssn[sk] = ssn + 1

	sctp := make([]byte, sctpLen)
	binary.BigEndian.PutUint16(sctp[0:2], src.Port())
	binary.BigEndian.PutUint16(sctp[2:4], dst.Port())
	binary.BigEndian.PutUint32(sctp[4:8], vtag(src, dst))
	c := sctp[sctpCommonHeaderLen:]
	c[0], c[1] = chunkData, flagBegin|flagEnd
	binary.BigEndian.PutUint16(c[2:4], uint16(chunkLen))
	binary.BigEndian.PutUint32(c[4:8], tsn)
	binary.BigEndian.PutUint16(c[8:10], stream)
	binary.BigEndian.PutUint16(c[10:12], ssn)
	binary.BigEndian.PutUint32(c[12:16], ppid)
	copy(c[dataHeaderLen:], m3ua)
	putChecksum(sctp)

	l4, proto := sctp, uint8(protoSCTP)
	if w.cfg.udp {
		l4 = make([]byte, 8+len(sctp))
		binary.BigEndian.PutUint16(l4[0:2], w.cfg.udpPort)
		binary.BigEndian.PutUint16(l4[2:4], w.cfg.udpPort)
		binary.BigEndian.PutUint16(l4[4:6], uint16(len(l4)))
		copy(l4[8:], sctp)
		sum := transportChecksum(sa, da, protoUDP, l4)
		if sum == 0 {
			sum = 0xffff // zero means "no checksum" in UDP
		}
		binary.BigEndian.PutUint16(l4[6:8], sum)
		proto = protoUDP
	}
	return w.writeIP(ts, sa, da, proto, l4)
}

// vtag makes a stable non-zero verification tag per direction.
func vtag(src, dst netip.AddrPort) uint32 {
	b, _ := src.MarshalBinary()
	d, _ := dst.MarshalBinary()
	return crc32.Checksum(append(b, d...), castagnoli) | 1
}

// writeIP adds the IP and link-layer headers and writes the record.
func (w *Writer) writeIP(ts time.Time, src, dst netip.Addr, proto uint8, l4 []byte) error {
	var ip []byte
	etherType := uint16(etherIPv4)
	if src.Is4() {
		ip = make([]byte, 20, 20+len(l4))
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:4], uint16(20+len(l4)))
		w.ipID++
		binary.BigEndian.PutUint16(ip[4:6], w.ipID)
		binary.BigEndian.PutUint16(ip[6:8], 0x4000) // DF, as SCTP sizes to the path MTU
		ip[8] = 64
		ip[9] = proto
		s, d := src.As4(), dst.As4()
		copy(ip[12:16], s[:])
		copy(ip[16:20], d[:])
		binary.BigEndian.PutUint16(ip[10:12], ^onesSum(0, ip))
	} else {
		etherType = etherIPv6
		ip = make([]byte, 40, 40+len(l4))
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:6], uint16(len(l4)))
		ip[6] = proto
		ip[7] = 64
		s, d := src.As16(), dst.As16()
		copy(ip[8:24], s[:])
		copy(ip[24:40], d[:])
	}
	ip = append(ip, l4...)

	var frame []byte
	switch w.cfg.link {
	case LinkEthernet:
		frame = make([]byte, 14, 14+len(ip))
		dm, sm := fakeMAC(dst), fakeMAC(src)
		copy(frame[0:6], dm[:])
		copy(frame[6:12], sm[:])
		binary.BigEndian.PutUint16(frame[12:14], etherType)
	case LinkSLL:
		frame = make([]byte, 16, 16+len(ip))
		binary.BigEndian.PutUint16(frame[0:2], 4) // packet type: sent by us
		binary.BigEndian.PutUint16(frame[2:4], 1) // ARPHRD_ETHER
		binary.BigEndian.PutUint16(frame[4:6], 6) // address length
		sm := fakeMAC(src)
		copy(frame[6:12], sm[:])
		binary.BigEndian.PutUint16(frame[14:16], etherType)
	case LinkSLL2:
		frame = make([]byte, 20, 20+len(ip))
		binary.BigEndian.PutUint16(frame[0:2], etherType)
		binary.BigEndian.PutUint32(frame[4:8], 1)  // interface index
		binary.BigEndian.PutUint16(frame[8:10], 1) // ARPHRD_ETHER
		frame[10] = 4                              // packet type: sent by us
		frame[11] = 6                              // address length
		sm := fakeMAC(src)
		copy(frame[12:18], sm[:])
	case LinkNull, LinkLoop:
		// BSD AF_INET is 2 everywhere; AF_INET6 differs, 24 is NetBSD/OpenBSD's
		// and the one Wireshark accepts on every BSD link type. Null stores it
		// in the writer's byte order (little-endian here), Loop in network order.
		af := uint32(2)
		if !src.Is4() {
			af = 24
		}
		frame = make([]byte, 4, 4+len(ip))
		if w.cfg.link == LinkNull {
			binary.LittleEndian.PutUint32(frame, af)
		} else {
			binary.BigEndian.PutUint32(frame, af)
		}
	}
	return w.write(ts, append(frame, ip...))
}

// fakeMAC is a locally administered MAC derived from the IP address, so that
// each host keeps one address in Wireshark's Ethernet columns.
func fakeMAC(a netip.Addr) [6]byte {
	b := a.As16()
	return [6]byte{0x02, 0x00, b[12], b[13], b[14], b[15]}
}

// onesSum adds b to sum as 16-bit big-endian words (RFC 1071).
func onesSum(sum uint32, b []byte) uint16 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

// transportChecksum is the UDP checksum over the IPv4/IPv6 pseudo-header
// and seg (whose checksum field must be zero).
func transportChecksum(src, dst netip.Addr, proto uint8, seg []byte) uint16 {
	var ph []byte
	if src.Is4() {
		s, d := src.As4(), dst.As4()
		ph = append(append(ph, s[:]...), d[:]...)
		ph = append(ph, 0, proto, byte(len(seg)>>8), byte(len(seg)))
	} else {
		s, d := src.As16(), dst.As16()
		ph = append(append(ph, s[:]...), d[:]...)
		ph = append(ph, 0, 0, byte(len(seg)>>8), byte(len(seg)), 0, 0, 0, proto)
	}
	return ^onesSum(uint32(onesSum(0, ph)), seg)
}

// WriteMSU writes one MTP3 MSU (SIO, routing label in the ITU or, with
// WithANSI, the ANSI layout, then payload) on a LinkMTP3, LinkMTP2 or
// LinkMTP2WithPHDR writer. On MTP2 it adds a 3-octet header with a rising
// FSN and no FCS, as Wireshark's MTP2 link type expects by default; with
// the pseudo-header it first adds sent=1, annex_a_used=0, link_number=0.
func (w *Writer) WriteMSU(ts time.Time, sio uint8, label Label, payload []byte) error {
	if !w.isMTP() {
		return fmt.Errorf("capture: WriteMSU: %w %d (want LinkMTP2 or LinkMTP3)", ErrLinkType, w.cfg.link)
	}
	msu := make([]byte, 0, 4+3+1+ansiLabelLen+len(payload))
	phdr := 0
	if w.cfg.link == LinkMTP2WithPHDR {
		msu = append(msu, 1, 0, 0, 0) // sent, annex_a_used, link_number
		phdr = 4
	}
	if w.cfg.link != LinkMTP3 {
		msu = append(msu, 0, 0, 0) // MTP2 header, filled in under the lock
	}
	msu = append(msu, sio)
	msu, err := appendLabel(msu, label, w.cfg.ansi)
	if err != nil {
		return fmt.Errorf("capture: WriteMSU: %w", err)
	}
	msu = append(msu, payload...)

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cfg.link != LinkMTP3 {
		h := msu[phdr:]
		li := len(h) - 3
		if li > 63 {
			li = 63 // LI saturates for long MSUs (Q.703 2.3.3)
		}
		h[0] = 0x80 | 0x7f // BIB 1, BSN 127: nothing to acknowledge
		h[1] = 0x80 | w.fsn&0x7f
		h[2] = byte(li)
		w.fsn++
	}
	return w.write(ts, msu)
}

func (w *Writer) write(ts time.Time, frame []byte) error {
	if ts.IsZero() {
		ts = time.Now()
	}
	ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(frame), Length: len(frame)}
	if err := w.pw.WritePacket(ci, frame); err != nil {
		return fmt.Errorf("capture: write: %w", err)
	}
	return nil
}
