package isup

// The indicator parameters are one or two octets of bit fields. Each is a named
// integer (octet 1 in the low byte) with accessors for its fields, so decoding is a
// load and nothing is lost on re-encoding. Field names follow Q.763's bit letters.

func field8(v uint8, shift, width uint) uint8 { return v >> shift & (1<<width - 1) }
func field16(v uint16, shift, width uint) uint8 {
	return uint8(v >> shift & (1<<width - 1))
}
func set16(v uint16, shift, width uint, x uint8) uint16 {
	m := uint16(1<<width-1) << shift
	return v&^m | uint16(x)<<shift&m
}
func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func marshal1(b []byte, v uint8) (int, error) { b[0] = v; return 1, nil }
func marshal2(b []byte, v uint16) (int, error) {
	b[0], b[1] = byte(v), byte(v>>8)
	return 2, nil
}
func unmarshal1(code ParameterCode, b []byte) (uint8, error) {
	if len(b) != 1 {
		return 0, lengthError(code, len(b), "1")
	}
	return b[0], nil
}
func unmarshal2(code ParameterCode, b []byte) (uint16, error) {
	if len(b) != 2 {
		return 0, lengthError(code, len(b), "2")
	}
	return uint16(b[0]) | uint16(b[1])<<8, nil
}

// NatureOfConnection is parameter 0x06 (Q.763 §3.35).
type NatureOfConnection uint8

// NewNatureOfConnection: satellite 0-2 satellites in the connection; continuity
// 0 not required, 1 required on this circuit, 2 performed on a previous circuit.
func NewNatureOfConnection(satellite, continuity uint8, echoDevice bool) NatureOfConnection {
	return NatureOfConnection(satellite&3 | (continuity&3)<<2 | b2u(echoDevice)<<4)
}
func (v NatureOfConnection) Satellite() uint8       { return field8(uint8(v), 0, 2) }
func (v NatureOfConnection) ContinuityCheck() uint8 { return field8(uint8(v), 2, 2) }
func (v NatureOfConnection) EchoDevice() bool       { return v&0x10 != 0 }

func (v NatureOfConnection) Code() ParameterCode             { return ParamNatureOfConnection }
func (v NatureOfConnection) MarshalLen() int                 { return 1 }
func (v NatureOfConnection) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *NatureOfConnection) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamNatureOfConnection, b)
	*v = NatureOfConnection(x)
	return err
}

// ForwardCallIndicators is parameter 0x07 (Q.763 §3.23), octet 1 in the low byte.
type ForwardCallIndicators uint16

// ISUP preference indicator values (bits HG).
const (
	ISUPPreferred   uint8 = 0
	ISUPNotRequired uint8 = 1
	ISUPRequired    uint8 = 2
)

// NewForwardCallIndicators sets the fields a call set-up usually chooses; the rest
// are zero (national call, no end-to-end method, no interworking).
func NewForwardCallIndicators(isupAllTheWay bool, preference uint8, originatingISDN bool) ForwardCallIndicators {
	var v uint16
	v = set16(v, 5, 1, b2u(isupAllTheWay))
	v = set16(v, 6, 2, preference)
	v = set16(v, 8, 1, b2u(originatingISDN))
	return ForwardCallIndicators(v)
}
func (v ForwardCallIndicators) International() bool          { return v&0x01 != 0 }              // A
func (v ForwardCallIndicators) EndToEndMethod() uint8        { return field16(uint16(v), 1, 2) } // CB
func (v ForwardCallIndicators) Interworking() bool           { return v&0x08 != 0 }              // D
func (v ForwardCallIndicators) EndToEndInfo() bool           { return v&0x10 != 0 }              // E
func (v ForwardCallIndicators) ISUPAllTheWay() bool          { return v&0x20 != 0 }              // F
func (v ForwardCallIndicators) ISUPPreference() uint8        { return field16(uint16(v), 6, 2) } // HG
func (v ForwardCallIndicators) OriginatingISDN() bool        { return v&0x100 != 0 }             // I
func (v ForwardCallIndicators) SCCPMethod() uint8            { return field16(uint16(v), 9, 2) } // KJ
func (v ForwardCallIndicators) PortedNumberTranslated() bool { return v&0x800 != 0 }             // L

func (v ForwardCallIndicators) Code() ParameterCode             { return ParamForwardCallIndicators }
func (v ForwardCallIndicators) MarshalLen() int                 { return 2 }
func (v ForwardCallIndicators) MarshalTo(b []byte) (int, error) { return marshal2(b, uint16(v)) }
func (v *ForwardCallIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal2(ParamForwardCallIndicators, b)
	*v = ForwardCallIndicators(x)
	return err
}

// BackwardCallIndicators is parameter 0x11 (Q.763 §3.5), octet 1 in the low byte.
type BackwardCallIndicators uint16

// NewBackwardCallIndicators: charge 0 no indication, 1 no charge, 2 charge; status
// 0 no indication, 1 subscriber free, 2 connect when free; category 0 no indication,
// 1 ordinary subscriber, 2 payphone.
func NewBackwardCallIndicators(charge, calledStatus, calledCategory uint8, isupAllTheWay bool) BackwardCallIndicators {
	var v uint16
	v = set16(v, 0, 2, charge)
	v = set16(v, 2, 2, calledStatus)
	v = set16(v, 4, 2, calledCategory)
	v = set16(v, 10, 1, b2u(isupAllTheWay))
	return BackwardCallIndicators(v)
}
func (v BackwardCallIndicators) Charge() uint8         { return field16(uint16(v), 0, 2) }  // BA
func (v BackwardCallIndicators) CalledStatus() uint8   { return field16(uint16(v), 2, 2) }  // DC
func (v BackwardCallIndicators) CalledCategory() uint8 { return field16(uint16(v), 4, 2) }  // FE
func (v BackwardCallIndicators) EndToEndMethod() uint8 { return field16(uint16(v), 6, 2) }  // HG
func (v BackwardCallIndicators) Interworking() bool    { return v&0x100 != 0 }              // I
func (v BackwardCallIndicators) EndToEndInfo() bool    { return v&0x200 != 0 }              // J
func (v BackwardCallIndicators) ISUPAllTheWay() bool   { return v&0x400 != 0 }              // K
func (v BackwardCallIndicators) Holding() bool         { return v&0x800 != 0 }              // L
func (v BackwardCallIndicators) TerminatingISDN() bool { return v&0x1000 != 0 }             // M
func (v BackwardCallIndicators) EchoDevice() bool      { return v&0x2000 != 0 }             // N
func (v BackwardCallIndicators) SCCPMethod() uint8     { return field16(uint16(v), 14, 2) } // PO

func (v BackwardCallIndicators) Code() ParameterCode             { return ParamBackwardCallIndicators }
func (v BackwardCallIndicators) MarshalLen() int                 { return 2 }
func (v BackwardCallIndicators) MarshalTo(b []byte) (int, error) { return marshal2(b, uint16(v)) }
func (v *BackwardCallIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal2(ParamBackwardCallIndicators, b)
	*v = BackwardCallIndicators(x)
	return err
}

// CallingPartyCategory is parameter 0x09 (Q.763 §3.11).
type CallingPartyCategory uint8

const (
	CategoryUnknown    CallingPartyCategory = 0
	CategoryOperatorFr CallingPartyCategory = 1
	CategoryOperatorEn CallingPartyCategory = 2
	CategoryOperatorDe CallingPartyCategory = 3
	CategoryOperatorRu CallingPartyCategory = 4
	CategoryOperatorEs CallingPartyCategory = 5
	CategoryOrdinary   CallingPartyCategory = 10
	CategoryPriority   CallingPartyCategory = 11
	CategoryData       CallingPartyCategory = 12
	CategoryTest       CallingPartyCategory = 13
	CategoryPayphone   CallingPartyCategory = 15
)

func (v CallingPartyCategory) Code() ParameterCode             { return ParamCallingPartyCategory }
func (v CallingPartyCategory) MarshalLen() int                 { return 1 }
func (v CallingPartyCategory) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *CallingPartyCategory) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamCallingPartyCategory, b)
	*v = CallingPartyCategory(x)
	return err
}

// TransmissionMediumRequirement is parameter 0x02 (Q.763 §3.54), ITU IAM only.
type TransmissionMediumRequirement uint8

const (
	TMRSpeech          TransmissionMediumRequirement = 0
	TMR64kUnrestricted TransmissionMediumRequirement = 2
	TMR3k1Audio        TransmissionMediumRequirement = 3
	TMR64kPreferred    TransmissionMediumRequirement = 6
	TMR2x64k           TransmissionMediumRequirement = 7
	TMR384k            TransmissionMediumRequirement = 8
	TMR1536k           TransmissionMediumRequirement = 9
	TMR1920k           TransmissionMediumRequirement = 10
)

func (v TransmissionMediumRequirement) Code() ParameterCode             { return ParamTransmissionMediumReq }
func (v TransmissionMediumRequirement) MarshalLen() int                 { return 1 }
func (v TransmissionMediumRequirement) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *TransmissionMediumRequirement) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamTransmissionMediumReq, b)
	*v = TransmissionMediumRequirement(x)
	return err
}

// EventInformation is parameter 0x24 (Q.763 §3.21): the event in a CPG.
type EventInformation uint8

const (
	EventAlerting               uint8 = 1
	EventProgress               uint8 = 2
	EventInBandInfo             uint8 = 3
	EventForwardedOnBusy        uint8 = 4
	EventForwardedOnNoReply     uint8 = 5
	EventForwardedUnconditional uint8 = 6
)

// NewEventInformation builds the parameter from an event code (1-6) and the
// presentation restricted flag.
func NewEventInformation(event uint8, restricted bool) EventInformation {
	return EventInformation(event&0x7f | b2u(restricted)<<7)
}
func (v EventInformation) Event() uint8     { return uint8(v) & 0x7f }
func (v EventInformation) Restricted() bool { return v&0x80 != 0 }

func (v EventInformation) Code() ParameterCode             { return ParamEventInformation }
func (v EventInformation) MarshalLen() int                 { return 1 }
func (v EventInformation) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *EventInformation) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamEventInformation, b)
	*v = EventInformation(x)
	return err
}

// ContinuityIndicators is parameter 0x10 (Q.763 §3.18), carried in COT.
type ContinuityIndicators uint8

func (v ContinuityIndicators) Successful() bool { return v&1 != 0 }

func (v ContinuityIndicators) Code() ParameterCode             { return ParamContinuityIndicators }
func (v ContinuityIndicators) MarshalLen() int                 { return 1 }
func (v ContinuityIndicators) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *ContinuityIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamContinuityIndicators, b)
	*v = ContinuityIndicators(x)
	return err
}

// SuspendResumeIndicators is parameter 0x22 (Q.763 §3.52): bit A, 0 ISDN subscriber
// initiated, 1 network initiated.
type SuspendResumeIndicators uint8

func (v SuspendResumeIndicators) NetworkInitiated() bool { return v&1 != 0 }

func (v SuspendResumeIndicators) Code() ParameterCode             { return ParamSuspendResumeIndicators }
func (v SuspendResumeIndicators) MarshalLen() int                 { return 1 }
func (v SuspendResumeIndicators) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *SuspendResumeIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamSuspendResumeIndicators, b)
	*v = SuspendResumeIndicators(x)
	return err
}

// CircuitGroupSupervisionType is parameter 0x15 (Q.763 §3.13), bits BA.
type CircuitGroupSupervisionType uint8

const (
	MaintenanceOriented     CircuitGroupSupervisionType = 0
	HardwareFailureOriented CircuitGroupSupervisionType = 1
)

func (v CircuitGroupSupervisionType) Kind() uint8 { return uint8(v) & 3 }

func (v CircuitGroupSupervisionType) Code() ParameterCode             { return ParamCircuitGroupSupervision }
func (v CircuitGroupSupervisionType) MarshalLen() int                 { return 1 }
func (v CircuitGroupSupervisionType) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *CircuitGroupSupervisionType) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamCircuitGroupSupervision, b)
	*v = CircuitGroupSupervisionType(x)
	return err
}

// AutomaticCongestionLevel is parameter 0x27 (Q.763 §3.4): 1 or 2 in ITU, 1 to 3 in
// ANSI; other values are spare.
type AutomaticCongestionLevel uint8

// Valid reports whether the level is defined in the variant.
func (v AutomaticCongestionLevel) Valid(variant Variant) bool {
	if variant == ANSI {
		return v >= 1 && v <= 3
	}
	return v >= 1 && v <= 2
}

func (v AutomaticCongestionLevel) Code() ParameterCode             { return ParamAutomaticCongestionLevel }
func (v AutomaticCongestionLevel) MarshalLen() int                 { return 1 }
func (v AutomaticCongestionLevel) MarshalTo(b []byte) (int, error) { return marshal1(b, uint8(v)) }
func (v *AutomaticCongestionLevel) UnmarshalBinary(b []byte) error {
	x, err := unmarshal1(ParamAutomaticCongestionLevel, b)
	*v = AutomaticCongestionLevel(x)
	return err
}

// InformationRequestIndicators is parameter 0x0E (Q.763 §3.29), in INR.
type InformationRequestIndicators uint16

func (v InformationRequestIndicators) CallingPartyAddress() bool  { return v&0x01 != 0 } // A
func (v InformationRequestIndicators) Holding() bool              { return v&0x02 != 0 } // B
func (v InformationRequestIndicators) CallingPartyCategory() bool { return v&0x08 != 0 } // D
func (v InformationRequestIndicators) Charge() bool               { return v&0x10 != 0 } // E
func (v InformationRequestIndicators) MaliciousCallID() bool      { return v&0x80 != 0 } // H

func (v InformationRequestIndicators) Code() ParameterCode             { return ParamInformationRequestInd }
func (v InformationRequestIndicators) MarshalLen() int                 { return 2 }
func (v InformationRequestIndicators) MarshalTo(b []byte) (int, error) { return marshal2(b, uint16(v)) }
func (v *InformationRequestIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal2(ParamInformationRequestInd, b)
	*v = InformationRequestIndicators(x)
	return err
}

// InformationIndicators is parameter 0x0F (Q.763 §3.28), in INF.
type InformationIndicators uint16

// CallingPartyAddressResponse is bits BA: 0 not included, 1 not available, 3 included.
func (v InformationIndicators) CallingPartyAddressResponse() uint8 { return field16(uint16(v), 0, 2) }
func (v InformationIndicators) Holding() bool                      { return v&0x04 != 0 } // C
func (v InformationIndicators) CallingPartyCategoryIncluded() bool { return v&0x20 != 0 } // F
func (v InformationIndicators) ChargeIncluded() bool               { return v&0x40 != 0 } // G
func (v InformationIndicators) Solicited() bool                    { return v&0x80 == 0 } // H: 0 solicited

func (v InformationIndicators) Code() ParameterCode             { return ParamInformationInd }
func (v InformationIndicators) MarshalLen() int                 { return 2 }
func (v InformationIndicators) MarshalTo(b []byte) (int, error) { return marshal2(b, uint16(v)) }
func (v *InformationIndicators) UnmarshalBinary(b []byte) error {
	x, err := unmarshal2(ParamInformationInd, b)
	*v = InformationIndicators(x)
	return err
}
