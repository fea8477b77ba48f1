package m3ua

import (
	"encoding/binary"
	"errors"

	"github.com/isupgw/isupgw/mtp"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// Message classes and the highest type defined in each (RFC 4666 §3.1.2).
const (
	classMGMT     = messages.MsgClassManagement
	classTransfer = messages.MsgClassTransfer
	classSSNM     = messages.MsgClassSSNM
	classASPSM    = messages.MsgClassASPSM
	classASPTM    = messages.MsgClassASPTM
	classRKM      = messages.MsgClassRKM
	maxClass      = 10
	maxType       = 8
)

// Parameter tags used here.
const (
	tagInfo        = params.InfoString
	tagRC          = params.RoutingContext
	tagDiagnostic  = params.DiagnosticInformation
	tagTrafficMode = params.TrafficModeType
	tagErrorCode   = params.ErrorCode
	tagASPID       = params.AspIdentifier
	tagAPC         = params.AffectedPointCode
	tagCorrID      = params.CorrelationID
	tagNA          = params.NetworkAppearance
	tagUserCause   = params.UserCause
	tagProtoData   = params.ProtocolData
)

const headerLen = 8

// Errors of the receive path; errCode turns them into the ERR to send.
var (
	errShort        = errors.New("m3ua: message shorter than its header")
	errVersion      = errors.New("m3ua: unsupported version")
	errLength       = errors.New("m3ua: length field disagrees with message size")
	errParamField   = errors.New("m3ua: parameter length error")
	errUnexpParam   = errors.New("m3ua: unexpected parameter")
	errMissingParam = errors.New("m3ua: missing mandatory parameter")
	errParamValue   = errors.New("m3ua: invalid parameter value")
)

// checkHeader validates the common header and returns class and type.
func checkHeader(b []byte) (class, typ uint8, err error) {
	if len(b) < headerLen {
		return 0, 0, errShort
	}
	if b[0] != 1 {
		return 0, 0, errVersion
	}
	if int(binary.BigEndian.Uint32(b[4:])) != len(b) {
		return 0, 0, errLength
	}
	return b[2], b[3], nil
}

// knownType reports whether class is supported (RKM is not) and typ exists
// in it, which decides between ERR 0x03 and 0x04.
func knownType(class, typ uint8) (classOK, typeOK bool) {
	switch class {
	case classMGMT:
		return true, typ <= 1
	case classTransfer:
		return true, typ == 1
	case classSSNM:
		return true, typ >= 1 && typ <= 6
	case classASPSM:
		return true, typ >= 1 && typ <= 6
	case classASPTM:
		return true, typ >= 1 && typ <= 4
	}
	return false, false
}

// dataFields is a decoded DATA message; Payload aliases the input.
type dataFields struct {
	mtp.Label
	Payload []byte
	RC      uint32
	HasRC   bool
	NA      uint32
	HasNA   bool
}

// decodeData parses a DATA message whose header is already checked. It
// accepts what messages.Data accepts (NA, RC, Protocol Data, Correlation
// ID; a missing final pad) and requires Protocol Data.
func decodeData(b []byte, d *dataFields) error {
	p := b[headerLen:]
	havePD := false
	for len(p) > 0 {
		if len(p) < 4 {
			return errParamField
		}
		tag := binary.BigEndian.Uint16(p)
		l := int(binary.BigEndian.Uint16(p[2:]))
		if l < 4 || l > len(p) {
			return errParamField
		}
		v := p[4:l]
		switch tag {
		case tagNA:
			if len(v) != 4 {
				return errParamField
			}
			d.NA, d.HasNA = binary.BigEndian.Uint32(v), true
		case tagRC:
			if len(v) < 4 || len(v)%4 != 0 {
				return errParamField
			}
			d.RC, d.HasRC = binary.BigEndian.Uint32(v), true
		case tagProtoData:
			if len(v) < 12 {
				return errParamField
			}
			d.OPC = mtp.PointCode(binary.BigEndian.Uint32(v))
			d.DPC = mtp.PointCode(binary.BigEndian.Uint32(v[4:]))
			d.SI, d.NI, d.MP, d.SLS = v[8], v[9], v[10], v[11]
			d.Payload = v[12:]
			havePD = true
		case tagCorrID:
		default:
			return errUnexpParam
		}
		padded := (l + 3) &^ 3
		if padded > len(p) {
			break // tolerate a missing final pad, as messages does
		}
		p = p[padded:]
	}
	if !havePD {
		return errMissingParam
	}
	return nil
}

// dataLen is the encoded size of a DATA message.
func dataLen(payload int, rc, na bool) int {
	n := headerLen + 4 + 12 + (payload+3)&^3
	if rc {
		n += 8
	}
	if na {
		n += 8
	}
	return n
}

// appendData encodes DATA (NA, RC, Protocol Data in the order RFC 4666
// §3.3.1 lists) onto dst.
func appendData(dst []byte, m *mtp.Message, rc uint32, hasRC bool, na uint32, hasNA bool) []byte {
	n := dataLen(len(m.Payload), hasRC, hasNA)
	dst = append(dst, 1, 0, classTransfer, messages.MsgTypePayloadData)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	if hasNA {
		dst = binary.BigEndian.AppendUint16(dst, tagNA)
		dst = binary.BigEndian.AppendUint16(dst, 8)
		dst = binary.BigEndian.AppendUint32(dst, na)
	}
	if hasRC {
		dst = binary.BigEndian.AppendUint16(dst, tagRC)
		dst = binary.BigEndian.AppendUint16(dst, 8)
		dst = binary.BigEndian.AppendUint32(dst, rc)
	}
	dst = binary.BigEndian.AppendUint16(dst, tagProtoData)
	dst = binary.BigEndian.AppendUint16(dst, uint16(16+len(m.Payload)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(m.OPC))
	dst = binary.BigEndian.AppendUint32(dst, uint32(m.DPC))
	dst = append(dst, m.SI, m.NI, m.MP, m.SLS)
	dst = append(dst, m.Payload...)
	for i := len(m.Payload); i%4 != 0; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// u32 reads a parameter holding one 32-bit value; the messages accessors
// index without checking length.
func u32(p *params.Param) (uint32, bool) {
	if p == nil || len(p.Data) < 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(p.Data), true
}

// u32s reads a parameter holding a list of 32-bit values.
func u32s(p *params.Param) ([]uint32, bool) {
	if p == nil || len(p.Data) < 4 || len(p.Data)%4 != 0 {
		return nil, false
	}
	out := make([]uint32, len(p.Data)/4)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(p.Data[4*i:])
	}
	return out, true
}

// marshal encodes a messages value; constructors give consistent lengths,
// so an error here is a programming error and the message is dropped.
func marshal(m messages.M3UA) []byte {
	b, err := m.MarshalBinary()
	if err != nil {
		return nil
	}
	return b
}

// paramErr maps a messages or params decode error to our errors.
func paramErr(err error) error {
	if errors.Is(err, messages.ErrInvalidParameter) {
		return errUnexpParam
	}
	return errParamField
}
