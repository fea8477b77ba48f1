package capture

import (
	"encoding/binary"
	"net/netip"
)

// SCTP chunk types and DATA/I-DATA flags (RFC 9260 section 3.3.1, RFC 8260).
const (
	chunkData  = 0
	chunkIData = 64

	flagEnd       = 0x01
	flagBegin     = 0x02
	flagUnordered = 0x04

	sctpCommonHeaderLen = 12
	dataHeaderLen       = 16
	idataHeaderLen      = 20

	// M3UA's PPID (IANA) and port. Some stacks send the PPID in host byte
	// order (0x03000000) or leave it 0, so like Wireshark the Reader also
	// takes anything on port 2905 as M3UA.
	ppidM3UA        = 3
	ppidM3UASwapped = 0x03000000
	portM3UA        = 2905
)

// decodeSCTP walks the chunks of one SCTP packet. DATA chunks before a
// malformed one are still delivered.
func (r *Reader) decodeSCTP(srcIP, dstIP netip.Addr, b []byte) error {
	if len(b) < sctpCommonHeaderLen {
		return truncated("SCTP common header")
	}
	if sctpChecksum(b) != storedChecksum(b) {
		if adler32OK(b) {
			r.stats.Adler32++
		} else {
			r.stats.BadCRC++
			if r.cfg.verifyCRC {
				return nil
			}
		}
	}
	src := netip.AddrPortFrom(srcIP, binary.BigEndian.Uint16(b[0:2]))
	dst := netip.AddrPortFrom(dstIP, binary.BigEndian.Uint16(b[2:4]))
	for off := sctpCommonHeaderLen; off < len(b); {
		if len(b)-off < 4 {
			return truncated("SCTP chunk header")
		}
		typ, flags := b[off], b[off+1]
		clen := int(binary.BigEndian.Uint16(b[off+2 : off+4]))
		if clen < 4 {
			return malformedf("SCTP chunk length %d", clen)
		}
		if clen > len(b)-off {
			return truncated("SCTP chunk")
		}
		c := b[off : off+clen]
		switch typ {
		case chunkData:
			if clen < dataHeaderLen {
				return malformedf("SCTP DATA chunk length %d", clen)
			}
			d := dataChunk{
				flags:  flags,
				tsn:    binary.BigEndian.Uint32(c[4:8]),
				stream: binary.BigEndian.Uint16(c[8:10]),
				ppid:   binary.BigEndian.Uint32(c[12:16]),
				data:   c[dataHeaderLen:],
			}
			if err := r.dataChunk(src, dst, d); err != nil {
				return err
			}
		case chunkIData:
			if clen < idataHeaderLen {
				return malformedf("SCTP I-DATA chunk length %d", clen)
			}
			d := dataChunk{
				idata:  true,
				flags:  flags,
				tsn:    binary.BigEndian.Uint32(c[4:8]),
				stream: binary.BigEndian.Uint16(c[8:10]),
				mid:    binary.BigEndian.Uint32(c[12:16]),
				data:   c[idataHeaderLen:],
			}
			// The last word is the PPID in the first fragment, the FSN after.
			if flags&flagBegin != 0 {
				d.ppid = binary.BigEndian.Uint32(c[16:20])
			} else {
				d.fsn = binary.BigEndian.Uint32(c[16:20])
			}
			if err := r.dataChunk(src, dst, d); err != nil {
				return err
			}
		}
		// Chunks are padded to 4 octets; the last one's padding may be cut.
		off += (clen + 3) &^ 3
	}
	return nil
}

type dataChunk struct {
	idata  bool
	flags  uint8
	tsn    uint32
	stream uint16
	ppid   uint32
	mid    uint32 // I-DATA message identifier
	fsn    uint32 // I-DATA fragment sequence number (0 for the first)
	data   []byte // aliases the frame; copy before keeping
}

// dataChunk reassembles fragments and passes whole user messages on.
func (r *Reader) dataChunk(src, dst netip.AddrPort, d dataChunk) error {
	if d.flags&(flagBegin|flagEnd) == flagBegin|flagEnd {
		return r.userMessage(src, dst, d.stream, d.ppid, d.data)
	}
	msg, ppid, ok := r.asm.add(src, dst, d, &r.stats)
	if !ok {
		return nil
	}
	return r.userMessage(src, dst, d.stream, ppid, msg)
}

// userMessage decodes one complete SCTP user message. data may alias the
// frame; the M3UA decoder copies what it keeps.
func (r *Reader) userMessage(src, dst netip.AddrPort, stream uint16, ppid uint32, data []byte) error {
	if isM2PA(src.Port(), dst.Port(), ppid) {
		m, ok, err := r.parseM2PA(data)
		if err != nil || !ok {
			return err
		}
		m.Src, m.Dst, m.Stream, m.PPID = src, dst, stream, ppid
		r.emit(m)
		return nil
	}
	if ppid != ppidM3UA && ppid != ppidM3UASwapped && src.Port() != portM3UA && dst.Port() != portM3UA {
		r.stats.NonM3UA++
		return nil
	}
	m, err := parseM3UA(data, r.cfg.ansi)
	if err != nil {
		return err
	}
	m.Src, m.Dst, m.Stream, m.PPID = src, dst, stream, ppid
	r.emit(m)
	return nil
}

// asmKey identifies one message being reassembled. DATA fragments of one
// message have consecutive TSNs on one stream; I-DATA ones share a MID.
type asmKey struct {
	src, dst  netip.AddrPort
	stream    uint16
	idata     bool
	unordered bool
	mid       uint32
}

type asmState struct {
	next uint32 // expected TSN (DATA) or FSN (I-DATA)
	ppid uint32
	buf  []byte
}

// reassembler holds partial SCTP user messages, bounded in size and count so
// that hostile captures cannot exhaust memory.
type reassembler struct {
	max     int
	pending map[asmKey]*asmState
}

const maxPendingMessages = 4096

func (a *reassembler) init(max int) {
	a.max = max
	a.pending = make(map[asmKey]*asmState)
}

// add takes one fragment; it returns the whole message when d completes it.
func (a *reassembler) add(src, dst netip.AddrPort, d dataChunk, st *Stats) ([]byte, uint32, bool) {
	k := asmKey{src: src, dst: dst, stream: d.stream, idata: d.idata, unordered: d.flags&flagUnordered != 0}
	if d.idata {
		k.mid = d.mid
	}
	seq := d.tsn
	if d.idata {
		seq = d.fsn
	}
	if d.flags&flagBegin != 0 {
		if len(d.data) > a.max {
			st.ReasmDrops++
			return nil, 0, false
		}
		if _, ok := a.pending[k]; ok {
			st.ReasmDrops++ // an unfinished message is abandoned
		} else if len(a.pending) >= maxPendingMessages {
			st.ReasmDrops += len(a.pending)
			clear(a.pending)
		}
		a.pending[k] = &asmState{next: seq + 1, ppid: d.ppid, buf: append([]byte(nil), d.data...)}
		return nil, 0, false
	}
	s, ok := a.pending[k]
	if !ok || s.next != seq || len(s.buf)+len(d.data) > a.max {
		st.ReasmDrops++
		if ok {
			delete(a.pending, k)
		}
		return nil, 0, false
	}
	s.buf = append(s.buf, d.data...)
	s.next++
	if d.flags&flagEnd == 0 {
		return nil, 0, false
	}
	delete(a.pending, k)
	return s.buf, s.ppid, true
}
