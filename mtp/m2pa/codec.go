package m2pa

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Protocol constants (RFC 4165 §2.1, §7).
const (
	Version   = 1  // §2.1.1
	Class     = 11 // §2.1.3: M2PA messages
	PPID      = 5  // §7.2: SCTP payload protocol identifier
	Port      = 3565
	HeaderLen = 16 // common header (8) + M2PA header (8), §2.1 and §2.2

	TypeUserData   = 1 // §2.1.4
	TypeLinkStatus = 2

	// SeqMask keeps the 24 bits of BSN and FSN (§2.2).
	SeqMask = 0xFFFFFF
	// SeqInitial is the FSN and BSN value before any User Data message with
	// data has been sent or received (§4.1.3): the first one carries 0.
	SeqInitial = 0xFFFFFF

	// MaxMessage bounds what Decode accepts: an MTP3 MSU of 272 octets of
	// SIF is far less (RFC 4165 §2.3.1 allows larger MSUs, up to this).
	MaxMessage = 4096
)

// State is a Link Status value (RFC 4165 §2.3.2).
type State uint32

// Link Status values.
const (
	StateAlignment          State = 1
	StateProvingNormal      State = 2
	StateProvingEmergency   State = 3
	StateReady              State = 4
	StateProcessorOutage    State = 5
	StateProcessorRecovered State = 6
	StateBusy               State = 7
	StateBusyEnded          State = 8
	StateOutOfService       State = 9
)

var stateNames = [...]string{"", "Alignment", "Proving Normal", "Proving Emergency", "Ready",
	"Processor Outage", "Processor Recovered", "Busy", "Busy Ended", "Out of Service"}

func (s State) String() string {
	if s >= 1 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint32(s))
}

// Decoding errors; every one wraps ErrMalformed.
var (
	ErrMalformed = errors.New("m2pa: malformed message")
	ErrVersion   = fmt.Errorf("%w: version not 1", ErrMalformed)
	ErrClass     = fmt.Errorf("%w: message class not M2PA (11)", ErrMalformed)
	ErrType      = fmt.Errorf("%w: unknown message type", ErrMalformed)
	ErrLength    = fmt.Errorf("%w: length field disagrees with the message", ErrMalformed)
	ErrState     = fmt.Errorf("%w: unknown link status", ErrMalformed)
	ErrTooLong   = fmt.Errorf("%w: longer than %d octets", ErrMalformed, MaxMessage)
)

// Message is one M2PA message.
//
// For User Data, Data is the MTP3 message (SIO and SIF) and Priority the two
// PRI bits of the octet before it (RFC 4165 §2.3.1, used in ANSI networks);
// an empty User Data message (no octet after the header) has Data nil and
// serves as an acknowledgement. For Link Status, State is set and Filler is
// whatever padding followed it (proving messages may carry some).
type Message struct {
	Type     uint8
	BSN, FSN uint32
	State    State
	Filler   []byte
	Priority uint8
	Data     []byte
}

// Decode parses one message. Data and Filler alias b.
func Decode(b []byte) (Message, error) {
	var m Message
	if len(b) < HeaderLen {
		return m, fmt.Errorf("%w: %d octets, header needs %d", ErrMalformed, len(b), HeaderLen)
	}
	if len(b) > MaxMessage {
		return m, ErrTooLong
	}
	if b[0] != Version {
		return m, ErrVersion
	}
	if b[2] != Class {
		return m, ErrClass
	}
	if n := binary.BigEndian.Uint32(b[4:8]); n != uint32(len(b)) {
		return m, fmt.Errorf("%w (length %d, got %d octets)", ErrLength, n, len(b))
	}
	m.Type = b[3]
	m.BSN = binary.BigEndian.Uint32(b[8:12]) & SeqMask
	m.FSN = binary.BigEndian.Uint32(b[12:16]) & SeqMask
	body := b[HeaderLen:]
	switch m.Type {
	case TypeUserData:
		if len(body) == 0 {
			return m, nil
		}
		if len(body) < 2 { // the PRI octet, then at least the SIO
			return m, fmt.Errorf("%w: user data without an SIO", ErrMalformed)
		}
		m.Priority = body[0] >> 6
		m.Data = body[1:]
	case TypeLinkStatus:
		if len(body) < 4 {
			return m, fmt.Errorf("%w: link status without a state", ErrMalformed)
		}
		m.State = State(binary.BigEndian.Uint32(body[:4]))
		if m.State < StateAlignment || m.State > StateOutOfService {
			return m, fmt.Errorf("%w (%d)", ErrState, uint32(m.State))
		}
		if len(body) > 4 {
			m.Filler = body[4:]
		}
	default:
		return m, fmt.Errorf("%w (%d)", ErrType, m.Type)
	}
	return m, nil
}

// Append encodes m after dst.
func (m *Message) Append(dst []byte) []byte {
	n := HeaderLen
	switch m.Type {
	case TypeUserData:
		if m.Data != nil {
			n += 1 + len(m.Data)
		}
	case TypeLinkStatus:
		n += 4 + len(m.Filler)
	}
	dst = append(dst, Version, 0, Class, m.Type)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = binary.BigEndian.AppendUint32(dst, m.BSN&SeqMask)
	dst = binary.BigEndian.AppendUint32(dst, m.FSN&SeqMask)
	switch m.Type {
	case TypeUserData:
		if m.Data != nil {
			dst = append(dst, m.Priority<<6)
			dst = append(dst, m.Data...)
		}
	case TypeLinkStatus:
		dst = binary.BigEndian.AppendUint32(dst, uint32(m.State))
		dst = append(dst, m.Filler...)
	}
	return dst
}

// seqAdd is a+d modulo 2^24.
func seqAdd(a, d uint32) uint32 { return (a + d) & SeqMask }

// seqDist is how far b is ahead of a, modulo 2^24.
func seqDist(a, b uint32) uint32 { return (b - a) & SeqMask }
