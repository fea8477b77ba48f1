package isup

// One- and two-octet indicator parameters beyond those of indicators.go. As there,
// each is a named integer holding the whole wire value (spare bits included), with
// accessors named after the Q.763/T1.113 fields.

// OptionalForwardCallIndicators is parameter 0x08 (Q.763 §3.38).
type OptionalForwardCallIndicators uint8

// Closed user group call indicator values (bits BA).
const (
	CUGNone                    uint8 = 0
	CUGOutgoingAccessAllowed   uint8 = 2
	CUGOutgoingAccessForbidden uint8 = 3
)

// NewOptionalForwardCallIndicators sets the CUG call indicator and the connected line
// identity request.
func NewOptionalForwardCallIndicators(cug uint8, connectedLineRequest bool) OptionalForwardCallIndicators {
	return OptionalForwardCallIndicators(cug&3 | b2u(connectedLineRequest)<<7)
}
func (v OptionalForwardCallIndicators) CUG() uint8                     { return field8(uint8(v), 0, 2) } // BA
func (v OptionalForwardCallIndicators) SimpleSegmentation() bool       { return v&0x04 != 0 }            // C
func (v OptionalForwardCallIndicators) ConnectedLineIdentityReq() bool { return v&0x80 != 0 }            // H

func (v OptionalForwardCallIndicators) Code() ParameterCode             { return ParamOptionalForwardCall }
func (v OptionalForwardCallIndicators) MarshalLen() int                 { return 1 }
func (v OptionalForwardCallIndicators) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *OptionalForwardCallIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamOptionalForwardCall, b)
	*v = OptionalForwardCallIndicators(x)
	return err
}

// OptionalBackwardCallIndicators is parameter 0x29 (Q.763 §3.37). Bits E-H are for
// national use and kept as received.
type OptionalBackwardCallIndicators uint8

// NewOptionalBackwardCallIndicators sets the in-band information and call diversion
// may occur indicators.
func NewOptionalBackwardCallIndicators(inBandInfo, diversionMayOccur bool) OptionalBackwardCallIndicators {
	return OptionalBackwardCallIndicators(b2u(inBandInfo) | b2u(diversionMayOccur)<<1)
}
func (v OptionalBackwardCallIndicators) InBandInfo() bool            { return v&0x01 != 0 } // A
func (v OptionalBackwardCallIndicators) CallDiversionMayOccur() bool { return v&0x02 != 0 } // B
func (v OptionalBackwardCallIndicators) SimpleSegmentation() bool    { return v&0x04 != 0 } // C
func (v OptionalBackwardCallIndicators) MLPPUser() bool              { return v&0x08 != 0 } // D

func (v OptionalBackwardCallIndicators) Code() ParameterCode { return ParamOptionalBackwardCall }
func (v OptionalBackwardCallIndicators) MarshalLen() int     { return 1 }
func (v OptionalBackwardCallIndicators) MarshalTo(b []byte) (int, error) {
	return marshal1(b, uint8(v))
}
func (v *OptionalBackwardCallIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamOptionalBackwardCall, b)
	*v = OptionalBackwardCallIndicators(x)
	return err
}

// Redirecting indicator values (RedirectionInformation.Indicator, bits CBA).
const (
	RedirNone                     uint8 = 0
	RedirRerouted                 uint8 = 1
	RedirReroutedAllRestricted    uint8 = 2
	RedirDiverted                 uint8 = 3
	RedirDivertedAllRestricted    uint8 = 4
	RedirReroutedNumberRestricted uint8 = 5
	RedirDivertedNumberRestricted uint8 = 6
)

// Redirecting reason values (original redirection reason and redirecting reason).
const (
	RedirReasonUnknown          uint8 = 0
	RedirReasonBusy             uint8 = 1
	RedirReasonNoReply          uint8 = 2
	RedirReasonUnconditional    uint8 = 3
	RedirReasonDeflectAlerting  uint8 = 4 // redirecting reason only
	RedirReasonDeflectImmediate uint8 = 5 // redirecting reason only
	RedirReasonNotReachable     uint8 = 6 // mobile subscriber not reachable
)

// RedirectionInformation is parameter 0x13 (Q.763 §3.45).
//
// Octet 1: bits CBA redirecting indicator, D spare, HGFE original redirection reason.
// Octet 2: bits KJI redirection counter, L spare, PONM redirecting reason. The
// pre-1988 form carries octet 1 only; OneOctet keeps that form.
type RedirectionInformation struct {
	Indicator      uint8
	OriginalReason uint8
	Counter        uint8 // 1-5
	Reason         uint8
	// Spare holds bit D of octet 1 in bit 0 and bit L of octet 2 in bit 1.
	Spare uint8
	// OneOctet is the short form without octet 2 (Counter, Reason and Spare bit 1
	// are then not sent).
	OneOctet bool
}

// NewRedirectionInformation builds the two-octet form.
func NewRedirectionInformation(indicator, originalReason, counter, reason uint8) RedirectionInformation {
	return RedirectionInformation{Indicator: indicator, OriginalReason: originalReason, Counter: counter, Reason: reason}
}

func (p RedirectionInformation) Code() ParameterCode { return ParamRedirectionInformation }
func (p RedirectionInformation) MarshalLen() int {
	if p.OneOctet {
		return 1
	}
	return 2
}
func (p RedirectionInformation) MarshalTo(b []byte) (int, error) {
	b[0] = p.Indicator&7 | (p.Spare&1)<<3 | (p.OriginalReason&0x0f)<<4
	if p.OneOctet {
		return 1, nil
	}
	b[1] = p.Counter&7 | (p.Spare>>1&1)<<3 | (p.Reason&0x0f)<<4
	return 2, nil
}
func (p *RedirectionInformation) UnmarshalBinary(b []byte) error {
	if len(b) != 1 && len(b) != 2 {
		return lengthError(ParamRedirectionInformation, len(b), "1 or 2")
	}
	r := RedirectionInformation{Indicator: b[0] & 7, Spare: b[0] >> 3 & 1, OriginalReason: b[0] >> 4, OneOctet: len(b) == 1}
	if len(b) == 2 {
		r.Counter, r.Reason = b[1]&7, b[1]>>4
		r.Spare |= (b[1] >> 3 & 1) << 1
	}
	*p = r
	return nil
}

// EchoControlInformation is parameter 0x37 (Q.763 §3.19).
type EchoControlInformation uint8

// Echo control device information values (OutgoingInfo, IncomingInfo).
const (
	EchoInfoNone                 uint8 = 0
	EchoInfoNotIncludedNotAvail  uint8 = 1
	EchoInfoIncluded             uint8 = 2
	EchoInfoNotIncludedAvailable uint8 = 3
)

// Echo control device request values (OutgoingRequest, IncomingRequest).
const (
	EchoRequestNone       uint8 = 0
	EchoRequestActivate   uint8 = 1
	EchoRequestDeactivate uint8 = 2
)

// NewEchoControlInformation packs the four fields.
func NewEchoControlInformation(outInfo, inInfo, outRequest, inRequest uint8) EchoControlInformation {
	return EchoControlInformation(outInfo&3 | (inInfo&3)<<2 | (outRequest&3)<<4 | (inRequest&3)<<6)
}
func (v EchoControlInformation) OutgoingInfo() uint8    { return field8(uint8(v), 0, 2) } // BA
func (v EchoControlInformation) IncomingInfo() uint8    { return field8(uint8(v), 2, 2) } // DC
func (v EchoControlInformation) OutgoingRequest() uint8 { return field8(uint8(v), 4, 2) } // FE
func (v EchoControlInformation) IncomingRequest() uint8 { return field8(uint8(v), 6, 2) } // HG

func (v EchoControlInformation) Code() ParameterCode             { return ParamEchoControlInformation }
func (v EchoControlInformation) MarshalLen() int                 { return 1 }
func (v EchoControlInformation) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *EchoControlInformation) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamEchoControlInformation, b)
	*v = EchoControlInformation(x)
	return err
}

// HopCounter is parameter 0x3D (Q.763 §3.80): bits 5-1 the counter, bits 8-6 spare.
type HopCounter uint8

// NewHopCounter returns a hop counter holding n (0-31).
func NewHopCounter(n uint8) HopCounter { return HopCounter(n & 0x1f) }

// Count is the 5-bit counter value.
func (v HopCounter) Count() uint8 { return uint8(v) & 0x1f }

// Decrement returns the counter one lower, spare bits unchanged; it stays at 0.
func (v HopCounter) Decrement() HopCounter {
	if v.Count() == 0 {
		return v
	}
	return v - 1
}

func (v HopCounter) Code() ParameterCode             { return ParamHopCounter }
func (v HopCounter) MarshalLen() int                 { return 1 }
func (v HopCounter) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *HopCounter) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamHopCounter, b)
	*v = HopCounter(x)
	return err
}

// PropagationDelayCounter is parameter 0x31 (Q.763 §3.42): the accumulated
// propagation delay in milliseconds. Unlike the indicator pairs it is a binary number
// sent most significant octet first.
type PropagationDelayCounter uint16

func (v PropagationDelayCounter) Code() ParameterCode { return ParamPropagationDelayCounter }
func (v PropagationDelayCounter) MarshalLen() int     { return 2 }
func (v PropagationDelayCounter) MarshalTo(b []byte) (int, error) {
	b[0], b[1] = byte(v>>8), byte(v)
	return 2, nil
}
func (v *PropagationDelayCounter) UnmarshalBinary(b []byte) error {
	if len(b) != 2 {
		return lengthError(ParamPropagationDelayCounter, len(b), "2")
	}
	*v = PropagationDelayCounter(uint16(b[0])<<8 | uint16(b[1]))
	return nil
}

// OriginatingLineInformation is ANSI parameter 0xEA (T1.113): the ANI II digits as a
// binary number (e.g. 0 plain line, 27 coin, 61-63 cellular).
type OriginatingLineInformation uint8

func (v OriginatingLineInformation) Code() ParameterCode             { return ParamOriginatingLineInformation }
func (v OriginatingLineInformation) MarshalLen() int                 { return 1 }
func (v OriginatingLineInformation) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *OriginatingLineInformation) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamOriginatingLineInformation, b)
	*v = OriginatingLineInformation(x)
	return err
}

// Circuit group characteristic field values (T1.113).
const (
	CarrierUnknown          uint8 = 0 // circuit group carrier (BA)
	CarrierAnalog           uint8 = 1
	CarrierDigital          uint8 = 2
	CarrierDigitalAndAnalog uint8 = 3

	DoubleSeizingNone uint8 = 0 // double seizing control (DC): which circuits this end controls
	DoubleSeizingOdd  uint8 = 1
	DoubleSeizingEven uint8 = 2
	DoubleSeizingAll  uint8 = 3

	AlarmCarrierUnknown  uint8 = 0 // alarm carrier (FE)
	AlarmCarrierSoftware uint8 = 1
	AlarmCarrierHardware uint8 = 2

	ContinuityUnknown     uint8 = 0 // continuity check requirements (HG)
	ContinuityNone        uint8 = 1
	ContinuityStatistical uint8 = 2
	ContinuityPerCall     uint8 = 3
)

// CircuitGroupCharacteristic is ANSI parameter 0xE5 (T1.113), in CVR.
type CircuitGroupCharacteristic uint8

// NewCircuitGroupCharacteristic packs the four two-bit fields.
func NewCircuitGroupCharacteristic(carrier, doubleSeizing, alarmCarrier, continuity uint8) CircuitGroupCharacteristic {
	return CircuitGroupCharacteristic(carrier&3 | (doubleSeizing&3)<<2 | (alarmCarrier&3)<<4 | (continuity&3)<<6)
}
func (v CircuitGroupCharacteristic) Carrier() uint8         { return field8(uint8(v), 0, 2) } // BA
func (v CircuitGroupCharacteristic) DoubleSeizing() uint8   { return field8(uint8(v), 2, 2) } // DC
func (v CircuitGroupCharacteristic) AlarmCarrier() uint8    { return field8(uint8(v), 4, 2) } // FE
func (v CircuitGroupCharacteristic) ContinuityCheck() uint8 { return field8(uint8(v), 6, 2) } // HG

func (v CircuitGroupCharacteristic) Code() ParameterCode { return ParamCircuitGroupCharacteristic }
func (v CircuitGroupCharacteristic) MarshalLen() int     { return 1 }
func (v CircuitGroupCharacteristic) MarshalTo(b []byte) (int, error) {
	return marshal1(b, uint8(v))
}
func (v *CircuitGroupCharacteristic) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamCircuitGroupCharacteristic, b)
	*v = CircuitGroupCharacteristic(x)
	return err
}

// CircuitValidationResponse is ANSI parameter 0xE6 (T1.113), in CVR: bits BA are the
// response, 0 failure, 1 success; the other bits are kept as received.
type CircuitValidationResponse uint8

const (
	CVRFailure CircuitValidationResponse = 0
	CVRSuccess CircuitValidationResponse = 1
)

func (v CircuitValidationResponse) Response() uint8  { return uint8(v) & 3 }
func (v CircuitValidationResponse) Successful() bool { return v.Response() == 1 }

func (v CircuitValidationResponse) Code() ParameterCode { return ParamCircuitValidationResponse }
func (v CircuitValidationResponse) MarshalLen() int     { return 1 }
func (v CircuitValidationResponse) MarshalTo(b []byte) (int, error) {
	return marshal1(b, uint8(v))
}
func (v *CircuitValidationResponse) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamCircuitValidationResponse, b)
	*v = CircuitValidationResponse(x)
	return err
}
