package isup

// Digit and name parameters without the O/E + nature of address shape of the address
// parameters.

// Generic digits encoding schemes (GenericDigits.Encoding).
const (
	EncodingBCDEven uint8 = 0
	EncodingBCDOdd  uint8 = 1
	EncodingIA5     uint8 = 2
	EncodingBinary  uint8 = 3
)

// Generic digits types of digits (GenericDigits.Type; ITU values, 4-30 national use).
const (
	DigitsAccountCode       uint8 = 0
	DigitsAuthorisationCode uint8 = 1
	DigitsTravellingClass   uint8 = 2 // private networking travelling class mark
	DigitsBusinessGroup     uint8 = 3 // business communication group identity
)

// GenericDigits is parameter 0xC1 (Q.763 §3.24, national use; T1.113): octet 1 bits
// 5-1 type of digits, bits 8-6 encoding scheme; then the digits, packed BCD (first
// digit in the low nibble, even or odd count per the scheme), IA5 characters or
// binary, as the scheme says.
type GenericDigits struct {
	Type     uint8
	Encoding uint8
	Value    []byte
}

// NewGenericDigitsBCD packs text digits (see Digits) with the BCD even or odd scheme.
func NewGenericDigitsBCD(typ uint8, digits string) (GenericDigits, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return GenericDigits{}, err
	}
	enc := EncodingBCDEven
	if d.Odd {
		enc = EncodingBCDOdd
	}
	return GenericDigits{Type: typ, Encoding: enc, Value: d.BCD}, nil
}

// NewGenericDigitsIA5 carries s as IA5 characters.
func NewGenericDigitsIA5(typ uint8, s string) GenericDigits {
	return GenericDigits{Type: typ, Encoding: EncodingIA5, Value: []byte(s)}
}

// Digits returns the value as packed digits when the scheme is BCD.
func (p GenericDigits) Digits() (Digits, bool) {
	switch p.Encoding {
	case EncodingBCDEven:
		return Digits{BCD: p.Value}, true
	case EncodingBCDOdd:
		return Digits{Odd: len(p.Value) > 0, BCD: p.Value}, true
	}
	return Digits{}, false
}

// IA5 returns the value as text when the scheme is IA5.
func (p GenericDigits) IA5() (string, bool) {
	if p.Encoding != EncodingIA5 {
		return "", false
	}
	return string(p.Value), true
}

func (p GenericDigits) Code() ParameterCode { return ParamGenericDigits }
func (p GenericDigits) MarshalLen() int     { return 1 + len(p.Value) }
func (p GenericDigits) MarshalTo(b []byte) (int, error) {
	b[0] = p.Type&0x1f | (p.Encoding&7)<<5
	return 1 + copy(b[1:], p.Value), nil
}
func (p *GenericDigits) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamGenericDigits, len(b), "at least 1")
	}
	g := GenericDigits{Type: b[0] & 0x1f, Encoding: b[0] >> 5}
	if len(b) > 1 {
		g.Value = b[1:]
	}
	*p = g
	return nil
}

// JurisdictionInformation is ANSI parameter 0xC4 (T1.113): the NPA-NXX of the
// originating switch as packed BCD digits (first digit in the low nibble of octet 1),
// normally 6 digits in 3 octets. There is no odd/even indicator, so Digits.Odd is
// always false on decoding.
type JurisdictionInformation struct {
	Digits Digits
}

// NewJurisdictionInformation packs an even number of text digits.
func NewJurisdictionInformation(digits string) (JurisdictionInformation, error) {
	if len(digits)%2 != 0 {
		return JurisdictionInformation{}, valueError(ParamJurisdictionInformation, ErrInvalidValue, "odd number of digits %q", digits)
	}
	d, err := ParseDigits(digits)
	if err != nil {
		return JurisdictionInformation{}, err
	}
	return JurisdictionInformation{Digits: d}, nil
}

func (p JurisdictionInformation) Code() ParameterCode { return ParamJurisdictionInformation }
func (p JurisdictionInformation) MarshalLen() int     { return len(p.Digits.BCD) }
func (p JurisdictionInformation) MarshalTo(b []byte) (int, error) {
	return copy(b, p.Digits.BCD), nil
}
func (p *JurisdictionInformation) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamJurisdictionInformation, len(b), "at least 1")
	}
	*p = JurisdictionInformation{Digits: Digits{BCD: b}}
	return nil
}

// Carrier identification codings (CarrierIdentification.Type and .Plan).
const (
	NetworkIDNational uint8 = 2 // type of network identification: national

	CarrierPlanUnknown uint8 = 0
	CarrierPlan3Digit  uint8 = 1 // 3-digit carrier identification code
	CarrierPlan4Digit  uint8 = 2 // 4-digit carrier identification code
)

// CarrierIdentification is ANSI parameter 0xC5 (T1.113): octet 1 bit 8 spare, bits
// 7-5 type of network identification, bits 4-1 network identification plan; then the
// carrier identification code as packed BCD, first digit in the low nibble of octet 2
// (a 3-digit code has a 0 filler nibble, and no odd/even indicator).
type CarrierIdentification struct {
	Type uint8
	Plan uint8
	// Spare is octet 1 masked to its spare bit (0x80), in place.
	Spare  uint8
	Digits Digits
}

// NewCarrierIdentification builds a national carrier identification from a 3- or
// 4-digit code.
func NewCarrierIdentification(code string) (CarrierIdentification, error) {
	plan := CarrierPlan4Digit
	switch len(code) {
	case 3:
		plan = CarrierPlan3Digit
	case 4:
	default:
		return CarrierIdentification{}, valueError(ParamCarrierIdentification, ErrInvalidValue, "carrier code %q is not 3 or 4 digits", code)
	}
	d, err := ParseDigits(code)
	if err != nil {
		return CarrierIdentification{}, err
	}
	d.Odd = false
	return CarrierIdentification{Type: NetworkIDNational, Plan: plan, Digits: d}, nil
}

// CarrierCode returns the code as text: 3 digits under the 3-digit plan, else every
// digit carried.
func (p CarrierIdentification) CarrierCode() string {
	s := p.Digits.String()
	if p.Plan == CarrierPlan3Digit && len(s) > 3 {
		s = s[:3]
	}
	return s
}

func (p CarrierIdentification) Code() ParameterCode { return ParamCarrierIdentification }
func (p CarrierIdentification) MarshalLen() int     { return 1 + len(p.Digits.BCD) }
func (p CarrierIdentification) MarshalTo(b []byte) (int, error) {
	b[0] = p.Spare&0x80 | (p.Type&7)<<4 | p.Plan&0x0f
	return 1 + copy(b[1:], p.Digits.BCD), nil
}
func (p *CarrierIdentification) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamCarrierIdentification, len(b), "at least 1")
	}
	c := CarrierIdentification{Spare: b[0] & 0x80, Type: b[0] >> 4 & 7, Plan: b[0] & 0x0f}
	if len(b) > 1 {
		c.Digits.BCD = b[1:]
	}
	*p = c
	return nil
}

// Generic name types and presentation values (T1.113).
const (
	NameCalling        uint8 = 1
	NameOriginalCalled uint8 = 2
	NameRedirecting    uint8 = 3
	NameConnected      uint8 = 4

	NamePresentationAllowed    uint8 = 0
	NamePresentationRestricted uint8 = 1
	NamePresentationBlocking   uint8 = 2 // blocking toggle
	NamePresentationNoIndic    uint8 = 3
)

// GenericName is ANSI parameter 0xC7 (T1.113): octet 1 bits 8-6 type of name, bit 5
// availability (1 name not available), bits 4-3 spare, bits 2-1 presentation; then
// the name in IA5 characters (at most 15).
type GenericName struct {
	Type         uint8
	Unavailable  bool
	Presentation uint8
	// Spare is octet 1 masked to its spare bits (0x0C), in place.
	Spare uint8
	Name  []byte
}

// NewGenericName builds an available name.
func NewGenericName(typ, presentation uint8, name string) GenericName {
	return GenericName{Type: typ, Presentation: presentation, Name: []byte(name)}
}

func (p GenericName) Code() ParameterCode { return ParamGenericName }
func (p GenericName) MarshalLen() int     { return 1 + len(p.Name) }
func (p GenericName) MarshalTo(b []byte) (int, error) {
	b[0] = (p.Type&7)<<5 | b2u(p.Unavailable)<<4 | p.Spare&0x0c | p.Presentation&3
	return 1 + copy(b[1:], p.Name), nil
}
func (p *GenericName) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamGenericName, len(b), "at least 1")
	}
	g := GenericName{Type: b[0] >> 5, Unavailable: b[0]&0x10 != 0, Spare: b[0] & 0x0c, Presentation: b[0] & 3}
	if len(b) > 1 {
		g.Name = b[1:]
	}
	*p = g
	return nil
}
