package mtp3

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/isupgw/isupgw/mtp"
)

// Variant is the MTP3 flavour: ITU-T Q.704 (14-bit point codes, 4-bit SLS)
// or ANSI T1.111.4 (24-bit point codes, 5- or 8-bit SLS).
type Variant int

// Variants.
const (
	ITU Variant = iota
	ANSI
)

func (v Variant) String() string {
	if v == ANSI {
		return "ansi"
	}
	return "itu"
}

// LabelLen is the routing label's length: 4 octets ITU, 7 ANSI (Q.704 §2.2,
// T1.111.4 §2.2).
func (v Variant) LabelLen() int {
	if v == ANSI {
		return 7
	}
	return 4
}

func (v Variant) pcLen() int {
	if v == ANSI {
		return 3
	}
	return 2
}

// Service indicators (Q.704 §14.2.1).
const (
	SISNM     = 0 // signalling network management
	SISLT     = 1 // signalling network testing and maintenance (Q.707)
	SISLTANSI = 2 // ANSI: special (SLTM/SLTA of T1.111.7 use SI 2 in some networks)
)

// Errors.
var (
	ErrMalformed = errors.New("mtp3: malformed message")
	ErrShort     = fmt.Errorf("%w: too short", ErrMalformed)
	ErrUnknown   = fmt.Errorf("%w: unknown heading code", ErrMalformed)
)

// DecodeMSU splits an MSU (SIO, routing label, SIF) into the label and the
// user part. Payload aliases b. The SIO gives SI (bits 1-4), NI (bits 7-8)
// and, for ANSI, the message priority (bits 5-6) (Q.704 §14.2).
func DecodeMSU(v Variant, b []byte) (mtp.Label, []byte, error) {
	var l mtp.Label
	if len(b) < 1+v.LabelLen() {
		return l, nil, fmt.Errorf("%w: MSU of %d octets", ErrShort, len(b))
	}
	sio := b[0]
	l.SI, l.NI = sio&0x0F, sio>>6
	if v == ANSI {
		l.MP = (sio >> 4) & 3
		l.DPC = mtp.PointCode(uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16)
		l.OPC = mtp.PointCode(uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16)
		l.SLS = b[7]
		return l, b[8:], nil
	}
	w := binary.LittleEndian.Uint32(b[1:5])
	l.DPC = mtp.PointCode(w & 0x3FFF)
	l.OPC = mtp.PointCode((w >> 14) & 0x3FFF)
	l.SLS = uint8(w >> 28)
	return l, b[5:], nil
}

// AppendMSU encodes SIO, label and payload after dst.
func AppendMSU(v Variant, dst []byte, l mtp.Label, payload []byte) []byte {
	sio := l.SI&0x0F | (l.NI&3)<<6
	if v == ANSI {
		sio |= (l.MP & 3) << 4
		dst = append(dst, sio,
			byte(l.DPC), byte(l.DPC>>8), byte(l.DPC>>16),
			byte(l.OPC), byte(l.OPC>>8), byte(l.OPC>>16), l.SLS)
	} else {
		w := uint32(l.DPC)&0x3FFF | (uint32(l.OPC)&0x3FFF)<<14 | uint32(l.SLS&0x0F)<<28
		dst = append(dst, sio)
		dst = binary.LittleEndian.AppendUint32(dst, w)
	}
	return append(dst, payload...)
}

// Heading codes of signalling network management (Q.704 §15.2) and of the
// signalling link test (Q.707 §5.3), as H0 | H1<<4.
const (
	COO = 0x11 // changeover order
	COA = 0x21 // changeover acknowledgement
	XCO = 0x31 // extended changeover order (24-bit FSN, Q.2210 / RFC 4165)
	XCA = 0x41 // extended changeover acknowledgement
	CBD = 0x51 // changeback declaration
	CBA = 0x61 // changeback acknowledgement
	ECO = 0x12 // emergency changeover order
	ECA = 0x22 // emergency changeover acknowledgement
	RCT = 0x13 // signalling-route-set-congestion-test
	TFC = 0x23 // transfer controlled
	TFP = 0x14 // transfer prohibited
	TFR = 0x34 // transfer restricted (national option)
	TFA = 0x54 // transfer allowed
	RST = 0x15 // signalling-route-set-test, prohibited destination
	RSR = 0x25 // signalling-route-set-test, restricted destination
	TRA = 0x17 // traffic restart allowed
	TRW = 0x27 // traffic restart waiting (ANSI)
	UPU = 0x1A // user part unavailable

	SLTM = 0x11 // signalling link test message (SI 1)
	SLTA = 0x21 // signalling link test acknowledgement
)

var snmNames = map[uint8]string{COO: "COO", COA: "COA", XCO: "XCO", XCA: "XCA", CBD: "CBD", CBA: "CBA",
	ECO: "ECO", ECA: "ECA", RCT: "RCT", TFC: "TFC", TFP: "TFP", TFR: "TFR", TFA: "TFA", RST: "RST",
	RSR: "RSR", TRA: "TRA", TRW: "TRW", UPU: "UPU"}

// SNM is a signalling network management message (SI 0), the fields after
// the routing label (Q.704 §15; T1.111.4 §15 for ANSI's SLC fields).
type SNM struct {
	H0H1 uint8
	// FSN: COO/COA (7 bits) and XCO/XCA (24 bits), the last FSN accepted.
	FSN uint32
	// SLC: ANSI carries the link's code in COO/COA/CBD/CBA/ECO/ECA; ITU uses
	// the label's SLS (Q.704 §15.4.2) and leaves this zero.
	SLC uint8
	// CBC: the changeback code of CBD/CBA.
	CBC uint8
	// Dest: the destination of TFC/TFP/TFR/TFA/RST/RSR/UPU.
	Dest mtp.PointCode
	// Status: TFC's congestion status (0..3; ITU national option, ANSI).
	Status uint8
	// UserPart and Cause of UPU (Q.704 §15.17: cause 0 unknown, 1 unequipped
	// remote user, 2 inaccessible remote user).
	UserPart, Cause uint8
}

func (s SNM) String() string {
	n := snmNames[s.H0H1]
	if n == "" {
		n = fmt.Sprintf("SNM(%#02x)", s.H0H1)
	}
	return n
}

// DecodeSNM parses the SIF of an SI 0 message after the label.
func DecodeSNM(v Variant, b []byte) (SNM, error) {
	var s SNM
	if len(b) < 1 {
		return s, ErrShort
	}
	s.H0H1 = b[0]
	b = b[1:]
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("%w: %v needs %d octets after the heading, has %d", ErrShort, s, n, len(b))
		}
		return nil
	}
	switch s.H0H1 {
	case COO, COA:
		if v == ANSI { // SLC (4 bits), FSN (7 bits), spare (5 bits)
			if err := need(2); err != nil {
				return s, err
			}
			w := binary.LittleEndian.Uint16(b)
			s.SLC, s.FSN = uint8(w&0x0F), uint32(w>>4)&0x7F
		} else {
			if err := need(1); err != nil {
				return s, err
			}
			s.FSN = uint32(b[0] & 0x7F)
		}
	case XCO, XCA:
		if v == ANSI { // SLC (4 bits) + spare (4), then the 24-bit FSN
			if err := need(4); err != nil {
				return s, err
			}
			s.SLC = b[0] & 0x0F
			b = b[1:]
		} else if err := need(3); err != nil {
			return s, err
		}
		s.FSN = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
	case CBD, CBA:
		if v == ANSI { // SLC (4), CBC (8), spare (4)
			if err := need(2); err != nil {
				return s, err
			}
			w := binary.LittleEndian.Uint16(b)
			s.SLC, s.CBC = uint8(w&0x0F), uint8(w>>4)
		} else {
			if err := need(1); err != nil {
				return s, err
			}
			s.CBC = b[0]
		}
	case ECO, ECA:
		if v == ANSI {
			if err := need(1); err != nil {
				return s, err
			}
			s.SLC = b[0] & 0x0F
		}
	case TFC, TFP, TFR, TFA, RST, RSR, UPU:
		n := v.pcLen()
		if err := need(n); err != nil {
			return s, err
		}
		if v == ANSI {
			s.Dest = mtp.PointCode(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16)
			if s.H0H1 == TFC {
				if err := need(4); err != nil {
					return s, err
				}
				s.Status = b[3] & 3
			}
		} else {
			w := binary.LittleEndian.Uint16(b)
			s.Dest = mtp.PointCode(w & 0x3FFF)
			if s.H0H1 == TFC {
				s.Status = uint8(w >> 14)
			}
		}
		if s.H0H1 == UPU {
			if err := need(n + 1); err != nil {
				return s, err
			}
			s.UserPart, s.Cause = b[n]&0x0F, b[n]>>4
		}
	case TRA, TRW:
	default:
		return s, fmt.Errorf("%w: SNM %#02x", ErrUnknown, s.H0H1)
	}
	return s, nil
}

// Append encodes the SNM message after dst (the part after the label).
func (s SNM) Append(v Variant, dst []byte) []byte {
	dst = append(dst, s.H0H1)
	switch s.H0H1 {
	case COO, COA:
		if v == ANSI {
			return binary.LittleEndian.AppendUint16(dst, uint16(s.SLC&0x0F)|uint16(s.FSN&0x7F)<<4)
		}
		return append(dst, byte(s.FSN&0x7F))
	case XCO, XCA:
		if v == ANSI {
			dst = append(dst, s.SLC&0x0F)
		}
		return append(dst, byte(s.FSN), byte(s.FSN>>8), byte(s.FSN>>16))
	case CBD, CBA:
		if v == ANSI {
			return binary.LittleEndian.AppendUint16(dst, uint16(s.SLC&0x0F)|uint16(s.CBC)<<4)
		}
		return append(dst, s.CBC)
	case ECO, ECA:
		if v == ANSI {
			return append(dst, s.SLC&0x0F)
		}
		return dst
	case TFC, TFP, TFR, TFA, RST, RSR, UPU:
		if v == ANSI {
			dst = append(dst, byte(s.Dest), byte(s.Dest>>8), byte(s.Dest>>16))
			if s.H0H1 == TFC {
				dst = append(dst, s.Status&3)
			}
		} else {
			w := uint16(s.Dest & 0x3FFF)
			if s.H0H1 == TFC {
				w |= uint16(s.Status&3) << 14
			}
			dst = binary.LittleEndian.AppendUint16(dst, w)
		}
		if s.H0H1 == UPU {
			dst = append(dst, s.UserPart&0x0F|s.Cause<<4)
		}
	}
	return dst
}

// SLT is a signalling link test message, SLTM or SLTA (Q.707 §5.3): after
// the heading, the test pattern's length in the high four bits (the low four
// are spare in ITU and carry the SLC in ANSI), then the pattern.
type SLT struct {
	H0H1    uint8
	SLC     uint8 // ANSI only
	Pattern []byte
}

// DecodeSLT parses the SIF of an SI 1 message after the label. Pattern
// aliases b.
func DecodeSLT(v Variant, b []byte) (SLT, error) {
	var t SLT
	if len(b) < 2 {
		return t, ErrShort
	}
	t.H0H1 = b[0]
	if t.H0H1 != SLTM && t.H0H1 != SLTA {
		return t, fmt.Errorf("%w: test message %#02x", ErrUnknown, t.H0H1)
	}
	if v == ANSI {
		t.SLC = b[1] & 0x0F
	}
	n := int(b[1] >> 4)
	if len(b) < 2+n {
		return t, fmt.Errorf("%w: test pattern of %d octets, %d present", ErrShort, n, len(b)-2)
	}
	t.Pattern = b[2 : 2+n]
	return t, nil
}

// Append encodes the test message after dst. The pattern is at most 15
// octets.
func (t SLT) Append(v Variant, dst []byte) []byte {
	p := t.Pattern
	if len(p) > 15 {
		p = p[:15]
	}
	o := byte(len(p)) << 4
	if v == ANSI {
		o |= t.SLC & 0x0F
	}
	dst = append(dst, t.H0H1, o)
	return append(dst, p...)
}
