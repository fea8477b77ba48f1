package isup

// CallReference is parameter 0x01 (Q.763 §3.8, national use; T1.113): a call
// identity and the point code of the exchange that allocated it.
//
// ITU form, 5 octets: call identity (3 octets, most significant first), then the
// 14-bit signalling point code, least significant octet first, with octet 5 bits 8-7
// spare. ANSI form, 6 octets: call identity, then the 24-bit point code as member,
// cluster, network. ANSI selects the form, so a decoded value keeps its length.
type CallReference struct {
	CallIdentity uint32 // 24 bits
	// PointCode is the 14-bit ITU code, or the ANSI code as network<<16 |
	// cluster<<8 | member.
	PointCode uint32
	// Spare is octet 5 of the ITU form masked to its spare bits (0xC0), in place.
	Spare uint8
	ANSI  bool
}

// NewCallReference builds the form of the variant.
func NewCallReference(v Variant, callIdentity, pointCode uint32) CallReference {
	return CallReference{CallIdentity: callIdentity, PointCode: pointCode, ANSI: v == ANSI}
}

func (p CallReference) Code() ParameterCode { return ParamCallReference }
func (p CallReference) MarshalLen() int {
	if p.ANSI {
		return 6
	}
	return 5
}
func (p CallReference) MarshalTo(b []byte) (int, error) {
	b[0], b[1], b[2] = byte(p.CallIdentity>>16), byte(p.CallIdentity>>8), byte(p.CallIdentity)
	if p.ANSI {
		b[3], b[4], b[5] = byte(p.PointCode), byte(p.PointCode>>8), byte(p.PointCode>>16)
		return 6, nil
	}
	b[3], b[4] = byte(p.PointCode), byte(p.PointCode>>8)&0x3f|p.Spare&0xc0
	return 5, nil
}
func (p *CallReference) UnmarshalBinary(b []byte) error {
	if len(b) != 5 && len(b) != 6 {
		return lengthError(ParamCallReference, len(b), "5 (ITU) or 6 (ANSI)")
	}
	r := CallReference{CallIdentity: uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])}
	if len(b) == 6 {
		r.ANSI = true
		r.PointCode = uint32(b[3]) | uint32(b[4])<<8 | uint32(b[5])<<16
	} else {
		r.PointCode = uint32(b[3]) | uint32(b[4]&0x3f)<<8
		r.Spare = b[4] & 0xc0
	}
	*p = r
	return nil
}

// UserToUserInformation is parameter 0x20 (Q.763 §3.61): the Q.931 user-user
// information element contents (protocol discriminator, then user data), passed end
// to end unexamined.
type UserToUserInformation []byte

func (p UserToUserInformation) Code() ParameterCode { return ParamUserToUserInformation }
func (p UserToUserInformation) MarshalLen() int     { return len(p) }
func (p UserToUserInformation) MarshalTo(b []byte) (int, error) {
	return copy(b, p), nil
}
func (p *UserToUserInformation) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamUserToUserInformation, len(b), "at least 1")
	}
	*p = b
	return nil
}

// Circuit assignment map types (CircuitAssignmentMap.Type).
const (
	MapType1544 uint8 = 1 // 1544 kbit/s digital path, 24 circuits (3 map octets)
	MapType2048 uint8 = 2 // 2048 kbit/s digital path, 31 circuits (4 map octets)
)

// CircuitAssignmentMap is parameter 0x25 (Q.763 §3.69; T1.113): which 64 kbit/s
// circuits of a digital path make up an N×64 kbit/s connection. Octet 1: map type in
// bits 6-1, bits 8-7 spare. Then the map: bit 1 of the first map octet is circuit 1.
type CircuitAssignmentMap struct {
	Type uint8
	// Spare is octet 1 masked to its spare bits (0xC0), in place.
	Spare uint8
	Map   []byte
}

// NewCircuitAssignmentMap returns an empty map of the type: 3 map octets for
// MapType1544, 4 otherwise.
func NewCircuitAssignmentMap(mapType uint8) CircuitAssignmentMap {
	n := 4
	if mapType == MapType1544 {
		n = 3
	}
	return CircuitAssignmentMap{Type: mapType, Map: make([]byte, n)}
}

// Used reports whether circuit n (1-based, as numbered in the map) is assigned.
func (p CircuitAssignmentMap) Used(n int) bool {
	i := n - 1
	if i < 0 || i/8 >= len(p.Map) {
		return false
	}
	return p.Map[i/8]&(1<<(i%8)) != 0
}

// Set marks circuit n (1-based) assigned or not; n must lie within the map.
func (p CircuitAssignmentMap) Set(n int, on bool) {
	i := n - 1
	if on {
		p.Map[i/8] |= 1 << (i % 8)
	} else {
		p.Map[i/8] &^= 1 << (i % 8)
	}
}

// Count is the number of circuits assigned.
func (p CircuitAssignmentMap) Count() int {
	c := 0
	for i := 1; i <= 8*len(p.Map); i++ {
		if p.Used(i) {
			c++
		}
	}
	return c
}

func (p CircuitAssignmentMap) Code() ParameterCode { return ParamCircuitAssignmentMap }
func (p CircuitAssignmentMap) MarshalLen() int     { return 1 + len(p.Map) }
func (p CircuitAssignmentMap) MarshalTo(b []byte) (int, error) {
	b[0] = p.Type&0x3f | p.Spare&0xc0
	return 1 + copy(b[1:], p.Map), nil
}
func (p *CircuitAssignmentMap) UnmarshalBinary(b []byte) error {
	if len(b) < 2 {
		return lengthError(ParamCircuitAssignmentMap, len(b), "at least 2")
	}
	*p = CircuitAssignmentMap{Type: b[0] & 0x3f, Spare: b[0] & 0xc0, Map: b[1:]}
	return nil
}

// Notification indicator values (GenericNotificationIndicator, Q.763 §3.25).
const (
	NotifyUserSuspended          uint8 = 0x00
	NotifyUserResumed            uint8 = 0x01
	NotifyBearerServiceChange    uint8 = 0x02
	NotifyCallCompletionDelay    uint8 = 0x04
	NotifyConferenceEstablished  uint8 = 0x42
	NotifyConferenceDisconnected uint8 = 0x43
	NotifyOtherPartyAdded        uint8 = 0x44
	NotifyCallIsWaiting          uint8 = 0x60
	NotifyDiversionActivated     uint8 = 0x68
	NotifyTransferAlerting       uint8 = 0x69
	NotifyTransferActive         uint8 = 0x6a
	NotifyRemoteHold             uint8 = 0x79
	NotifyRemoteRetrieval        uint8 = 0x7a
	NotifyCallIsDiverting        uint8 = 0x7b
)

// GenericNotificationIndicator is parameter 0x2C (Q.763 §3.25): octets of a 7-bit
// notification indicator each, bit 8 the extension bit (1 on the last octet of an
// indicator). Usually one octet; the octets are kept as received.
type GenericNotificationIndicator []byte

// NewGenericNotificationIndicator builds one octet per value, each marked last.
func NewGenericNotificationIndicator(values ...uint8) GenericNotificationIndicator {
	p := make(GenericNotificationIndicator, len(values))
	for i, v := range values {
		p[i] = 0x80 | v&0x7f
	}
	return p
}

// Len is the number of octets.
func (p GenericNotificationIndicator) Len() int { return len(p) }

// Notification returns the 7-bit value of octet i.
func (p GenericNotificationIndicator) Notification(i int) uint8 { return p[i] & 0x7f }

func (p GenericNotificationIndicator) Code() ParameterCode { return ParamGenericNotification }
func (p GenericNotificationIndicator) MarshalLen() int     { return len(p) }
func (p GenericNotificationIndicator) MarshalTo(b []byte) (int, error) {
	return copy(b, p), nil
}
func (p *GenericNotificationIndicator) UnmarshalBinary(b []byte) error {
	if len(b) < 1 {
		return lengthError(ParamGenericNotification, len(b), "at least 1")
	}
	if b[len(b)-1]&0x80 == 0 {
		return extLengthError(ParamGenericNotification, len(b), -1)
	}
	*p = b
	return nil
}
