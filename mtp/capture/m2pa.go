package capture

import "encoding/binary"

// M2PA (RFC 4165) as the Reader sees it: an SS7 link over SCTP whose User
// Data messages carry whole MTP3 MSUs.
const (
	// ppidM2PA is M2PA's SCTP payload protocol identifier (RFC 4165 section
	// 1.4.5) and portM2PA its registered port (section 1.4.6). Like M3UA, a
	// message on the port is taken as M2PA whatever its PPID says.
	ppidM2PA        = 5
	ppidM2PASwapped = 0x05000000
	portM2PA        = 3565

	// The common header (version, spare, class, type, length) and the M2PA
	// header (unused octet + 24-bit BSN, unused octet + 24-bit FSN), RFC 4165
	// sections 2.1 and 2.2: 16 octets before any data.
	m2paHeaderLen = 16
	m2paVersion   = 1
	m2paClass     = 11

	// M2PA message types (RFC 4165 section 2.1.3).
	M2PATypeUserData   = 1
	M2PATypeLinkStatus = 2
)

// isM2PA reports whether an SCTP user message belongs to M2PA by its PPID
// or its port.
func isM2PA(src, dst uint16, ppid uint32) bool {
	return ppid == ppidM2PA || ppid == ppidM2PASwapped || src == portM2PA || dst == portM2PA
}

// parseM2PA decodes one M2PA message. User Data with data is an MSU: its
// first octet is the priority octet (RFC 4165 section 2.3.1: the LI octet's
// two spare bits, priority in ANSI), then SIO and SIF. User Data without data
// is only an acknowledgement (section 4.2.2) and Link Status carries no MSU:
// both are counted, not returned (ok false).
func (r *Reader) parseM2PA(b []byte) (m Message, ok bool, err error) {
	if len(b) < m2paHeaderLen {
		return Message{}, false, truncated("M2PA header")
	}
	if b[0] != m2paVersion {
		return Message{}, false, malformedf("M2PA version %d", b[0])
	}
	if b[2] != m2paClass {
		return Message{}, false, malformedf("M2PA message class %d", b[2])
	}
	n := binary.BigEndian.Uint32(b[4:8])
	if n < m2paHeaderLen {
		return Message{}, false, malformedf("M2PA message length %d", n)
	}
	if uint64(n) > uint64(len(b)) {
		return Message{}, false, truncated("M2PA message")
	}
	switch b[3] {
	case M2PATypeUserData:
	case M2PATypeLinkStatus:
		r.stats.M2PANonMSU++
		return Message{}, false, nil
	default:
		return Message{}, false, malformedf("M2PA message type %d", b[3])
	}
	data := b[m2paHeaderLen:n]
	if len(data) == 0 {
		r.stats.M2PANonMSU++
		return Message{}, false, nil
	}
	if len(data) < 2 {
		return Message{}, false, truncated("M2PA User Data (priority octet and SIO)")
	}
	m = Message{Framing: FramingM2PA, Class: m2paClass, Type: M2PATypeUserData}
	if err := parseMSU(&m, append([]byte(nil), data[1:]...), r.cfg.ansi); err != nil {
		return Message{}, false, err
	}
	return m, true, nil
}
