package capture

import "fmt"

// Label is an MTP3 routing label.
type Label struct {
	OPC, DPC uint32
	SLS      uint8
}

// Routing label sizes (ITU Q.704 15.2, ANSI T1.111.4).
const (
	ituLabelLen  = 4
	ansiLabelLen = 7
)

// parseMSU fills m from a raw MSU (SIO + routing label + user part). msu
// must already belong to m (it is kept as m.MSU).
func parseMSU(m *Message, msu []byte, ansi bool) error {
	if len(msu) < 1 {
		return truncated("MTP3 SIO")
	}
	sio := msu[0]
	m.MSU = msu
	m.SI = sio & 0x0f
	m.MP = (sio >> 4) & 0x03
	m.NI = sio >> 6
	l := msu[1:]
	if ansi {
		if len(l) < ansiLabelLen {
			return truncated("MTP3 ANSI routing label")
		}
		// Point codes are sent member, cluster, network: least significant first.
		m.DPC = uint32(l[0]) | uint32(l[1])<<8 | uint32(l[2])<<16
		m.OPC = uint32(l[3]) | uint32(l[4])<<8 | uint32(l[5])<<16
		m.SLS = l[6]
		m.Payload = l[ansiLabelLen:]
	} else {
		if len(l) < ituLabelLen {
			return truncated("MTP3 ITU routing label")
		}
		v := uint32(l[0]) | uint32(l[1])<<8 | uint32(l[2])<<16 | uint32(l[3])<<24
		m.DPC = v & 0x3fff
		m.OPC = (v >> 14) & 0x3fff
		m.SLS = uint8(v >> 28)
		m.Payload = l[ituLabelLen:]
	}
	m.HasLabel = true
	return nil
}

// appendLabel appends the routing label in the ITU or ANSI layout.
func appendLabel(b []byte, l Label, ansi bool) ([]byte, error) {
	if ansi {
		if l.OPC > 0xffffff || l.DPC > 0xffffff {
			return b, fmt.Errorf("%w: ANSI point code above 24 bits", ErrMalformed)
		}
		return append(b, byte(l.DPC), byte(l.DPC>>8), byte(l.DPC>>16),
			byte(l.OPC), byte(l.OPC>>8), byte(l.OPC>>16), l.SLS), nil
	}
	if l.OPC > 0x3fff || l.DPC > 0x3fff || l.SLS > 0x0f {
		return b, fmt.Errorf("%w: ITU point code above 14 bits or SLS above 4 bits", ErrMalformed)
	}
	v := l.DPC | l.OPC<<14 | uint32(l.SLS)<<28
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)), nil
}

// decodeMTP2 strips an MTP2 header (Q.703: BSN/BIB, FSN/FIB, LI; Annex A
// doubles each to 2 octets) and decodes MSUs; FISUs and LSSUs are counted.
func (r *Reader) decodeMTP2(b []byte, ext bool) error {
	hlen := 3
	if ext {
		hlen = 6
	}
	if len(b) < hlen {
		return truncated("MTP2 header")
	}
	var li int
	if ext {
		li = int(b[4]) | int(b[5]&0x01)<<8
	} else {
		li = int(b[2] & 0x3f)
	}
	b = b[hlen:]
	if r.cfg.mtp2FCS {
		if len(b) < 2 {
			return truncated("MTP2 FCS")
		}
		b = b[:len(b)-2]
	}
	// LI 0 is a FISU, 1 or 2 an LSSU; it saturates at 63 for long MSUs, so
	// the length comes from the frame, not from LI.
	if li < 3 {
		r.stats.MTP2NonMSU++
		return nil
	}
	return r.decodeMSU(b, FramingMTP2)
}

// decodeMSU emits one MSU from an MTP2 or MTP3 link.
func (r *Reader) decodeMSU(b []byte, f Framing) error {
	m := Message{Framing: f}
	if err := parseMSU(&m, append([]byte(nil), b...), r.cfg.ansi); err != nil {
		return err
	}
	r.emit(m)
	return nil
}
