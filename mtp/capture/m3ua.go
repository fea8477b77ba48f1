package capture

import (
	"encoding/binary"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// M3UA parameter tags the Reader interprets.
const (
	tagProtocolData = 0x0210 // RFC 4666: OPC DPC SI NI MP SLS + user data
	// Draft 6 (as in Wireshark's "Internet Draft version 6"): Protocol Data 1
	// holds an MTP3 MSU, Protocol Data 2 an LI octet and then the MSU. These
	// tags are unassigned in RFC 4666, so their presence identifies the draft.
	tagDraftProtocolData1 = 0x0002
	tagDraftProtocolData2 = 0x0003

	m3uaHeaderLen     = 8
	protocolDataFixed = 12
)

// parseM3UA decodes one M3UA message. The returned Message owns a copy of
// the bytes; b is not retained.
func parseM3UA(b []byte, ansi bool) (Message, error) {
	if len(b) < m3uaHeaderLen {
		return Message{}, truncated("M3UA header")
	}
	if b[0] != 1 {
		return Message{}, malformedf("M3UA version %d", b[0])
	}
	n := binary.BigEndian.Uint32(b[4:8])
	if n < m3uaHeaderLen {
		return Message{}, malformedf("M3UA message length %d", n)
	}
	if uint64(n) > uint64(len(b)) {
		return Message{}, truncated("M3UA message")
	}
	raw := append([]byte(nil), b[:n]...)
	m := Message{Framing: FramingM3UA, Class: raw[2], Type: raw[3], M3UA: raw}
	if m.Class != ClassTransfer || m.Type != TypeData {
		return m, nil
	}
	for off := m3uaHeaderLen; off < len(raw); {
		if len(raw)-off < 4 {
			return Message{}, truncated("M3UA parameter header")
		}
		tag := binary.BigEndian.Uint16(raw[off : off+2])
		plen := int(binary.BigEndian.Uint16(raw[off+2 : off+4]))
		if plen < 4 {
			return Message{}, malformedf("M3UA parameter 0x%04x length %d", tag, plen)
		}
		if plen > len(raw)-off {
			return Message{}, truncated("M3UA parameter")
		}
		v := raw[off+4 : off+plen]
		switch tag {
		case tagProtocolData:
			if len(v) < protocolDataFixed {
				return Message{}, truncated("M3UA Protocol Data")
			}
			m.HasLabel = true
			m.OPC = binary.BigEndian.Uint32(v[0:4])
			m.DPC = binary.BigEndian.Uint32(v[4:8])
			m.SI, m.NI, m.MP, m.SLS = v[8], v[9], v[10], v[11]
			m.Payload = v[protocolDataFixed:]
			return m, nil
		case tagDraftProtocolData1, tagDraftProtocolData2:
			if tag == tagDraftProtocolData2 {
				if len(v) < 1 {
					return Message{}, truncated("M3UA Protocol Data 2")
				}
				v = v[1:] // LI octet
			}
			m.Framing = FramingM3UADraft
			if err := parseMSU(&m, v, ansi); err != nil {
				return Message{}, err
			}
			return m, nil
		}
		off += (plen + 3) &^ 3
	}
	return Message{}, malformed("M3UA DATA without Protocol Data")
}

// DataMessage builds an RFC 4666 M3UA DATA message carrying payload (an MTP3
// user part; for ISUP starting with the CIC), with a Routing Context
// parameter when rc is given.
func DataMessage(opc, dpc uint32, si, ni, mp, sls uint8, payload []byte, rc ...uint32) []byte {
	var rcp *params.Param
	if len(rc) > 0 {
		rcp = params.NewRoutingContext(rc...)
	}
	d := messages.NewData(nil, rcp, params.NewProtocolData(opc, dpc, si, ni, mp, sls, payload), nil)
	b, err := d.MarshalBinary()
	if err != nil {
		// MarshalBinary fails only when its buffer is short, and it sizes
		// the buffer itself.
		panic("capture: go-m3ua DATA marshal: " + err.Error())
	}
	return b
}
