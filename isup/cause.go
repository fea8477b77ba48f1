package isup

// CauseIndicators is parameter 0x12 (Q.763 §3.12, coded as Q.850): the reason a call
// ends, carried in REL, CFN and FRJ.
type CauseIndicators struct {
	// CodingStandard: 0 ITU-T, 2 national (ANSI uses 2 for its own causes).
	CodingStandard uint8
	Location       uint8
	// Recommendation is octet 1a, present only when HasRecommendation is set.
	HasRecommendation bool
	Recommendation    uint8
	// Value is the 7-bit cause value (Cause* constants).
	Value       uint8
	Diagnostics []byte
}

// Cause values used by the gateway (Q.850).
const (
	CauseUnallocatedNumber      uint8 = 1
	CauseNormalClearing         uint8 = 16
	CauseUserBusy               uint8 = 17
	CauseNoUserResponding       uint8 = 18
	CauseNoAnswer               uint8 = 19
	CauseCallRejected           uint8 = 21
	CauseAddressIncomplete      uint8 = 28
	CauseNormalUnspecified      uint8 = 31
	CauseNoCircuitAvailable     uint8 = 34
	CauseNetworkOutOfOrder      uint8 = 38
	CauseTemporaryFailure       uint8 = 41
	CauseSwitchingCongestion    uint8 = 42
	CauseCircuitNotAvailable    uint8 = 44
	CauseResourceUnavailable    uint8 = 47
	CauseInvalidMessage         uint8 = 95
	CauseMessageTypeNonExistent uint8 = 97
	CauseParameterNonExistent   uint8 = 99  // parameter discarded
	CauseMessageNotCompatible   uint8 = 101 // with call state
	CauseRecoveryOnTimerExpiry  uint8 = 102
	CauseParameterPassedOn      uint8 = 103 // parameter non-existent, passed on
	CauseProtocolError          uint8 = 111
	CauseInterworking           uint8 = 127
)

// Location values.
const (
	LocationUser               uint8 = 0
	LocationPrivateLocal       uint8 = 1
	LocationPublicLocal        uint8 = 2
	LocationTransit            uint8 = 3
	LocationPublicRemote       uint8 = 4
	LocationPrivateRemote      uint8 = 5
	LocationInternational      uint8 = 7
	LocationBeyondInterworking uint8 = 10
)

// NewCause builds ITU-coded cause indicators with no diagnostics.
func NewCause(location, value uint8) CauseIndicators {
	return CauseIndicators{Location: location, Value: value}
}

func (p CauseIndicators) Code() ParameterCode { return ParamCauseIndicators }
func (p CauseIndicators) MarshalLen() int {
	n := 2 + len(p.Diagnostics)
	if p.HasRecommendation {
		n++
	}
	return n
}
func (p CauseIndicators) MarshalTo(b []byte) (int, error) {
	n := 0
	b[n] = (p.CodingStandard&3)<<5 | p.Location&0x0f
	if !p.HasRecommendation {
		b[n] |= 0x80
	} else {
		n++
		b[n] = 0x80 | p.Recommendation&0x7f
	}
	n++
	b[n] = 0x80 | p.Value&0x7f
	n++
	return n + copy(b[n:], p.Diagnostics), nil
}
func (p *CauseIndicators) UnmarshalBinary(b []byte) error {
	if len(b) < 2 {
		return lengthError(ParamCauseIndicators, len(b), "at least 2")
	}
	c := CauseIndicators{CodingStandard: b[0] >> 5 & 3, Location: b[0] & 0x0f}
	i := 1
	if b[0]&0x80 == 0 {
		if len(b) < 3 {
			return lengthError(ParamCauseIndicators, len(b), "at least 3 with octet 1a")
		}
		c.HasRecommendation, c.Recommendation = true, b[1]&0x7f
		i = 2
	}
	c.Value = b[i] & 0x7f
	if i+1 < len(b) {
		c.Diagnostics = b[i+1:]
	}
	*p = c
	return nil
}

// RangeAndStatus is parameter 0x16 (Q.763 §3.43): a range of circuits starting at
// the message's CIC and, where the message carries one, a status bit per circuit
// (bit 0 of the first status octet is the CIC itself).
type RangeAndStatus struct {
	// Range R: the message covers CIC to CIC+R.
	Range  uint8
	Status []byte // nil in GRS and CQM
}

// NewRangeAndStatus returns a range with an all-zero status field when withStatus is
// set.
func NewRangeAndStatus(rng uint8, withStatus bool) RangeAndStatus {
	r := RangeAndStatus{Range: rng}
	if withStatus {
		r.Status = make([]byte, int(rng)/8+1)
	}
	return r
}

// Circuits is the number of circuits covered, R+1.
func (p RangeAndStatus) Circuits() int { return int(p.Range) + 1 }

// Bit reports the status bit of circuit CIC+i.
func (p RangeAndStatus) Bit(i int) bool {
	if i < 0 || i/8 >= len(p.Status) {
		return false
	}
	return p.Status[i/8]&(1<<(i%8)) != 0
}

// SetBit sets the status bit of circuit CIC+i; the status must exist.
func (p RangeAndStatus) SetBit(i int, on bool) {
	if on {
		p.Status[i/8] |= 1 << (i % 8)
	} else {
		p.Status[i/8] &^= 1 << (i % 8)
	}
}

// Ones counts the status bits set within the range.
func (p RangeAndStatus) Ones() int {
	n := 0
	for i := 0; i < p.Circuits(); i++ {
		if p.Bit(i) {
			n++
		}
	}
	return n
}

func (p RangeAndStatus) Code() ParameterCode { return ParamRangeAndStatus }
func (p RangeAndStatus) MarshalLen() int     { return 1 + len(p.Status) }
func (p RangeAndStatus) MarshalTo(b []byte) (int, error) {
	b[0] = p.Range
	return 1 + copy(b[1:], p.Status), nil
}
func (p *RangeAndStatus) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamRangeAndStatus, len(b), "at least 1")
	}
	r := RangeAndStatus{Range: b[0]}
	if len(b) > 1 {
		if want := int(b[0])/8 + 1; len(b)-1 != want {
			return valueError(ParamRangeAndStatus, ErrInvalidLength, "range %d needs %d status octets, got %d", b[0], want, len(b)-1)
		}
		r.Status = b[1:]
	}
	*p = r
	return nil
}

// CircuitStateIndicator is parameter 0x26 (Q.763 §3.14): one octet per circuit of a
// CQR's range.
type CircuitStateIndicator []byte

// Circuit state field values.
const (
	BlockingNone   uint8 = 0
	BlockingLocal  uint8 = 1
	BlockingRemote uint8 = 2
	BlockingBoth   uint8 = 3

	// Call processing state (bits DC); 0 means the maintenance field says transient
	// (0) or unequipped (3).
	CallStateIncomingBusy uint8 = 1
	CallStateOutgoingBusy uint8 = 2
	CallStateIdle         uint8 = 3
)

// NewCircuitState packs one circuit's octet.
func NewCircuitState(maintenance, callProcessing, hardware uint8) byte {
	return maintenance&3 | (callProcessing&3)<<2 | (hardware&3)<<4
}

func (p CircuitStateIndicator) Maintenance(i int) uint8    { return field8(p[i], 0, 2) }
func (p CircuitStateIndicator) CallProcessing(i int) uint8 { return field8(p[i], 2, 2) }
func (p CircuitStateIndicator) Hardware(i int) uint8       { return field8(p[i], 4, 2) }

// Unequipped reports the DC=0, BA=3 coding.
func (p CircuitStateIndicator) Unequipped(i int) bool {
	return p.CallProcessing(i) == 0 && p.Maintenance(i) == 3
}

func (p CircuitStateIndicator) Code() ParameterCode { return ParamCircuitStateIndicator }
func (p CircuitStateIndicator) MarshalLen() int     { return len(p) }
func (p CircuitStateIndicator) MarshalTo(b []byte) (int, error) {
	return copy(b, p), nil
}
func (p *CircuitStateIndicator) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamCircuitStateIndicator, len(b), "at least 1")
	}
	*p = b
	return nil
}

// UserServiceInformation is parameter 0x1D (Q.763 §3.57): the Q.931 bearer
// capability octets 3 onwards. ANSI carries it as a mandatory IAM parameter.
type UserServiceInformation []byte

// Information transfer capability values (octet 3 bits 5-1).
const (
	ITCSpeech       uint8 = 0
	ITCUnrestricted uint8 = 8
	ITC3k1Audio     uint8 = 16
)

// Layer 1 protocol values (octet 5 bits 5-1).
const (
	Layer1MuLaw uint8 = 2
	Layer1ALaw  uint8 = 3
)

// NewUserServiceInformation builds the three-octet form: ITU coding standard,
// circuit mode at 64 kbit/s, and the layer 1 protocol (e.g. 3.1 kHz audio, µ-law is
// 90 90 A2).
func NewUserServiceInformation(itc, layer1 uint8) UserServiceInformation {
	return UserServiceInformation{0x80 | itc&0x1f, 0x90, 0xa0 | layer1&0x1f}
}

func (p UserServiceInformation) CodingStandard() uint8 { return p.octet(0) >> 5 & 3 }
func (p UserServiceInformation) TransferCapability() uint8 {
	return p.octet(0) & 0x1f
}
func (p UserServiceInformation) TransferMode() uint8 { return p.octet(1) >> 5 & 3 }
func (p UserServiceInformation) TransferRate() uint8 { return p.octet(1) & 0x1f }

// Layer1 returns the user information layer 1 protocol, or 0 if octet 5 is absent.
func (p UserServiceInformation) Layer1() uint8 {
	for i := 2; i < len(p); i++ {
		if p[i]>>5&3 == 1 { // layer identification 1
			return p[i] & 0x1f
		}
	}
	return 0
}

func (p UserServiceInformation) octet(i int) uint8 {
	if i < len(p) {
		return p[i]
	}
	return 0
}

func (p UserServiceInformation) Code() ParameterCode { return ParamUserServiceInformation }
func (p UserServiceInformation) MarshalLen() int     { return len(p) }
func (p UserServiceInformation) MarshalTo(b []byte) (int, error) {
	return copy(b, p), nil
}
func (p *UserServiceInformation) UnmarshalBinary(b []byte) error {
	if len(b) < 2 {
		return lengthError(ParamUserServiceInformation, len(b), "at least 2")
	}
	*p = b
	return nil
}
