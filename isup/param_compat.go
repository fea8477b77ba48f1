package isup

import "iter"

// Message and parameter compatibility information carry the instructions that the
// compatibility procedures of Q.764 §2.9.5 follow when a message or parameter is not
// understood. Both are octet strings whose instruction indicators run over one or
// more octets chained by the extension bit (bit 8: 0 another octet follows, 1 last
// octet). The types keep the octets as received, so octets reserved for future
// expansion pass on unchanged; the accessors read the fields defined today.

// Instruction indicator bits of the first instruction octet (Q.763 §3.33 and §3.41),
// for NewMessageCompatibilityInformation and ParameterCompatibilityInformation.Append.
const (
	// InstrEndNode is bit A, the transit at intermediate exchange indicator: 0 transit
	// interpretation, 1 end node interpretation.
	InstrEndNode          uint8 = 0x01
	InstrReleaseCall      uint8 = 0x02 // B
	InstrSendNotification uint8 = 0x04 // C
	InstrDiscardMessage   uint8 = 0x08 // D
	// InstrDiscardParameter is bit E of parameter compatibility information.
	InstrDiscardParameter uint8 = 0x10
	// InstrPassOnDiscard is bit E of message compatibility information, the pass on
	// not possible indicator: 0 release call, 1 discard information.
	InstrPassOnDiscard uint8 = 0x10
)

// Pass on not possible indicator values of parameter compatibility information
// (bits GF); 3 is reserved and to be read as 0.
const (
	PassOnReleaseCall      uint8 = 0
	PassOnDiscardMessage   uint8 = 1
	PassOnDiscardParameter uint8 = 2
)

// Broadband/narrowband interworking indicator values (message compatibility bits GF,
// parameter compatibility octet 2a bits BA). BNDiscardParameter exists only for
// parameters; in message compatibility 3 is reserved and read as BNPassOn.
const (
	BNPassOn           uint8 = 0
	BNDiscardMessage   uint8 = 1
	BNReleaseCall      uint8 = 2
	BNDiscardParameter uint8 = 3
)

// extChain returns the length of the extension-bit chain starting at b[0] (through the
// first octet with bit 8 set), or -1 if the chain does not end within b.
func extChain(b []byte) int {
	for i, o := range b {
		if o&0x80 != 0 {
			return i + 1
		}
	}
	return -1
}

// MessageCompatibilityInformation is parameter 0x38 (Q.763 §3.33): the instruction
// indicators for the whole message. Octet 1: A transit at intermediate exchange,
// B release call, C send notification, D discard message, E pass on not possible,
// GF broadband/narrowband interworking, H extension.
type MessageCompatibilityInformation []byte

// NewMessageCompatibilityInformation builds the one-octet form from Instr* flags
// (InstrPassOnDiscard, not InstrDiscardParameter, for bit E) and a BN* value.
func NewMessageCompatibilityInformation(flags, bn uint8) MessageCompatibilityInformation {
	return MessageCompatibilityInformation{0x80 | flags&0x1f | (bn&3)<<5}
}

func (p MessageCompatibilityInformation) octet1() uint8 {
	if len(p) == 0 {
		return 0
	}
	return p[0]
}

// EndNodeInterpretation is the transit at intermediate exchange indicator (A).
func (p MessageCompatibilityInformation) EndNodeInterpretation() bool { return p.octet1()&0x01 != 0 }
func (p MessageCompatibilityInformation) ReleaseCall() bool           { return p.octet1()&0x02 != 0 } // B
func (p MessageCompatibilityInformation) SendNotification() bool      { return p.octet1()&0x04 != 0 } // C
func (p MessageCompatibilityInformation) DiscardMessage() bool        { return p.octet1()&0x08 != 0 } // D

// PassOnNotPossibleDiscard is bit E: when passing on is not possible, false means
// release the call and true discard the information.
func (p MessageCompatibilityInformation) PassOnNotPossibleDiscard() bool {
	return p.octet1()&0x10 != 0
}

// BroadbandNarrowband is the broadband/narrowband interworking indicator (GF), a BN*
// value.
func (p MessageCompatibilityInformation) BroadbandNarrowband() uint8 { return field8(p.octet1(), 5, 2) }

func (p MessageCompatibilityInformation) Code() ParameterCode { return ParamMessageCompatibility }
func (p MessageCompatibilityInformation) MarshalLen() int     { return len(p) }
func (p MessageCompatibilityInformation) MarshalTo(b []byte) (int, error) {
	return copy(b, p), nil
}
func (p *MessageCompatibilityInformation) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamMessageCompatibility, len(b), "at least 1")
	}
	if n := extChain(b); n != len(b) {
		return extLengthError(ParamMessageCompatibility, len(b), n)
	}
	*p = b
	return nil
}

func extLengthError(code ParameterCode, got, chain int) error {
	if chain < 0 {
		return valueError(code, ErrInvalidLength, "%d octets, extension bit of the last octet says more follow", got)
	}
	return valueError(code, ErrInvalidLength, "%d octets, extension bits end after %d", got, chain)
}

// ParameterCompatibilityInformation is parameter 0x39 (Q.763 §3.41): for each
// upgraded parameter, its code and then its instruction indicators.
//
// Instruction octet 2: A transit at intermediate exchange, B release call, C send
// notification, D discard message, E discard parameter, GF pass on not possible,
// H extension. Octet 2a (present when octet 2 bit H is 0): BA broadband/narrowband
// interworking, G-C spare, H extension. Further octets are reserved and kept.
type ParameterCompatibilityInformation []byte

// ParameterInstructions are the instruction indicator octets of one upgraded parameter
// (octet 2 onwards, extension bits included).
type ParameterInstructions []byte

func (p ParameterInstructions) octet(i int) uint8 {
	if i < len(p) {
		return p[i]
	}
	return 0
}

// EndNodeInterpretation is the transit at intermediate exchange indicator (A).
func (p ParameterInstructions) EndNodeInterpretation() bool { return p.octet(0)&0x01 != 0 }
func (p ParameterInstructions) ReleaseCall() bool           { return p.octet(0)&0x02 != 0 } // B
func (p ParameterInstructions) SendNotification() bool      { return p.octet(0)&0x04 != 0 } // C
func (p ParameterInstructions) DiscardMessage() bool        { return p.octet(0)&0x08 != 0 } // D
func (p ParameterInstructions) DiscardParameter() bool      { return p.octet(0)&0x10 != 0 } // E

// PassOnNotPossible is bits GF, a PassOn* value (3 is reserved, read it as 0).
func (p ParameterInstructions) PassOnNotPossible() uint8 { return field8(p.octet(0), 5, 2) }

// BroadbandNarrowband is octet 2a bits BA, a BN* value; BNPassOn when octet 2a is
// absent.
func (p ParameterInstructions) BroadbandNarrowband() uint8 {
	if p.octet(0)&0x80 != 0 {
		return BNPassOn
	}
	return field8(p.octet(1), 0, 2)
}

// next splits off the first entry. ok is false at the end or on a malformed rest.
func (p ParameterCompatibilityInformation) next() (code ParameterCode, ins ParameterInstructions, rest ParameterCompatibilityInformation, ok bool) {
	if len(p) < 2 {
		return 0, nil, nil, false
	}
	n := extChain(p[1:])
	if n < 0 {
		return 0, nil, nil, false
	}
	return ParameterCode(p[0]), ParameterInstructions(p[1 : 1+n]), p[1+n:], true
}

// All yields each upgraded parameter code with its instruction indicators, in wire
// order.
func (p ParameterCompatibilityInformation) All() iter.Seq2[ParameterCode, ParameterInstructions] {
	return func(yield func(ParameterCode, ParameterInstructions) bool) {
		for rest := p; ; {
			code, ins, r, ok := rest.next()
			if !ok || !yield(code, ins) {
				return
			}
			rest = r
		}
	}
}

// Instructions returns the instruction indicators given for the parameter code.
func (p ParameterCompatibilityInformation) Instructions(code ParameterCode) (ParameterInstructions, bool) {
	for c, ins := range p.All() {
		if c == code {
			return ins, true
		}
	}
	return nil, false
}

// Append adds an entry: flags are Instr* bits (A-E), passOn a PassOn* value and bn a
// BN* value; octet 2a is sent only when bn is not BNPassOn.
func (p ParameterCompatibilityInformation) Append(code ParameterCode, flags, passOn, bn uint8) ParameterCompatibilityInformation {
	o2 := flags&0x1f | (passOn&3)<<5
	if bn == BNPassOn {
		return append(p, byte(code), o2|0x80)
	}
	return append(p, byte(code), o2, 0x80|bn&3)
}

func (p ParameterCompatibilityInformation) Code() ParameterCode { return ParamParameterCompatibility }
func (p ParameterCompatibilityInformation) MarshalLen() int     { return len(p) }
func (p ParameterCompatibilityInformation) MarshalTo(b []byte) (int, error) {
	return copy(b, p), nil
}
func (p *ParameterCompatibilityInformation) UnmarshalBinary(b []byte) error {
	if len(b) < 2 {
		return lengthError(ParamParameterCompatibility, len(b), "at least 2")
	}
	for i := 0; i < len(b); {
		if i+1 >= len(b) {
			return valueError(ParamParameterCompatibility, ErrInvalidLength, "parameter code at octet %d has no instruction indicators", i)
		}
		n := extChain(b[i+1:])
		if n < 0 {
			return valueError(ParamParameterCompatibility, ErrInvalidLength, "instruction indicators of parameter 0x%02X run past the end", b[i])
		}
		i += 1 + n
	}
	*p = b
	return nil
}
