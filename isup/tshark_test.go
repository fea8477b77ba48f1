package isup

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Comparison with tshark, a decoder nobody here wrote. Each field below is read from
// our decoded messages and from tshark's "-T fields" output for the same frame; a
// frame holding several ISUP messages gives the values of all of them in order.

type tsharkField struct {
	name string
	get  func(m Message) []string
}

// textField reports the string fields (digits), compared exactly as printed.
func textField(name string) bool { return name == "isup.called" || name == "isup.calling" }

func num[T ~uint8 | ~uint16 | ~int](v T) string { return strconv.Itoa(int(v)) }
func boolNum(b bool) string                     { return num(b2u(b)) }

func one(vals ...string) []string { return vals }

// addresses returns the called number of an IAM and the calling numbers a message
// carries, in wire (and so dissection) order.
func calledOf(m Message) (CalledPartyNumber, bool) {
	if iam, ok := m.(*InitialAddress); ok {
		return iam.CalledParty, true
	}
	return CalledPartyNumber{}, false
}

func callingOf(m Message) (CallingPartyNumber, bool) {
	o := optionalPart(m)
	var p CallingPartyNumber
	ok, err := o.Decode(&p)
	return p, ok && err == nil
}

// callingStyle reads a field of the parameters whose octets 1 and 2 Wireshark
// dissects with the calling-number field names (calling party and location number),
// in wire order.
func callingStyle(f func(o1, o2 byte) uint8) func(Message) []string {
	return func(m Message) []string {
		var out []string
		for _, p := range optionalPart(m) {
			if (p.Code == ParamCallingPartyNumber || p.Code == ParamLocationNumber) && len(p.Value) >= 2 {
				out = append(out, num(f(p.Value[0], p.Value[1])))
			}
		}
		return out
	}
}

// optionalPart is the message's optional part, or nil.
func optionalPart(m Message) Optional {
	if o := OptionalOf(m); o != nil {
		return *o
	}
	return nil
}

func causesOf(m Message) []CauseIndicators {
	var out []CauseIndicators
	switch x := m.(type) {
	case *Release:
		out = append(out, x.Cause)
	case *Confusion:
		out = append(out, x.Cause)
	case *Generic:
		if f := genericFormats[x.Kind]; f != nil && !f.opaque {
			for i, code := range f.variable {
				var c CauseIndicators
				if code == ParamCauseIndicators && i < len(x.Variable) && c.UnmarshalBinary(x.Variable[i]) == nil {
					out = append(out, c)
				}
			}
		}
	}
	var c CauseIndicators
	if ok, err := optionalPart(m).Decode(&c); ok && err == nil {
		out = append(out, c)
	}
	return out
}

func rangeOf(m Message) (RangeAndStatus, bool) {
	switch x := m.(type) {
	case *GroupReset:
		return x.RangeAndStatus, true
	case *GroupSupervision:
		return x.RangeAndStatus, true
	case *CircuitQuery:
		return x.RangeAndStatus, true
	case *CircuitQueryResponse:
		return x.RangeAndStatus, true
	}
	return RangeAndStatus{}, false
}

func bciOf(m Message) (BackwardCallIndicators, bool) {
	switch x := m.(type) {
	case *AddressComplete:
		return x.BackwardCall, true
	case *Connect:
		return x.BackwardCall, true
	}
	var b BackwardCallIndicators
	ok, err := optionalPart(m).Decode(&b)
	return b, ok && err == nil
}

func iamOf(m Message) (*InitialAddress, bool) { x, ok := m.(*InitialAddress); return x, ok }

// nciOf returns the nature of connection indicators of an IAM or an ANSI CRM.
func nciOf(m Message) (NatureOfConnection, bool) {
	switch x := m.(type) {
	case *InitialAddress:
		return x.NatureOfConnection, true
	case *Generic:
		if x.Kind == CRM && len(x.Fixed) == 1 {
			return NatureOfConnection(x.Fixed[0]), true
		}
	}
	return 0, false
}

func nciField(f func(NatureOfConnection) string) func(Message) []string {
	return func(m Message) []string {
		if n, ok := nciOf(m); ok {
			return one(f(n))
		}
		return nil
	}
}

func iamField(f func(*InitialAddress) string) func(Message) []string {
	return func(m Message) []string {
		if x, ok := iamOf(m); ok {
			return one(f(x))
		}
		return nil
	}
}

func bciField(f func(BackwardCallIndicators) string) func(Message) []string {
	return func(m Message) []string {
		if b, ok := bciOf(m); ok {
			return one(f(b))
		}
		return nil
	}
}

var tsharkFields = []tsharkField{
	// Wireshark flags a message it cannot parse as malformed; ours never should be.
	{"_ws.malformed", func(Message) []string { return nil }},
	{"isup.message_type", func(m Message) []string {
		// A PAM's body is a passed-along message (type first), which Wireshark decodes.
		if g, ok := m.(*Generic); ok && g.Kind == PAM && len(g.Body) > 0 {
			return one(num(g.Kind), num(g.Body[0]))
		}
		return one(num(m.MessageType()))
	}},
	{"isup.cic", func(m Message) []string { return one(num(m.CircuitID())) }},
	{"isup.called", func(m Message) []string {
		if p, ok := calledOf(m); ok {
			return one(p.Digits.String())
		}
		return nil
	}},
	{"isup.called_party_nature_of_address_indicator", func(m Message) []string {
		if p, ok := calledOf(m); ok {
			return one(num(p.NatureOfAddress))
		}
		return nil
	}},
	{"isup.calling", func(m Message) []string {
		if p, ok := callingOf(m); ok && p.Digits.Len() > 0 {
			return one(p.Digits.String())
		}
		return nil
	}},
	{"isup.calling_party_nature_of_address_indicator", callingStyle(func(o1, _ byte) uint8 { return o1 & 0x7f })},
	{"isup.address_presentation_restricted_indicator", callingStyle(func(_, o2 byte) uint8 { return o2 >> 2 & 3 })},
	{"isup.screening_indicator", callingStyle(func(_, o2 byte) uint8 { return o2 & 3 })},
	{"isup.event_ind", func(m Message) []string {
		if x, ok := m.(*CallProgress); ok {
			return one(num(x.Event.Event()))
		}
		return nil
	}},
	{"isup.satellite_indicator", nciField(func(n NatureOfConnection) string { return num(n.Satellite()) })},
	{"isup.continuity_check_indicator", nciField(func(n NatureOfConnection) string { return num(n.ContinuityCheck()) })},
	{"isup.echo_control_device_indicator", nciField(func(n NatureOfConnection) string { return boolNum(n.EchoDevice()) })},
	{"isup.forw_call_natnl_inatnl_call_indicator", iamField(func(x *InitialAddress) string { return boolNum(x.ForwardCall.International()) })},
	{"isup.forw_call_end_to_end_method_indicator", iamField(func(x *InitialAddress) string { return num(x.ForwardCall.EndToEndMethod()) })},
	{"isup.forw_call_isdn_user_part_indicator", iamField(func(x *InitialAddress) string { return boolNum(x.ForwardCall.ISUPAllTheWay()) })},
	{"isup.forw_call_preferences_indicator", iamField(func(x *InitialAddress) string { return num(x.ForwardCall.ISUPPreference()) })},
	{"isup.forw_call_isdn_access_indicator", iamField(func(x *InitialAddress) string { return boolNum(x.ForwardCall.OriginatingISDN()) })},
	{"isup.calling_partys_category", iamField(func(x *InitialAddress) string { return num(x.CallingPartyCategory) })},
	{"isup.charge_indicator", bciField(func(b BackwardCallIndicators) string { return num(b.Charge()) })},
	{"isup.called_partys_status_indicator", bciField(func(b BackwardCallIndicators) string { return num(b.CalledStatus()) })},
	{"isup.called_partys_category_indicator", bciField(func(b BackwardCallIndicators) string { return num(b.CalledCategory()) })},
	{"isup.backw_call_isdn_user_part_indicator", bciField(func(b BackwardCallIndicators) string { return boolNum(b.ISUPAllTheWay()) })},
	{"isup.range_indicator", func(m Message) []string {
		if r, ok := rangeOf(m); ok { // Wireshark shows the circuit count, R+1
			return one(num(r.Circuits()))
		}
		return nil
	}},
	{"isup.cgs_message_type", func(m Message) []string {
		if x, ok := m.(*GroupSupervision); ok {
			return one(num(x.Type.Kind()))
		}
		return nil
	}},
	{"isup.automatic_congestion_level", func(m Message) []string {
		var acl AutomaticCongestionLevel
		if ok, err := optionalPart(m).Decode(&acl); ok && err == nil {
			return one(num(acl))
		}
		return nil
	}},
	{"isup.suspend_resume_indicator", func(m Message) []string {
		if x, ok := m.(*SuspendResume); ok {
			return one(boolNum(x.Indicators.NetworkInitiated()))
		}
		return nil
	}},
	{"isup.continuity_indicator", func(m Message) []string {
		if x, ok := m.(*Continuity); ok {
			return one(boolNum(x.Indicators.Successful()))
		}
		return nil
	}},
}

// causeField lists a field of the cause indicators whose coding standard the filter
// accepts.
func causeField(keep func(CauseIndicators) bool, get func(CauseIndicators) uint8) func(Message) []string {
	return func(m Message) []string {
		var out []string
		for _, c := range causesOf(m) {
			if keep(c) {
				out = append(out, num(get(c)))
			}
		}
		return out
	}
}

func anyCause(CauseIndicators) bool         { return true }
func causeValue(c CauseIndicators) uint8    { return c.Value }
func causeLocation(c CauseIndicators) uint8 { return c.Location }

// ITU-only fields: TMR is not in the ANSI IAM, and Wireshark's ITU dissector hands
// the cause location to its Q.931 code.
var tsharkFieldsITU = []tsharkField{
	{"isup.transmission_medium_requirement", iamField(func(x *InitialAddress) string { return num(x.TransmissionMedium) })},
	{"isup.cause_indicator", causeField(anyCause, causeValue)},
	{"q931.cause_location", causeField(anyCause, causeLocation)},
}

// ANSI-only fields: an ANSI-coded cause (coding standard 2) has its own field.
var tsharkFieldsANSI = []tsharkField{
	{"isup.cause_indicator", causeField(func(c CauseIndicators) bool { return c.CodingStandard != 2 }, causeValue)},
	{"ansi_isup.cause_indicator", causeField(func(c CauseIndicators) bool { return c.CodingStandard == 2 }, causeValue)},
	{"isup.cause_location", causeField(anyCause, causeLocation)},
}

// fieldsFor is the field list to compare in a variant.
func fieldsFor(v Variant) []tsharkField {
	extra := tsharkFieldsITU
	if v == ANSI {
		extra = tsharkFieldsANSI
	}
	return append(append([]tsharkField{}, tsharkFields...), extra...)
}

func needTshark(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: install it (apt-get install -y tshark; .ci/run does) to compare the codec with Wireshark's ISUP dissector")
	}
	return path
}

func sharedCapture(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "captures", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("capture %s not found (%v): the shared captures folder ../shared/captures beside the repository is absent", name, err)
	}
	return p
}

// tsharkFrames runs tshark over a capture and returns, per frame number, the
// aggregated value list of each field. Values are normalised: integers in decimal
// (tshark prints some in hex), booleans as 0/1, strings unchanged.
func tsharkFrames(t *testing.T, tshark, file string, prefs []string, fields []tsharkField) map[int]map[string][]string {
	t.Helper()
	args := []string{"-r", file, "-Y", "isup", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "frame.number"}
	for _, p := range prefs {
		args = append(args, "-o", p)
	}
	for _, f := range fields {
		args = append(args, "-e", f.name)
	}
	cmd := exec.Command(tshark, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	frames := map[int]map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != len(fields)+1 {
			t.Fatalf("tshark line has %d columns, want %d: %q", len(cols), len(fields)+1, sc.Text())
		}
		n, err := strconv.Atoi(cols[0])
		if err != nil {
			t.Fatalf("tshark frame number %q", cols[0])
		}
		row := map[string][]string{}
		for i, f := range fields {
			if cols[i+1] == "" {
				continue
			}
			for _, v := range strings.Split(cols[i+1], ",") {
				if !textField(f.name) {
					v = normaliseTshark(v)
				}
				row[f.name] = append(row[f.name], v)
			}
		}
		frames[n] = row
	}
	return frames
}

// normaliseTshark turns tshark's display of a number (decimal, 0x-hex, True/False)
// into decimal.
func normaliseTshark(v string) string {
	switch v {
	case "True":
		return "1"
	case "False":
		return "0"
	}
	if n, err := strconv.ParseInt(v, 0, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return v
}

// ourFrame computes the same rows from our decoded messages of one frame.
func ourFrame(msgs []Message, fields []tsharkField) map[string][]string {
	row := map[string][]string{}
	for _, m := range msgs {
		for _, f := range fields {
			row[f.name] = append(row[f.name], f.get(m)...)
		}
	}
	return row
}

// compareFrames reports every field of every frame where we and tshark differ, and
// returns the number of field values compared.
func compareFrames(t *testing.T, ours map[int][]Message, theirs map[int]map[string][]string, fields []tsharkField) int {
	t.Helper()
	compared := 0
	for frame := range theirs {
		if _, ok := ours[frame]; !ok {
			t.Errorf("frame %d: tshark sees ISUP, we decoded none", frame)
		}
	}
	for frame, msgs := range ours {
		want, ok := theirs[frame]
		if !ok {
			t.Errorf("frame %d: we decoded %d ISUP messages, tshark none", frame, len(msgs))
			continue
		}
		got := ourFrame(msgs, fields)
		for _, f := range fields {
			g, w := strings.Join(got[f.name], ","), strings.Join(want[f.name], ",")
			if g != w {
				t.Errorf("frame %d %s: ours %q, tshark %q", frame, f.name, g, w)
			}
			compared += len(want[f.name])
		}
	}
	return compared
}

func describe(m Message) string { return fmt.Sprintf("%s CIC %d", m.MessageType(), m.CircuitID()) }
