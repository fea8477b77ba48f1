package isup

// The address parameters (called, calling, redirecting, redirection, connected,
// original called, location, charge number) share one shape: octet 1 is the odd/even
// bit and a 7-bit nature of address indicator, octet 2 is parameter-specific, and the
// packed digits follow. These helpers move that shape; the typed parameters name the
// bits of octet 2.

// Nature of address indicator values (Q.763 §3.9; ANSI extras in T1.113 §3.6).
const (
	NAISubscriber      uint8 = 1
	NAIUnknown         uint8 = 2
	NAINational        uint8 = 3
	NAIInternational   uint8 = 4
	NAINetworkSpecific uint8 = 5
)

// Numbering plan indicator values.
const (
	NPIISDN    uint8 = 1 // E.164
	NPIData    uint8 = 3 // X.121
	NPITelex   uint8 = 4 // F.69
	NPIPrivate uint8 = 5
)

func addressLen(d Digits) int { return 2 + len(d.BCD) }

func marshalAddress(b []byte, nai, octet2 uint8, d Digits) int {
	b[0] = nai & 0x7f
	if d.Odd {
		b[0] |= 0x80
	}
	b[1] = octet2
	return 2 + copy(b[2:], d.BCD)
}

func unmarshalAddress(code ParameterCode, b []byte) (nai, octet2 uint8, d Digits, err error) {
	if len(b) < 2 {
		return 0, 0, Digits{}, lengthError(code, len(b), "at least 2")
	}
	d = Digits{Odd: b[0]&0x80 != 0, BCD: b[2:]}
	if d.Odd && len(d.BCD) == 0 {
		return 0, 0, Digits{}, valueError(code, ErrInvalidValue, "odd indicator set but no digits")
	}
	return b[0] & 0x7f, b[1], d, nil
}

// CalledPartyNumber is parameter 0x04 (Q.763 §3.9).
type CalledPartyNumber struct {
	NatureOfAddress uint8
	// INN is the internal network number indicator: 0 routing to an internal network
	// number allowed, 1 not allowed. Spare in ANSI.
	INN           uint8
	NumberingPlan uint8
	// Spare is octet 2 bits 4-1, kept so that a message passes on unchanged.
	Spare  uint8
	Digits Digits
}

// NewCalledPartyNumber builds a called party number from text digits (see Digits).
func NewCalledPartyNumber(nai, npi uint8, digits string) (CalledPartyNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return CalledPartyNumber{}, err
	}
	return CalledPartyNumber{NatureOfAddress: nai, NumberingPlan: npi, Digits: d}, nil
}

func (p CalledPartyNumber) Code() ParameterCode { return ParamCalledPartyNumber }
func (p CalledPartyNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p CalledPartyNumber) MarshalTo(b []byte) (int, error) {
	return marshalAddress(b, p.NatureOfAddress, p.INN<<7|(p.NumberingPlan&7)<<4|p.Spare&0x0f, p.Digits), nil
}
func (p *CalledPartyNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamCalledPartyNumber, b)
	if err != nil {
		return err
	}
	*p = CalledPartyNumber{NatureOfAddress: nai, INN: o2 >> 7, NumberingPlan: o2 >> 4 & 7, Spare: o2 & 0x0f, Digits: d}
	return nil
}

// Address presentation restricted indicator values (CallingPartyNumber.Presentation).
const (
	PresentationAllowed      uint8 = 0
	PresentationRestricted   uint8 = 1
	PresentationNotAvailable uint8 = 2
)

// Screening indicator values.
const (
	ScreeningUserNotVerified uint8 = 0 // national use
	ScreeningUserVerified    uint8 = 1
	ScreeningUserFailed      uint8 = 2 // national use
	ScreeningNetwork         uint8 = 3
)

// CallingPartyNumber is parameter 0x0A (Q.763 §3.10).
type CallingPartyNumber struct {
	NatureOfAddress uint8
	// Incomplete is the number incomplete indicator (NI): 0 complete, 1 incomplete.
	Incomplete    uint8
	NumberingPlan uint8
	Presentation  uint8 // APRI
	Screening     uint8
	Digits        Digits
}

// NewCallingPartyNumber builds a calling party number, presentation allowed and
// user-provided verified.
func NewCallingPartyNumber(nai, npi uint8, digits string) (CallingPartyNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return CallingPartyNumber{}, err
	}
	return CallingPartyNumber{NatureOfAddress: nai, NumberingPlan: npi, Screening: ScreeningUserVerified, Digits: d}, nil
}

func (p CallingPartyNumber) Code() ParameterCode { return ParamCallingPartyNumber }
func (p CallingPartyNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p CallingPartyNumber) MarshalTo(b []byte) (int, error) {
	return marshalAddress(b, p.NatureOfAddress, packCallingOctet2(p.Incomplete, p.NumberingPlan, p.Presentation, p.Screening), p.Digits), nil
}
func (p *CallingPartyNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamCallingPartyNumber, b)
	if err != nil {
		return err
	}
	*p = CallingPartyNumber{NatureOfAddress: nai, Digits: d}
	p.Incomplete, p.NumberingPlan, p.Presentation, p.Screening = unpackCallingOctet2(o2)
	return nil
}

// packCallingOctet2 builds octet 2 of the calling-number family: bit 8 (NI or INN),
// NPI in bits 7-5, presentation in bits 4-3, screening in bits 2-1.
func packCallingOctet2(bit8, npi, apri, screening uint8) uint8 {
	return bit8<<7 | (npi&7)<<4 | (apri&3)<<2 | screening&3
}

func unpackCallingOctet2(o uint8) (bit8, npi, apri, screening uint8) {
	return o >> 7, o >> 4 & 7, o >> 2 & 3, o & 3
}

// SubsequentNumber is parameter 0x05 (Q.763 §3.51): more digits for overlap sending.
type SubsequentNumber struct {
	// Spare is octet 1 bits 7-1.
	Spare  uint8
	Digits Digits
}

func (p SubsequentNumber) Code() ParameterCode { return ParamSubsequentNumber }
func (p SubsequentNumber) MarshalLen() int     { return 1 + len(p.Digits.BCD) }
func (p SubsequentNumber) MarshalTo(b []byte) (int, error) {
	b[0] = p.Spare & 0x7f
	if p.Digits.Odd {
		b[0] |= 0x80
	}
	return 1 + copy(b[1:], p.Digits.BCD), nil
}
func (p *SubsequentNumber) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamSubsequentNumber, len(b), "at least 1")
	}
	*p = SubsequentNumber{Spare: b[0] & 0x7f, Digits: Digits{Odd: b[0]&0x80 != 0, BCD: b[1:]}}
	return nil
}
