package isup

// The remaining address parameters. They share the shape of address.go (octet 1 O/E
// and nature of address, octet 2 parameter-specific, packed digits) and differ only
// in what octet 2 carries. Octet 2 bits that a parameter leaves spare are kept in
// Spare at their wire positions, so a decoded parameter re-encodes byte-identical.

// Mask of the octet 2 bits each parameter leaves spare.
const (
	spareRedirecting uint8 = 0x83 // bit 8 and bits 2-1
	spareConnected   uint8 = 0x80 // bit 8
	spareCharge      uint8 = 0x8f // bit 8 and bits 4-1
)

// RedirectingNumber is parameter 0x0B (Q.763 §3.44): the number the call was last
// redirected from. Octet 2: spare, NPI (bits 7-5), APRI (bits 4-3), spare.
type RedirectingNumber struct {
	NatureOfAddress uint8
	NumberingPlan   uint8
	Presentation    uint8 // APRI
	// Spare is octet 2 masked to its spare bits (8, 2 and 1), in place.
	Spare  uint8
	Digits Digits
}

// NewRedirectingNumber builds a redirecting number with presentation allowed.
func NewRedirectingNumber(nai, npi uint8, digits string) (RedirectingNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return RedirectingNumber{}, err
	}
	return RedirectingNumber{NatureOfAddress: nai, NumberingPlan: npi, Digits: d}, nil
}

func (p RedirectingNumber) Code() ParameterCode { return ParamRedirectingNumber }
func (p RedirectingNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p RedirectingNumber) MarshalTo(b []byte) (int, error) {
	o2 := packCallingOctet2(0, p.NumberingPlan, p.Presentation, 0) | p.Spare&spareRedirecting
	return marshalAddress(b, p.NatureOfAddress, o2, p.Digits), nil
}
func (p *RedirectingNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamRedirectingNumber, b)
	if err != nil {
		return err
	}
	_, npi, apri, _ := unpackCallingOctet2(o2)
	*p = RedirectingNumber{NatureOfAddress: nai, NumberingPlan: npi, Presentation: apri, Spare: o2 & spareRedirecting, Digits: d}
	return nil
}

// OriginalCalledNumber is parameter 0x28 (Q.763 §3.39): the number first dialled
// before any redirection. Same layout as RedirectingNumber.
type OriginalCalledNumber struct {
	NatureOfAddress uint8
	NumberingPlan   uint8
	Presentation    uint8 // APRI
	// Spare is octet 2 masked to its spare bits (8, 2 and 1), in place.
	Spare  uint8
	Digits Digits
}

// NewOriginalCalledNumber builds an original called number with presentation allowed.
func NewOriginalCalledNumber(nai, npi uint8, digits string) (OriginalCalledNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return OriginalCalledNumber{}, err
	}
	return OriginalCalledNumber{NatureOfAddress: nai, NumberingPlan: npi, Digits: d}, nil
}

func (p OriginalCalledNumber) Code() ParameterCode { return ParamOriginalCalledNumber }
func (p OriginalCalledNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p OriginalCalledNumber) MarshalTo(b []byte) (int, error) {
	o2 := packCallingOctet2(0, p.NumberingPlan, p.Presentation, 0) | p.Spare&spareRedirecting
	return marshalAddress(b, p.NatureOfAddress, o2, p.Digits), nil
}
func (p *OriginalCalledNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamOriginalCalledNumber, b)
	if err != nil {
		return err
	}
	_, npi, apri, _ := unpackCallingOctet2(o2)
	*p = OriginalCalledNumber{NatureOfAddress: nai, NumberingPlan: npi, Presentation: apri, Spare: o2 & spareRedirecting, Digits: d}
	return nil
}

// RedirectionNumber is parameter 0x0C (Q.763 §3.46): where the call is being
// redirected to, sent back in ACM/CPG. Octet 2 is laid out as in the called party
// number: INN, NPI, spare bits 4-1.
type RedirectionNumber struct {
	NatureOfAddress uint8
	INN             uint8 // 0 routing to internal network number allowed, 1 not allowed
	NumberingPlan   uint8
	// Spare is octet 2 bits 4-1.
	Spare  uint8
	Digits Digits
}

// NewRedirectionNumber builds a redirection number from text digits.
func NewRedirectionNumber(nai, npi uint8, digits string) (RedirectionNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return RedirectionNumber{}, err
	}
	return RedirectionNumber{NatureOfAddress: nai, NumberingPlan: npi, Digits: d}, nil
}

func (p RedirectionNumber) Code() ParameterCode { return ParamRedirectionNumber }
func (p RedirectionNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p RedirectionNumber) MarshalTo(b []byte) (int, error) {
	return marshalAddress(b, p.NatureOfAddress, (p.INN&1)<<7|(p.NumberingPlan&7)<<4|p.Spare&0x0f, p.Digits), nil
}
func (p *RedirectionNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamRedirectionNumber, b)
	if err != nil {
		return err
	}
	*p = RedirectionNumber{NatureOfAddress: nai, INN: o2 >> 7, NumberingPlan: o2 >> 4 & 7, Spare: o2 & 0x0f, Digits: d}
	return nil
}

// ConnectedNumber is parameter 0x21 (Q.763 §3.16): the answering party's number, in
// ANM/CON. Octet 2: spare, NPI, APRI, screening. With APRI "address not available"
// there are no digits.
type ConnectedNumber struct {
	NatureOfAddress uint8
	NumberingPlan   uint8
	Presentation    uint8 // APRI
	Screening       uint8
	// Spare is octet 2 bit 8, in place (0 or 0x80).
	Spare  uint8
	Digits Digits
}

// NewConnectedNumber builds a connected number, presentation allowed and network
// provided.
func NewConnectedNumber(nai, npi uint8, digits string) (ConnectedNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return ConnectedNumber{}, err
	}
	return ConnectedNumber{NatureOfAddress: nai, NumberingPlan: npi, Screening: ScreeningNetwork, Digits: d}, nil
}

func (p ConnectedNumber) Code() ParameterCode { return ParamConnectedNumber }
func (p ConnectedNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p ConnectedNumber) MarshalTo(b []byte) (int, error) {
	o2 := packCallingOctet2(0, p.NumberingPlan, p.Presentation, p.Screening) | p.Spare&spareConnected
	return marshalAddress(b, p.NatureOfAddress, o2, p.Digits), nil
}
func (p *ConnectedNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamConnectedNumber, b)
	if err != nil {
		return err
	}
	_, npi, apri, si := unpackCallingOctet2(o2)
	*p = ConnectedNumber{NatureOfAddress: nai, NumberingPlan: npi, Presentation: apri, Screening: si, Spare: o2 & spareConnected, Digits: d}
	return nil
}

// LocationNumber is parameter 0x3F (Q.763 §3.30): the geographic area of the calling
// party (mobile networks put the MSC or cell area here). Octet 2: INN, NPI, APRI,
// screening. With APRI "address not available" there are no digits.
type LocationNumber struct {
	NatureOfAddress uint8
	INN             uint8 // 0 routing to internal network number allowed, 1 not allowed
	NumberingPlan   uint8
	Presentation    uint8 // APRI
	Screening       uint8
	Digits          Digits
}

// NewLocationNumber builds a location number, presentation allowed and network
// provided.
func NewLocationNumber(nai, npi uint8, digits string) (LocationNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return LocationNumber{}, err
	}
	return LocationNumber{NatureOfAddress: nai, NumberingPlan: npi, Screening: ScreeningNetwork, Digits: d}, nil
}

func (p LocationNumber) Code() ParameterCode { return ParamLocationNumber }
func (p LocationNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p LocationNumber) MarshalTo(b []byte) (int, error) {
	o2 := packCallingOctet2(p.INN&1, p.NumberingPlan, p.Presentation, p.Screening)
	return marshalAddress(b, p.NatureOfAddress, o2, p.Digits), nil
}
func (p *LocationNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamLocationNumber, b)
	if err != nil {
		return err
	}
	*p = LocationNumber{NatureOfAddress: nai, Digits: d}
	p.INN, p.NumberingPlan, p.Presentation, p.Screening = unpackCallingOctet2(o2)
	return nil
}

// Number qualifier indicator values (GenericNumber.Qualifier, Q.763 §3.26).
const (
	QualifierAdditionalCalled    uint8 = 1
	QualifierAdditionalConnected uint8 = 5
	QualifierAdditionalCalling   uint8 = 6
)

// GenericNumber is parameter 0xC0 (Q.763 §3.26; the generic address of T1.113): a
// number qualifier octet, then a calling-number shaped address. The screening field
// here has all four values defined (0 user provided not verified, 1 verified and
// passed, 2 verified and failed, 3 network provided). In ANSI octet 3 bits 8 and 2-1
// are spare; they land in Incomplete and Screening and are kept as they are.
type GenericNumber struct {
	Qualifier       uint8
	NatureOfAddress uint8
	Incomplete      uint8 // NI
	NumberingPlan   uint8
	Presentation    uint8 // APRI
	Screening       uint8
	Digits          Digits
}

// NewGenericNumber builds a generic number, presentation allowed and user provided
// verified.
func NewGenericNumber(qualifier, nai, npi uint8, digits string) (GenericNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return GenericNumber{}, err
	}
	return GenericNumber{Qualifier: qualifier, NatureOfAddress: nai, NumberingPlan: npi, Screening: ScreeningUserVerified, Digits: d}, nil
}

func (p GenericNumber) Code() ParameterCode { return ParamGenericNumber }
func (p GenericNumber) MarshalLen() int     { return 1 + addressLen(p.Digits) }
func (p GenericNumber) MarshalTo(b []byte) (int, error) {
	b[0] = p.Qualifier
	o3 := packCallingOctet2(p.Incomplete&1, p.NumberingPlan, p.Presentation, p.Screening)
	return 1 + marshalAddress(b[1:], p.NatureOfAddress, o3, p.Digits), nil
}
func (p *GenericNumber) UnmarshalBinary(b []byte) error {
	if len(b) < 3 {
		return lengthError(ParamGenericNumber, len(b), "at least 3")
	}
	nai, o3, d, err := unmarshalAddress(ParamGenericNumber, b[1:])
	if err != nil {
		return err
	}
	*p = GenericNumber{Qualifier: b[0], NatureOfAddress: nai, Digits: d}
	p.Incomplete, p.NumberingPlan, p.Presentation, p.Screening = unpackCallingOctet2(o3)
	return nil
}

// Charge number nature of address values (T1.113 §3.8; they replace the NAI* values
// in ChargeNumber).
const (
	ChargeANICallingSubscriber uint8 = 1 // ANI of the calling party; subscriber number
	ChargeANINotAvailable      uint8 = 2 // ANI not available or not provided
	ChargeANICallingNational   uint8 = 3 // ANI of the calling party; national number
	ChargeANICalledSubscriber  uint8 = 5 // ANI of the called party; subscriber number
	ChargeANICalledNoNumber    uint8 = 6 // ANI of the called party; no number present
	ChargeANICalledNational    uint8 = 7 // ANI of the called party; national number
)

// ChargeNumber is ANSI parameter 0xEB (T1.113 §3.8): the number to bill. Octet 1 is
// O/E and a nature of address with the Charge* values; octet 2 holds only the
// numbering plan (bits 7-5).
type ChargeNumber struct {
	NatureOfAddress uint8
	NumberingPlan   uint8
	// Spare is octet 2 masked to its spare bits (8 and 4-1), in place.
	Spare  uint8
	Digits Digits
}

// NewChargeNumber builds a charge number (E.164 plan) from text digits.
func NewChargeNumber(nai uint8, digits string) (ChargeNumber, error) {
	d, err := ParseDigits(digits)
	if err != nil {
		return ChargeNumber{}, err
	}
	return ChargeNumber{NatureOfAddress: nai, NumberingPlan: NPIISDN, Digits: d}, nil
}

func (p ChargeNumber) Code() ParameterCode { return ParamChargeNumber }
func (p ChargeNumber) MarshalLen() int     { return addressLen(p.Digits) }
func (p ChargeNumber) MarshalTo(b []byte) (int, error) {
	return marshalAddress(b, p.NatureOfAddress, (p.NumberingPlan&7)<<4|p.Spare&spareCharge, p.Digits), nil
}
func (p *ChargeNumber) UnmarshalBinary(b []byte) error {
	nai, o2, d, err := unmarshalAddress(ParamChargeNumber, b)
	if err != nil {
		return err
	}
	*p = ChargeNumber{NatureOfAddress: nai, NumberingPlan: o2 >> 4 & 7, Spare: o2 & spareCharge, Digits: d}
	return nil
}
