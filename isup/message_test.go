package isup

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

type messageCase struct {
	name    string
	variant Variant
	msg     Message
	wire    []byte
}

func messageCases(t testing.TB) []messageCase {
	cgpn, err := NewCallingPartyNumber(NAINational, NPIISDN, "1234567890")
	if err != nil {
		t.Fatal(err)
	}
	return []messageCase{
		{"IAM ITU", ITU, &InitialAddress{
			Circuit:              Circuit{CIC: 1},
			NatureOfConnection:   0,
			ForwardCall:          NewForwardCallIndicators(true, ISUPNotRequired, true),
			CallingPartyCategory: CategoryOrdinary,
			TransmissionMedium:   TMRSpeech,
			CalledParty:          mustCdPN(t, NAINational, NPIISDN, "12345"),
			Optional:             mustOptional(t, cgpn),
		}, hx(t,
			"01 00",                      // CIC 1
			"01",                         // IAM
			"00",                         // NCI: no satellite, no continuity check, no echo device
			"60 01",                      // FCI: F ISUP all the way, HG not required; I originating ISDN
			"0A",                         // CPC ordinary
			"00",                         // TMR speech
			"02",                         // pointer to CdPN
			"07",                         // pointer to optional part
			"05 83 10 21 43 05",          // CdPN: len 5, odd, NAI 3, E.164, "12345"
			"0A 07 03 11 21 43 65 87 09", // CgPN: NAI 3, E.164, allowed, user verified
			"00",                         // end of optional parameters
		)},
		{"IAM ANSI", ANSI, &InitialAddress{
			Circuit:              Circuit{CIC: 0x2abc},
			ForwardCall:          ForwardCallIndicators(0x0120),
			CallingPartyCategory: CategoryUnknown,
			UserServiceInfo:      NewUserServiceInformation(ITC3k1Audio, Layer1MuLaw),
			CalledParty: CalledPartyNumber{NatureOfAddress: NAINational, INN: 1, NumberingPlan: NPIPrivate,
				Digits: MustDigits("6690912345F")},
			Optional: Optional{{Code: ParamCallingPartyNumber, Value: hx(t, "03 93 59 24 63 79 87")}},
		}, hx(t,
			"BC 2A",                      // CIC 0x2ABC: 14 bits, the upper octet's 6 low bits
			"01",                         // IAM
			"00",                         // NCI
			"20 01",                      // FCI
			"00",                         // CPC unknown
			"03",                         // pointer to USI (ANSI has no TMR but a variable USI)
			"06",                         // pointer to CdPN
			"0E",                         // pointer to optional part
			"03 90 90 A2",                // USI: 3.1 kHz audio, circuit 64 kbit/s, µ-law
			"08 83 D0 66 09 19 32 54 0F", // CdPN "6690912345" + ST, odd
			"0A 07 03 93 59 24 63 79 87", // CgPN, passed through raw
			"00",
		)},
		{"SAM", ITU, &SubsequentAddress{Circuit: Circuit{CIC: 9},
			SubsequentNumber: SubsequentNumber{Digits: MustDigits("678F")}},
			hx(t, "09 00", "02", "02", "00", "03 00 76 F8")}, // optional pointer 0: no optional part
		{"ACM", ITU, &AddressComplete{Circuit: Circuit{CIC: 1},
			BackwardCall: NewBackwardCallIndicators(2, 1, 0, false)},
			hx(t, "01 00", "06", "06 00", "00")}, // BCI: charge, subscriber free
		{"ACM with empty optional part", ITU, &AddressComplete{Circuit: Circuit{CIC: 1}, Optional: Optional{}},
			hx(t, "01 00", "06", "00 00", "01", "00")},
		{"CON", ITU, &Connect{Circuit: Circuit{CIC: 2}, BackwardCall: 0x1416},
			hx(t, "02 00", "07", "16 14", "00")},
		{"ANM", ITU, &Answer{Circuit: Circuit{CIC: 3}}, hx(t, "03 00", "09", "00")},
		{"CPG alerting", ITU, &CallProgress{Circuit: Circuit{CIC: 3}, Event: NewEventInformation(EventAlerting, false)},
			hx(t, "03 00", "2C", "01", "00")},
		{"REL with ACL", ITU, &Release{Circuit: Circuit{CIC: 0x0123},
			Cause:    NewCause(LocationPublicLocal, CauseSwitchingCongestion),
			Optional: mustOptional(t, AutomaticCongestionLevel(2))},
			hx(t,
				"23 01",    // CIC 0x123
				"0C",       // REL
				"02",       // pointer to cause
				"04",       // pointer to optional part
				"02 82 AA", // cause: ITU coding, location LN, value 42
				"27 01 02", // ACL level 2
				"00")},
		{"REL ANSI with diagnostics", ANSI, &Release{Circuit: Circuit{CIC: 5},
			Cause: CauseIndicators{CodingStandard: 2, Location: LocationTransit, Value: CauseNormalClearing, Diagnostics: []byte{0x01}}},
			hx(t, "05 00", "0C", "02", "00", "03 C3 90 01")},
		{"RLC ITU", ITU, &ReleaseComplete{Circuit: Circuit{CIC: 7}}, hx(t, "07 00", "10", "00")},
		{"RLC ANSI has no optional part", ANSI, &ReleaseComplete{Circuit: Circuit{CIC: 7}}, hx(t, "07 00", "10")},
		{"SUS", ITU, &SuspendResume{Kind: SUS, Circuit: Circuit{CIC: 8}, Indicators: 1}, hx(t, "08 00", "0D", "01", "00")},
		{"RES", ITU, &SuspendResume{Kind: RES, Circuit: Circuit{CIC: 8}}, hx(t, "08 00", "0E", "00", "00")},
		{"COT success", ITU, &Continuity{Circuit: Circuit{CIC: 4}, Indicators: 1}, hx(t, "04 00", "05", "01")},
		{"INR", ITU, &InformationRequest{Circuit: Circuit{CIC: 4}, Indicators: 0x0001}, hx(t, "04 00", "03", "01 00", "00")},
		{"INF", ITU, &Information{Circuit: Circuit{CIC: 4}, Indicators: 0x0003,
			Optional: Optional{{Code: ParamCallingPartyNumber, Value: hx(t, "83 13 21 43")}}},
			hx(t, "04 00", "04", "03 00", "01", "0A 04 83 13 21 43", "00")},
		{"CFN unknown message", ITU, &Confusion{Circuit: Circuit{CIC: 4},
			Cause: CauseIndicators{Location: LocationPublicLocal, Value: CauseMessageTypeNonExistent, Diagnostics: []byte{0x99}}},
			hx(t, "04 00", "2F", "02", "00", "03 82 E1 99")},
		{"BLO", ITU, &Simple{Kind: BLO, Circuit: Circuit{CIC: 0x0fff}}, hx(t, "FF 0F", "13")},
		{"UBA", ITU, &Simple{Kind: UBA, Circuit: Circuit{CIC: 1}}, hx(t, "01 00", "16")},
		{"RSC ANSI", ANSI, &Simple{Kind: RSC, Circuit: Circuit{CIC: 0x3fff}}, hx(t, "FF 3F", "12")},
		{"UCIC", ITU, &Simple{Kind: UCIC, Circuit: Circuit{CIC: 1}}, hx(t, "01 00", "2E")},
		{"GRS", ITU, &GroupReset{Kind: GRS, Circuit: Circuit{CIC: 1}, RangeAndStatus: RangeAndStatus{Range: 30}},
			hx(t, "01 00", "17", "01", "01 1E")},
		{"GRA", ITU, &GroupReset{Kind: GRA, Circuit: Circuit{CIC: 1},
			RangeAndStatus: RangeAndStatus{Range: 9, Status: []byte{0x01, 0x02}}},
			hx(t, "01 00", "29", "01", "03 09 01 02")}, // circuits 1 and 10 locally blocked
		{"CGB hardware", ITU, &GroupSupervision{Kind: CGB, Circuit: Circuit{CIC: 33}, Type: HardwareFailureOriented,
			RangeAndStatus: RangeAndStatus{Range: 7, Status: []byte{0xff}}},
			hx(t, "21 00", "18", "01", "01", "02 07 FF")},
		{"CGUA ANSI", ANSI, &GroupSupervision{Kind: CGUA, Circuit: Circuit{CIC: 33},
			RangeAndStatus: RangeAndStatus{Range: 1, Status: []byte{0x03}}},
			hx(t, "21 00", "1B", "00", "01", "02 01 03")},
		{"CQM", ITU, &CircuitQuery{Circuit: Circuit{CIC: 1}, RangeAndStatus: RangeAndStatus{Range: 2}},
			hx(t, "01 00", "2A", "01", "01 02")},
		{"CQR", ITU, &CircuitQueryResponse{Circuit: Circuit{CIC: 1}, RangeAndStatus: RangeAndStatus{Range: 2},
			States: CircuitStateIndicator{NewCircuitState(0, CallStateIdle, 0), NewCircuitState(1, CallStateIncomingBusy, 0), 0x03}},
			hx(t, "01 00", "2B", "02", "03", "01 02", "03 0C 05 03")}, // third: unequipped
		{"FAC generic", ITU, &Generic{Kind: FAC, Circuit: Circuit{CIC: 1}, Optional: Optional{{Code: ParamGenericNotification, Value: []byte{0x81}}}},
			hx(t, "01 00", "33", "01", "2C 01 81", "00")},
		{"FRJ generic", ITU, &Generic{Kind: FRJ, Circuit: Circuit{CIC: 1}, Fixed: []byte{0x02}, Variable: [][]byte{{0x82, 0x9f}}},
			hx(t, "01 00", "21", "02", "02", "00", "02 82 9F")},
		{"CVR ANSI", ANSI, &Generic{Kind: CVR, Circuit: Circuit{CIC: 1}, Fixed: []byte{0x01, 0x0b}},
			hx(t, "01 00", "EB", "01 0B", "00")},
		{"PAM opaque", ITU, &Generic{Kind: PAM, Circuit: Circuit{CIC: 1}, Body: []byte{0x09, 0x00}},
			hx(t, "01 00", "28", "09 00")},
		{"unknown type kept raw", ITU, &Unknown{Kind: 0x7F, Circuit: Circuit{CIC: 1}, Body: []byte{0xde, 0xad}},
			hx(t, "01 00", "7F", "DE AD")},
		{"ANSI-only type is unknown in ITU", ITU, &Unknown{Kind: CRA, Circuit: Circuit{CIC: 1}, Body: []byte{}},
			hx(t, "01 00", "E9")},
		{"CRA in ANSI", ANSI, &Simple{Kind: CRA, Circuit: Circuit{CIC: 1}}, hx(t, "01 00", "E9")},
	}
}

func TestMessagesEncode(t *testing.T) {
	for _, tc := range messageCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.msg, tc.variant)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if !bytes.Equal(got, tc.wire) {
				t.Errorf("Marshal\n got % X\nwant % X", got, tc.wire)
			}
			if n := MarshalLen(tc.msg, tc.variant); n != len(tc.wire) {
				t.Errorf("MarshalLen = %d, want %d", n, len(tc.wire))
			}
		})
	}
}

func TestMessagesDecode(t *testing.T) {
	for _, tc := range messageCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(tc.wire, tc.variant)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(normalise(got), normalise(tc.msg)) {
				t.Errorf("Decode\n got %#v\nwant %#v", got, tc.msg)
			}
			again, err := Marshal(got, tc.variant)
			if err != nil || !bytes.Equal(again, tc.wire) {
				t.Errorf("re-encode: % X, %v; want % X", again, err, tc.wire)
			}
		})
	}
}

// normalise makes empty and nil byte slices compare equal, which is all DeepEqual
// would otherwise trip over (decoding yields empty, non-nil slices of the input).
func normalise(m Message) Message {
	switch x := m.(type) {
	case *Unknown:
		if len(x.Body) == 0 {
			c := *x
			c.Body = nil
			return &c
		}
	case *InitialAddress:
		if len(x.UserServiceInfo) == 0 {
			c := *x
			c.UserServiceInfo = nil
			return &c
		}
	}
	return m
}

func TestMessageTypesOfDigestSection1AllDecode(t *testing.T) {
	// Every code of the digest's section 1 table decodes to something other than
	// Unknown in at least one variant, from a minimal well-formed body.
	codes := []MessageType{IAM, SAM, INR, INF, COT, ACM, CON, FOT, ANM, REL, SUS, RES, RLC, CCR, RSC,
		BLO, UBL, BLA, UBA, GRS, CGB, CGU, CGBA, CGUA, CMR, CMC, CMRJ, FAR, FAA, FRJ, FAD, FAI, LPA,
		CSVR, CSVS, DRS, PAM, GRA, CQM, CQR, CPG, USR, UCIC, CFN, OLM, CRG, NRM, FAC, UPT, UPA, IDR,
		IRS, SGM, LOP, APM, PRI, SDN, CRA, CRM, CVR, CVT, EXM}
	for _, code := range codes {
		v := ITU
		if ansiOnly(code) {
			v = ANSI
		}
		m := newMessage(code, v)
		if _, unknown := m.(*Unknown); unknown {
			t.Errorf("%s decodes as Unknown", code)
			continue
		}
		if m.MessageType() != code {
			t.Errorf("%s: struct reports type %s", code, m.MessageType())
		}
		if code.String()[0] == 't' {
			t.Errorf("0x%02X has no name", uint8(code))
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name string
		wire []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"header only two octets", hx(t, "01 00"), ErrTruncated},
		{"IAM cut in fixed part", hx(t, "01 00 01 00 60"), ErrTruncated},
		{"IAM cut in pointers", hx(t, "01 00 01 00 60 01 0A 00 02"), ErrTruncated},
		{"pointer past end", hx(t, "01 00 01 00 60 01 0A 00 40 00"), ErrPointer},
		{"length past end", hx(t, "01 00 01 00 60 01 0A 00 02 00 09 83 10"), ErrLength},
		{"mandatory pointer zero", hx(t, "01 00 0C 00 00"), ErrMissingMandatory},
		{"optional parameter overflows", hx(t, "01 00 09 01 0A 05 01"), ErrLength},
		{"optional parameter header cut", hx(t, "01 00 09 01 0A"), ErrTruncated},
		{"cause too short", hx(t, "01 00 0C 02 00 01 82"), ErrInvalidLength},
		{"range and status of wrong size", hx(t, "01 00 18 00 01 02 09 FF"), ErrInvalidLength},
		{"odd address without digits", hx(t, "01 00 01 00 60 01 0A 00 02 00 02 83 10"), ErrInvalidValue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode(tc.wire, ITU)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, %v; want %v", m, err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *isup.Error", err)
			}
		})
	}
}

func TestBadDigits(t *testing.T) {
	_, err := NewCalledPartyNumber(NAINational, NPIISDN, "12x4")
	if !errors.Is(err, ErrBadDigit) {
		t.Fatalf("err = %v, want ErrBadDigit", err)
	}
	if want := `invalid digit 'x' at position 2 of "12x4"`; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error text %q lacks %q", err, want)
	}
}

func TestEncodeErrors(t *testing.T) {
	long := Optional{{Code: ParamUserToUserInformation, Value: make([]byte, 256)}}
	if _, err := Marshal(&Answer{Optional: long}, ITU); !errors.Is(err, ErrTooLong) {
		t.Errorf("oversize optional parameter: %v", err)
	}
	if _, err := Marshal(&Simple{Kind: BLO, Circuit: Circuit{CIC: 0x1000}}, ITU); !errors.Is(err, ErrCICRange) {
		t.Errorf("CIC 4096 in ITU: %v", err)
	}
	if _, err := Marshal(&Simple{Kind: BLO, Circuit: Circuit{CIC: 0x1000}}, ANSI); err != nil {
		t.Errorf("CIC 4096 in ANSI: %v", err)
	}
	buf := make([]byte, 3)
	if _, err := MarshalTo(buf, &Answer{}, ITU); !errors.Is(err, ErrShortBuffer) {
		t.Errorf("short buffer: %v", err)
	}
	if _, err := Marshal(&Generic{Kind: FRJ, Fixed: []byte{1}}, ITU); !errors.Is(err, ErrMissingMandatory) {
		t.Errorf("FRJ without cause: %v", err)
	}
	if _, err := Marshal(&Generic{Kind: FAR}, ITU); !errors.Is(err, ErrInvalidLength) {
		t.Errorf("FAR without facility indicator: %v", err)
	}
}

func TestAcceptHookSeesOnlyTheHeader(t *testing.T) {
	iam := hx(t, "05 00 01 00 60 01 0A 00 02 07 05 83 10 21 43 05 0A 07 03 11 21 43 65 87 09 00")
	shed := errors.New("inbound level 2")
	d := Decoder{Variant: ITU, Accept: func(cic uint16, typ MessageType) error {
		if cic != 5 {
			t.Errorf("hook saw CIC %d", cic)
		}
		if typ == IAM || typ == SAM {
			return shed
		}
		return nil
	}}
	// Corrupting everything past the type octet must not matter to a rejected IAM.
	broken := append([]byte(nil), iam[:3]...)
	for _, b := range [][]byte{iam, broken} {
		_, err := d.Decode(b)
		if !errors.Is(err, ErrRejected) || !errors.Is(err, shed) {
			t.Fatalf("Decode = %v, want ErrRejected wrapping the hook's reason", err)
		}
	}
	if _, err := d.Decode(hx(t, "05 00 09 00")); err != nil {
		t.Fatalf("ANM passed the hook but failed: %v", err)
	}
	cic, typ, err := Peek(hx(t, "FF FF 0C"), ANSI)
	if err != nil || cic != 0x3fff || typ != REL {
		t.Fatalf("Peek ANSI = %d %s %v", cic, typ, err)
	}
	if cic, _, _ := Peek(hx(t, "FF FF 0C"), ITU); cic != 0x0fff {
		t.Fatalf("Peek ITU masks spare bits: got %#x", cic)
	}
}

func TestOptionalEditing(t *testing.T) {
	var o Optional
	if err := o.Set(AutomaticCongestionLevel(1)); err != nil {
		t.Fatal(err)
	}
	o.SetRaw(0xF0, []byte{1, 2})
	if err := o.Set(AutomaticCongestionLevel(2)); err != nil {
		t.Fatal(err)
	}
	if len(o) != 2 {
		t.Fatalf("Set did not replace: %v", o)
	}
	var acl AutomaticCongestionLevel
	if ok, err := o.Decode(&acl); !ok || err != nil || acl != 2 {
		t.Fatalf("Decode ACL = %v %v %v", acl, ok, err)
	}
	if !o.Remove(ParamAutomaticCongestionLevel) || o.Has(ParamAutomaticCongestionLevel) {
		t.Fatalf("Remove failed: %v", o)
	}
	rel := &Release{Cause: NewCause(LocationUser, CauseNormalClearing), Optional: o}
	if rel.ACL() != 0 {
		t.Fatalf("ACL after removal = %d", rel.ACL())
	}
	b, err := Marshal(rel, ITU)
	if err != nil {
		t.Fatal(err)
	}
	if want := hx(t, "00 00 0C 02 04 02 80 90 F0 02 01 02 00"); !bytes.Equal(b, want) {
		t.Fatalf("unknown parameter not passed on: % X", b)
	}
}

func TestACLValidity(t *testing.T) {
	for _, c := range []struct {
		level AutomaticCongestionLevel
		v     Variant
		ok    bool
	}{{0, ITU, false}, {1, ITU, true}, {2, ITU, true}, {3, ITU, false}, {3, ANSI, true}, {4, ANSI, false}} {
		if got := c.level.Valid(c.v); got != c.ok {
			t.Errorf("ACL %d valid in %s = %v", c.level, c.v, got)
		}
	}
}
