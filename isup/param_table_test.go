package isup

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// paramCase holds a structured parameter value and its wire octets side by side, one
// comment per octet; both directions are checked.
type paramCase struct {
	name string
	val  ParamEncoder
	wire []byte
}

// newParamOf returns a fresh pointer of the dynamic type of v, to decode into.
func newParamOf(v ParamEncoder) Param {
	return reflect.New(reflect.TypeOf(v)).Interface().(Param)
}

var paramCases = []paramCase{
	{"call reference ITU", CallReference{CallIdentity: 0x123456, PointCode: 0x1234}, []byte{
		0x12, 0x34, 0x56, // call identity 0x123456, most significant octet first
		0x34, // point code bits 8-1
		0x12, // spare 00, point code bits 14-9
	}},
	{"call reference ITU spare bits", CallReference{CallIdentity: 1, PointCode: 0x3fff, Spare: 0xc0}, []byte{
		0x00, 0x00, 0x01, // call identity 1
		0xff, // point code bits 8-1
		0xff, // spare 11 kept, point code bits 14-9
	}},
	{"call reference ANSI", CallReference{CallIdentity: 0xabcdef, PointCode: 0x0a0b0c, ANSI: true}, []byte{
		0xab, 0xcd, 0xef, // call identity
		0x0c, // member
		0x0b, // cluster
		0x0a, // network
	}},
	{"optional forward call indicators", NewOptionalForwardCallIndicators(CUGOutgoingAccessAllowed, true), []byte{
		0x82, // H connected line identity requested, C no segmentation, BA 10 CUG outgoing access allowed
	}},
	{"redirecting number odd", RedirectingNumber{NatureOfAddress: NAINational, NumberingPlan: NPIISDN, Presentation: PresentationRestricted, Digits: MustDigits("21234")}, []byte{
		0x83,       // odd, NAI 3 national
		0x14,       // spare 0, NPI 1 E.164, APRI 01 restricted, spare 00
		0x12, 0x32, // digits 2 1, 2 3
		0x04, // digit 4, filler 0
	}},
	{"redirecting number spares", RedirectingNumber{NatureOfAddress: NAIInternational, NumberingPlan: NPIISDN, Spare: 0x83, Digits: MustDigits("4930")}, []byte{
		0x04, // even, NAI 4 international
		0x93, // spare bit 8 set, NPI 1, APRI 00, spare bits 2-1 set
		0x94, // digits 4 9
		0x03, // digits 3 0
	}},
	{"redirection number", RedirectionNumber{NatureOfAddress: NAINational, INN: 1, NumberingPlan: NPIISDN, Digits: MustDigits("5551234")}, []byte{
		0x83,             // odd, NAI 3 national
		0x90,             // INN 1 not allowed, NPI 1, spare 0000
		0x55, 0x15, 0x32, // digits 5 5, 5 1, 2 3
		0x04, // digit 4, filler 0
	}},
	{"redirection information", NewRedirectionInformation(RedirDiverted, RedirReasonBusy, 1, RedirReasonNoReply), []byte{
		0x13, // HGFE original reason 1 busy, D spare, CBA 011 call diverted
		0x21, // PONM reason 2 no reply, L spare, KJI counter 1
	}},
	{"redirection information one octet", RedirectionInformation{Indicator: RedirRerouted, OriginalReason: RedirReasonUnconditional, Spare: 1, OneOctet: true}, []byte{
		0x39, // HGFE original reason 3 unconditional, D spare 1 kept, CBA 001 rerouted; no octet 2 (pre-1988)
	}},
	{"user-to-user information", UserToUserInformation{0x04, 'h', 'i'}, []byte{
		0x04,     // protocol discriminator IA5
		'h', 'i', // user data
	}},
	{"connected number", ConnectedNumber{NatureOfAddress: NAIInternational, NumberingPlan: NPIISDN, Screening: ScreeningNetwork, Digits: MustDigits("441234")}, []byte{
		0x04,             // even, NAI 4 international
		0x13,             // spare 0, NPI 1, APRI 00 allowed, screening 11 network provided
		0x44, 0x21, 0x43, // digits 4 4, 1 2, 3 4
	}},
	{"connected number not available", ConnectedNumber{Presentation: PresentationNotAvailable, Spare: 0x80, Digits: Digits{BCD: []byte{}}}, []byte{
		0x00, // even, NAI 0
		0x88, // spare bit 8 kept, NPI 0, APRI 10 address not available, screening 00; no digits
	}},
	{"circuit assignment map 1544", CircuitAssignmentMap{Type: MapType1544, Map: []byte{0x03, 0x00, 0x80}}, []byte{
		0x01, // spare 00, map type 1 (1544 kbit/s)
		0x03, // circuits 1 and 2
		0x00, // circuits 9-16 unused
		0x80, // circuit 24
	}},
	{"circuit assignment map 2048 spare", CircuitAssignmentMap{Type: MapType2048, Spare: 0x40, Map: []byte{0xff, 0xff, 0xff, 0x7f}}, []byte{
		0x42,                   // spare 01 kept, map type 2 (2048 kbit/s)
		0xff, 0xff, 0xff, 0x7f, // circuits 1-31
	}},
	{"original called number", OriginalCalledNumber{NatureOfAddress: NAINational, NumberingPlan: NPIISDN, Presentation: PresentationAllowed, Digits: MustDigits("20")}, []byte{
		0x03, // even, NAI 3
		0x10, // spare, NPI 1, APRI 00, spare
		0x02, // digits 2 0
	}},
	{"optional backward call indicators", NewOptionalBackwardCallIndicators(true, true), []byte{
		0x03, // D no MLPP, C no segmentation, B call diversion may occur, A in-band info
	}},
	{"optional backward call indicators national bits", OptionalBackwardCallIndicators(0xf4), []byte{
		0xf4, // HGFE national use kept, C simple segmentation
	}},
	{"generic notification", NewGenericNotificationIndicator(NotifyRemoteHold), []byte{
		0xf9, // ext 1 last octet, 0x79 remote hold
	}},
	{"generic notification extended", GenericNotificationIndicator{0x42, 0x81}, []byte{
		0x42, // ext 0 more follows, 0x42 conference established
		0x81, // ext 1 last, 0x01
	}},
	{"propagation delay counter", PropagationDelayCounter(300), []byte{
		0x01, 0x2c, // 300 ms, most significant octet first
	}},
	{"echo control information", NewEchoControlInformation(EchoInfoIncluded, EchoInfoNotIncludedAvailable, EchoRequestNone, EchoRequestActivate), []byte{
		0x4e, // HG 01 incoming activate, FE 00, DC 11 incoming not included but available, BA 10 outgoing included
	}},
	{"message compatibility information", NewMessageCompatibilityInformation(InstrSendNotification|InstrDiscardMessage, BNPassOn), []byte{
		0x8c, // ext 1, GF 00 pass on, E 0 release call, D discard message, C send notification, B 0, A transit
	}},
	{"message compatibility information extended", MessageCompatibilityInformation{0x13, 0x80}, []byte{
		0x13, // ext 0, E pass on not possible: discard, B release call, A end node
		0x80, // ext 1, reserved octet kept
	}},
	{"parameter compatibility information", ParameterCompatibilityInformation(nil).
		Append(ParamGenericNumber, InstrSendNotification|InstrDiscardParameter, PassOnDiscardParameter, BNPassOn).
		Append(ParamHopCounter, InstrReleaseCall, PassOnReleaseCall, BNDiscardMessage), []byte{
		0xc0, // upgraded parameter: generic number
		0xd4, // ext 1, GF 10 discard parameter, E discard parameter, D 0, C send notification, B 0, A 0
		0x3d, // upgraded parameter: hop counter
		0x02, // ext 0 (octet 2a follows), GF 00 release call, B release call
		0x81, // ext 1, spare, BA 01 broadband/narrowband: discard message
	}},
	{"hop counter", NewHopCounter(20), []byte{
		0x14, // spare 000, counter 20
	}},
	{"hop counter spare", HopCounter(0xe5), []byte{
		0xe5, // spare 111 kept, counter 5
	}},
	{"location number", LocationNumber{NatureOfAddress: NAINational, INN: 1, NumberingPlan: NPIISDN, Presentation: PresentationRestricted, Screening: ScreeningNetwork, Digits: MustDigits("212")}, []byte{
		0x83, // odd, NAI 3
		0x97, // INN 1, NPI 1, APRI 01 restricted, screening 11 network
		0x12, // digits 2 1
		0x02, // digit 2, filler 0
	}},
	{"generic number", GenericNumber{Qualifier: QualifierAdditionalCalling, NatureOfAddress: NAINational, NumberingPlan: NPIISDN, Screening: ScreeningUserNotVerified, Digits: MustDigits("9876")}, []byte{
		0x06,       // number qualifier 6 additional calling party number
		0x03,       // even, NAI 3
		0x10,       // NI 0, NPI 1, APRI 00, screening 00 user provided not verified
		0x89, 0x67, // digits 9 8, 7 6
	}},
	{"generic digits BCD odd", GenericDigits{Type: DigitsAccountCode, Encoding: EncodingBCDOdd, Value: []byte{0x21, 0x03}}, []byte{
		0x20,       // encoding 001 BCD odd, type 00000 account code
		0x21, 0x03, // digits 1 2, 3 + filler
	}},
	{"generic digits IA5", NewGenericDigitsIA5(DigitsAuthorisationCode, "AB1"), []byte{
		0x41,          // encoding 010 IA5, type 00001 authorisation code
		'A', 'B', '1', // characters
	}},
	{"jurisdiction information", JurisdictionInformation{Digits: MustDigits("212555")}, []byte{
		0x12, // digits 2 1
		0x52, // digits 2 5
		0x55, // digits 5 5
	}},
	{"carrier identification 3 digit", CarrierIdentification{Type: NetworkIDNational, Plan: CarrierPlan3Digit, Digits: Digits{BCD: []byte{0x82, 0x03}}}, []byte{
		0x21, // spare 0, type 010 national, plan 0001 3-digit CIC
		0x82, // digits 2 8
		0x03, // digit 3, 0 filler
	}},
	{"generic name", NewGenericName(NameCalling, NamePresentationAllowed, "JOHN"), []byte{
		0x20,               // type 001 calling name, available, spare 00, presentation 00 allowed
		'J', 'O', 'H', 'N', // IA5 name
	}},
	{"generic name unavailable", GenericName{Type: NameCalling, Unavailable: true, Spare: 0x04, Presentation: NamePresentationNoIndic}, []byte{
		0x37, // type 001, bit 5 not available, spare 01 kept, presentation 11 no indication
	}},
	{"originating line information", OriginatingLineInformation(27), []byte{
		0x1b, // ANI II 27 (coin)
	}},
	{"charge number", ChargeNumber{NatureOfAddress: ChargeANICallingNational, NumberingPlan: NPIISDN, Digits: MustDigits("2125551234")}, []byte{
		0x03,                         // even, NAI 3 ANI of the calling party, national number
		0x10,                         // spare, NPI 1, spare 0000
		0x12, 0x52, 0x55, 0x21, 0x43, // digits 2125551234
	}},
	{"circuit group characteristic", NewCircuitGroupCharacteristic(CarrierDigital, DoubleSeizingOdd, AlarmCarrierHardware, ContinuityStatistical), []byte{
		0xa6, // HG 10 statistical, FE 10 hardware, DC 01 odd circuits, BA 10 digital
	}},
	{"circuit validation response", CVRSuccess, []byte{
		0x01, // BA 01 success
	}},
}

func TestParamTable(t *testing.T) {
	for _, c := range paramCases {
		t.Run(c.name, func(t *testing.T) {
			p := newParamOf(c.val)
			if p.Code() != c.val.Code() {
				t.Fatalf("code %v, value says %v", p.Code(), c.val.Code())
			}
			if err := p.UnmarshalBinary(c.wire); err != nil {
				t.Fatalf("UnmarshalBinary(% x): %v", c.wire, err)
			}
			if got := reflect.ValueOf(p).Elem().Interface(); !reflect.DeepEqual(got, c.val) {
				t.Errorf("UnmarshalBinary(% x)\n got %#v\nwant %#v", c.wire, got, c.val)
			}
			if n := c.val.MarshalLen(); n != len(c.wire) {
				t.Fatalf("MarshalLen %d, want %d", n, len(c.wire))
			}
			buf := make([]byte, len(c.wire))
			n, err := c.val.MarshalTo(buf)
			if err != nil || n != len(c.wire) || !bytes.Equal(buf, c.wire) {
				t.Errorf("MarshalTo = % x, %d, %v; want % x", buf, n, err, c.wire)
			}
			if a := testing.AllocsPerRun(20, func() { c.val.MarshalTo(buf) }); a != 0 {
				t.Errorf("MarshalTo allocates %v times", a)
			}
		})
	}
}

// paramTypes lists every parameter type of the param_*.go files, for the table,
// random and fuzz tests.
var paramTypes = []func() Param{
	func() Param { return new(CallReference) },
	func() Param { return new(OptionalForwardCallIndicators) },
	func() Param { return new(RedirectingNumber) },
	func() Param { return new(RedirectionNumber) },
	func() Param { return new(RedirectionInformation) },
	func() Param { return new(UserToUserInformation) },
	func() Param { return new(ConnectedNumber) },
	func() Param { return new(CircuitAssignmentMap) },
	func() Param { return new(OriginalCalledNumber) },
	func() Param { return new(OptionalBackwardCallIndicators) },
	func() Param { return new(GenericNotificationIndicator) },
	func() Param { return new(PropagationDelayCounter) },
	func() Param { return new(EchoControlInformation) },
	func() Param { return new(MessageCompatibilityInformation) },
	func() Param { return new(ParameterCompatibilityInformation) },
	func() Param { return new(HopCounter) },
	func() Param { return new(LocationNumber) },
	func() Param { return new(GenericNumber) },
	func() Param { return new(GenericDigits) },
	func() Param { return new(JurisdictionInformation) },
	func() Param { return new(CarrierIdentification) },
	func() Param { return new(GenericName) },
	func() Param { return new(OriginatingLineInformation) },
	func() Param { return new(ChargeNumber) },
	func() Param { return new(CircuitGroupCharacteristic) },
	func() Param { return new(CircuitValidationResponse) },
}

func TestParamTableCoversEveryType(t *testing.T) {
	seen := map[reflect.Type]bool{}
	for _, c := range paramCases {
		seen[reflect.TypeOf(c.val)] = true
	}
	for _, f := range paramTypes {
		if ty := reflect.TypeOf(f()).Elem(); !seen[ty] {
			t.Errorf("no table row for %v", ty)
		}
	}
}

func TestParamWrongLengths(t *testing.T) {
	cases := []struct {
		p    Param
		wire []byte
	}{
		{new(CallReference), []byte{1, 2, 3, 4}},
		{new(CallReference), make([]byte, 7)},
		{new(OptionalForwardCallIndicators), nil},
		{new(OptionalForwardCallIndicators), []byte{1, 2}},
		{new(RedirectingNumber), []byte{0x03}},
		{new(RedirectingNumber), []byte{0x83, 0x10}}, // odd but no digits
		{new(RedirectionNumber), nil},
		{new(RedirectionInformation), nil},
		{new(RedirectionInformation), []byte{1, 2, 3}},
		{new(UserToUserInformation), nil},
		{new(ConnectedNumber), []byte{0x04}},
		{new(CircuitAssignmentMap), []byte{0x01}},
		{new(OriginalCalledNumber), nil},
		{new(OptionalBackwardCallIndicators), []byte{}},
		{new(GenericNotificationIndicator), nil},
		{new(GenericNotificationIndicator), []byte{0x79}}, // last octet says more follow
		{new(PropagationDelayCounter), []byte{1}},
		{new(EchoControlInformation), []byte{1, 1}},
		{new(MessageCompatibilityInformation), nil},
		{new(MessageCompatibilityInformation), []byte{0x01}},       // chain does not end
		{new(MessageCompatibilityInformation), []byte{0x81, 0x80}}, // octet after the chain
		{new(ParameterCompatibilityInformation), []byte{0xc0}},
		{new(ParameterCompatibilityInformation), []byte{0xc0, 0x01}},             // chain does not end
		{new(ParameterCompatibilityInformation), []byte{0xc0, 0x81, 0x3d}},       // code without instructions
		{new(ParameterCompatibilityInformation), []byte{0xc0, 0x01, 0x01, 0x01}}, // chain runs out
		{new(HopCounter), nil},
		{new(LocationNumber), []byte{0x03}},
		{new(GenericNumber), []byte{0x06, 0x03}},
		{new(GenericNumber), []byte{0x06, 0x83, 0x10}}, // odd but no digits
		{new(GenericDigits), nil},
		{new(JurisdictionInformation), nil},
		{new(CarrierIdentification), nil},
		{new(GenericName), nil},
		{new(OriginatingLineInformation), []byte{1, 2}},
		{new(ChargeNumber), []byte{0x03}},
		{new(CircuitGroupCharacteristic), nil},
		{new(CircuitValidationResponse), []byte{1, 2}},
	}
	for _, c := range cases {
		err := c.p.UnmarshalBinary(c.wire)
		var e *Error
		if !errors.As(err, &e) || e.Param != c.p.Code() {
			t.Errorf("%T(% x): error %v, want *Error for %v", c.p, c.wire, err, c.p.Code())
			continue
		}
		if !errors.Is(err, ErrInvalidLength) && !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%T(% x): error %v wraps neither ErrInvalidLength nor ErrInvalidValue", c.p, c.wire, err)
		}
	}
}

func TestParameterCompatibilityInstructions(t *testing.T) {
	var p ParameterCompatibilityInformation
	if err := p.UnmarshalBinary([]byte{
		0xc0, // generic number
		0xd4, // ext 1, GF 10, E, C
		0x3d, // hop counter
		0x0b, // ext 0, D, B, A
		0x03, // ext 0, octet 2a: BA 11 discard parameter
		0x80, // ext 1, reserved octet 2b
		0x31, // propagation delay counter
		0xe0, // ext 1, GF 11 reserved
	}); err != nil {
		t.Fatal(err)
	}
	gn, ok := p.Instructions(ParamGenericNumber)
	if !ok || gn.EndNodeInterpretation() || gn.ReleaseCall() || !gn.SendNotification() || gn.DiscardMessage() ||
		!gn.DiscardParameter() || gn.PassOnNotPossible() != PassOnDiscardParameter || gn.BroadbandNarrowband() != BNPassOn {
		t.Errorf("generic number instructions % x wrong", gn)
	}
	hc, ok := p.Instructions(ParamHopCounter)
	if !ok || !hc.EndNodeInterpretation() || !hc.ReleaseCall() || hc.SendNotification() || !hc.DiscardMessage() ||
		hc.DiscardParameter() || hc.PassOnNotPossible() != PassOnReleaseCall || hc.BroadbandNarrowband() != BNDiscardParameter || len(hc) != 3 {
		t.Errorf("hop counter instructions % x wrong", hc)
	}
	if pd, ok := p.Instructions(ParamPropagationDelayCounter); !ok || pd.PassOnNotPossible() != 3 {
		t.Errorf("propagation delay instructions % x wrong", pd)
	}
	if _, ok := p.Instructions(ParamCallReference); ok {
		t.Error("instructions found for a parameter not listed")
	}
	var codes []ParameterCode
	for c := range p.All() {
		codes = append(codes, c)
	}
	if !reflect.DeepEqual(codes, []ParameterCode{ParamGenericNumber, ParamHopCounter, ParamPropagationDelayCounter}) {
		t.Errorf("All yields %v", codes)
	}
	// A hand-built malformed value must not make All loop or panic.
	for range ParameterCompatibilityInformation([]byte{0xc0, 0x01}).All() {
		t.Error("All yielded an entry of a malformed value")
	}
}

func TestMessageCompatibilityAccessors(t *testing.T) {
	m := MessageCompatibilityInformation{0xf3} // ext, GF 11, E, B, A
	if !m.EndNodeInterpretation() || !m.ReleaseCall() || m.SendNotification() || m.DiscardMessage() ||
		!m.PassOnNotPossibleDiscard() || m.BroadbandNarrowband() != 3 {
		t.Errorf("accessors of % x wrong", m)
	}
	if (MessageCompatibilityInformation{}).ReleaseCall() {
		t.Error("empty value reports release call")
	}
}

func TestParamAccessors(t *testing.T) {
	ri := NewRedirectionInformation(RedirDivertedAllRestricted, RedirReasonUnconditional, 5, RedirReasonDeflectImmediate)
	var back RedirectionInformation
	buf := make([]byte, ri.MarshalLen())
	ri.MarshalTo(buf)
	if err := back.UnmarshalBinary(buf); err != nil || back != ri {
		t.Errorf("redirection information round trip: %+v, %v", back, err)
	}

	if h := NewHopCounter(1).Decrement(); h.Count() != 0 || h.Decrement() != h {
		t.Errorf("hop counter decrement: %d", h.Count())
	}
	if h := HopCounter(0xe0).Decrement(); h != 0xe0 {
		t.Errorf("decrement at 0 changed spare bits: %#x", uint8(h))
	}

	cam := NewCircuitAssignmentMap(MapType1544)
	cam.Set(1, true)
	cam.Set(24, true)
	if !cam.Used(1) || cam.Used(2) || !cam.Used(24) || cam.Used(25) || cam.Used(0) || cam.Count() != 2 || len(cam.Map) != 3 {
		t.Errorf("circuit assignment map % x", cam.Map)
	}

	ci, err := NewCarrierIdentification("288")
	if err != nil || ci.CarrierCode() != "288" || ci.Plan != CarrierPlan3Digit {
		t.Errorf("carrier identification %+v %q %v", ci, ci.CarrierCode(), err)
	}
	buf = make([]byte, ci.MarshalLen())
	ci.MarshalTo(buf)
	if !bytes.Equal(buf, []byte{0x21, 0x82, 0x08}) {
		t.Errorf("carrier identification encodes % x", buf)
	}
	if ci4, err := NewCarrierIdentification("0288"); err != nil || ci4.CarrierCode() != "0288" {
		t.Errorf("4-digit carrier %q %v", ci4.CarrierCode(), err)
	}
	if _, err := NewCarrierIdentification("12"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("2-digit carrier: %v", err)
	}

	gd, err := NewGenericDigitsBCD(DigitsAccountCode, "123")
	if err != nil || gd.Encoding != EncodingBCDOdd {
		t.Fatalf("generic digits %+v %v", gd, err)
	}
	if d, ok := gd.Digits(); !ok || d.String() != "123" {
		t.Errorf("generic digits BCD %q", d.String())
	}
	if _, ok := gd.IA5(); ok {
		t.Error("BCD generic digits read as IA5")
	}
	if s, ok := NewGenericDigitsIA5(5, "x9").IA5(); !ok || s != "x9" {
		t.Errorf("generic digits IA5 %q", s)
	}

	if _, err := NewJurisdictionInformation("21255"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("odd jurisdiction: %v", err)
	}
	if j, err := NewJurisdictionInformation("212555"); err != nil || j.Digits.String() != "212555" {
		t.Errorf("jurisdiction %v %v", j, err)
	}

	gni := NewGenericNotificationIndicator(NotifyRemoteHold, NotifyRemoteRetrieval)
	if gni.Len() != 2 || gni.Notification(1) != NotifyRemoteRetrieval {
		t.Errorf("generic notification % x", []byte(gni))
	}

	cg := NewCircuitGroupCharacteristic(CarrierAnalog, DoubleSeizingAll, AlarmCarrierSoftware, ContinuityPerCall)
	if cg.Carrier() != CarrierAnalog || cg.DoubleSeizing() != DoubleSeizingAll || cg.AlarmCarrier() != AlarmCarrierSoftware || cg.ContinuityCheck() != ContinuityPerCall {
		t.Errorf("circuit group characteristic %#x", uint8(cg))
	}
	if !CVRSuccess.Successful() || CVRFailure.Successful() {
		t.Error("CVR response")
	}
	ec := NewEchoControlInformation(1, 2, 3, 0)
	if ec.OutgoingInfo() != 1 || ec.IncomingInfo() != 2 || ec.OutgoingRequest() != 3 || ec.IncomingRequest() != 0 {
		t.Errorf("echo control %#x", uint8(ec))
	}
	of := OptionalForwardCallIndicators(0x87)
	if of.CUG() != 3 || !of.SimpleSegmentation() || !of.ConnectedLineIdentityReq() {
		t.Errorf("optional FCI %#x", uint8(of))
	}
	ob := OptionalBackwardCallIndicators(0x0c)
	if ob.InBandInfo() || ob.CallDiversionMayOccur() || !ob.SimpleSegmentation() || !ob.MLPPUser() {
		t.Errorf("optional BCI %#x", uint8(ob))
	}
	cr := NewCallReference(ANSI, 7, 0x010203)
	if cr.MarshalLen() != 6 || NewCallReference(ITU, 7, 100).MarshalLen() != 5 {
		t.Error("call reference form")
	}
}

// TestNewAddressParams checks the constructors against the table's wire forms.
func TestNewAddressParams(t *testing.T) {
	enc := func(p ParamEncoder, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, p.MarshalLen())
		p.MarshalTo(b)
		return b
	}
	for _, c := range []struct {
		got, want []byte
	}{
		{enc(NewRedirectingNumber(NAINational, NPIISDN, "21234")), []byte{0x83, 0x10, 0x12, 0x32, 0x04}},
		{enc(NewOriginalCalledNumber(NAINational, NPIISDN, "20")), []byte{0x03, 0x10, 0x02}},
		{enc(NewRedirectionNumber(NAINational, NPIISDN, "5551234")), []byte{0x83, 0x10, 0x55, 0x15, 0x32, 0x04}},
		{enc(NewConnectedNumber(NAIInternational, NPIISDN, "441234")), []byte{0x04, 0x13, 0x44, 0x21, 0x43}},
		{enc(NewLocationNumber(NAINational, NPIISDN, "212")), []byte{0x83, 0x13, 0x12, 0x02}},
		{enc(NewGenericNumber(QualifierAdditionalCalling, NAINational, NPIISDN, "9876")), []byte{0x06, 0x03, 0x11, 0x89, 0x67}},
		{enc(NewChargeNumber(ChargeANICallingNational, "2125551234")), []byte{0x03, 0x10, 0x12, 0x52, 0x55, 0x21, 0x43}},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("got % x, want % x", c.got, c.want)
		}
	}
	if _, err := NewChargeNumber(1, "12x"); !errors.Is(err, ErrBadDigit) {
		t.Errorf("bad digit: %v", err)
	}
}
