package isup

import "fmt"

// Message is a decoded or to-be-encoded ISUP message. The concrete types are the
// structs of this package (*InitialAddress, *Release, ..., *Generic, *Unknown).
type Message interface {
	MessageType() MessageType
	CircuitID() uint16
	SetCircuitID(cic uint16)
	// layout describes the message body to the codec.
	layout(c *codec)
}

// Circuit is embedded in every message: the circuit identification code.
type Circuit struct {
	CIC uint16
}

func (c *Circuit) CircuitID() uint16       { return c.CIC }
func (c *Circuit) SetCircuitID(cic uint16) { c.CIC = cic }

// headerLen is CIC (2) + message type (1); the same in both variants.
const headerLen = 3

// Peek reads only the CIC and the message type: the cheap look that lets a congested
// gateway shed IAMs without decoding them.
func Peek(b []byte, v Variant) (cic uint16, t MessageType, err error) {
	if len(b) < headerLen {
		return 0, 0, &Error{Offset: len(b), Err: ErrTruncated}
	}
	cic = (uint16(b[0]) | uint16(b[1])<<8) & v.cicMask()
	return cic, MessageType(b[2]), nil
}

// AcceptFunc decides from the header alone whether a message is worth decoding.
// Returning a non-nil error stops the decode; Decoder.Decode wraps it with
// ErrRejected.
type AcceptFunc func(cic uint16, t MessageType) error

// Decoder decodes messages of one variant, with an optional accept hook.
type Decoder struct {
	Variant Variant
	Accept  AcceptFunc
}

// Decode decodes one message; see the package function Decode.
func (d Decoder) Decode(b []byte) (Message, error) {
	cic, t, err := Peek(b, d.Variant)
	if err != nil {
		return nil, err
	}
	if d.Accept != nil {
		if err := d.Accept(cic, t); err != nil {
			return nil, &Error{Type: t, Offset: 2, Err: fmt.Errorf("%w: %w", ErrRejected, err)}
		}
	}
	m := newMessage(t, d.Variant)
	m.SetCircuitID(cic)
	c := getCodec(decoding, d.Variant, t, b)
	m.layout(c)
	err = c.err
	putCodec(c)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Decode decodes one ISUP message (CIC first, as carried in M3UA protocol data or
// after the MTP3 routing label). The result aliases b.
func Decode(b []byte, v Variant) (Message, error) {
	return Decoder{Variant: v}.Decode(b)
}

// MarshalLen returns the encoded size of m in variant v, or -1 if m cannot be encoded
// (Marshal then says why).
func MarshalLen(m Message, v Variant) int {
	n, err := size(m, v)
	if err != nil {
		return -1
	}
	return n
}

func size(m Message, v Variant) (int, error) {
	c := getCodec(sizing, v, m.MessageType(), nil)
	m.layout(c)
	n, err := c.off, c.err
	putCodec(c)
	return n, err
}

// MarshalTo encodes m into b and returns the number of octets written; b too short
// gives ErrShortBuffer. It does not allocate.
func MarshalTo(b []byte, m Message, v Variant) (int, error) {
	t := m.MessageType()
	if len(b) < headerLen {
		return 0, &Error{Type: t, Offset: len(b), Err: ErrShortBuffer}
	}
	cic := m.CircuitID()
	if cic > v.cicMask() {
		return 0, &Error{Type: t, Offset: 0, Err: ErrCICRange}
	}
	b[0], b[1], b[2] = byte(cic), byte(cic>>8), byte(t)
	c := getCodec(encoding, v, t, b)
	m.layout(c)
	n, err := c.off, c.err
	putCodec(c)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Marshal encodes m into a new slice.
func Marshal(m Message, v Variant) ([]byte, error) {
	n, err := size(m, v)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := MarshalTo(b, m, v); err != nil {
		return nil, err
	}
	return b, nil
}

// OptionalOf returns a pointer to the optional part of any message whose type
// has one, or nil. Through it the compatibility procedures can drop a parameter.
func OptionalOf(m Message) *Optional {
	switch x := m.(type) {
	case *InitialAddress:
		return &x.Optional
	case *SubsequentAddress:
		return &x.Optional
	case *AddressComplete:
		return &x.Optional
	case *Connect:
		return &x.Optional
	case *Answer:
		return &x.Optional
	case *CallProgress:
		return &x.Optional
	case *Release:
		return &x.Optional
	case *ReleaseComplete:
		return &x.Optional
	case *SuspendResume:
		return &x.Optional
	case *InformationRequest:
		return &x.Optional
	case *Information:
		return &x.Optional
	case *Confusion:
		return &x.Optional
	case *Generic:
		return &x.Optional
	}
	return nil
}
