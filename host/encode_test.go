package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
)

// members reads a JSON object's member names in order, and its values as Go
// values (numbers as float64).
func members(t *testing.T, line []byte) (keys []string, vals map[string]any) {
	t.Helper()
	if err := json.Unmarshal(line, &vals); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // the opening brace
		t.Fatalf("%s: %v", line, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage // the value, nested or not, read whole
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	return keys, vals
}

// The host lines write isup.DescribeTo's fields straight into the JSON: they
// must carry exactly isup.Describe's fields, in its order, with its values.
func TestEncodeCarriesDescribe(t *testing.T) {
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456F")
	calling, _ := isup.NewCallingPartyNumber(isup.NAIInternational, isup.NPIISDN, "4940987654")
	itu := &isup.InitialAddress{CalledParty: called, CallingPartyCategory: isup.CategoryOrdinary, NatureOfConnection: 0x01,
		ForwardCall: isup.NewForwardCallIndicators(true, isup.ISUPPreferred, false), TransmissionMedium: isup.TMRSpeech}
	if err := itu.Optional.Set(calling); err != nil {
		t.Fatal(err)
	}
	ansi := &isup.InitialAddress{CalledParty: called, CallingPartyCategory: isup.CategoryOrdinary,
		UserServiceInfo: isup.NewUserServiceInformation(isup.ITCSpeech, isup.Layer1MuLaw)}
	bci := isup.NewBackwardCallIndicators(2, 1, 1, true)
	for i, in := range []stack.Incoming{
		{Call: 7, OPC: 2, CIC: 17, IAM: itu},
		{Call: 8, OPC: 3, CIC: 18, Route: "east", IAM: ansi},
	} {
		t.Run(fmt.Sprint("incoming", i), func(t *testing.T) {
			keys, vals := members(t, encodeIncoming(in))
			want := []string{"type", "call", "opc", "route", "cic"}
			for _, f := range isup.Describe(in.IAM) {
				want = append(want, f.Name)
			}
			if len(in.IAM.Optional) > 0 {
				want = append(want, "params")
			}
			checkFields(t, keys, vals, want, isup.Describe(in.IAM))
		})
	}
	for _, m := range []isup.Message{
		&isup.AddressComplete{BackwardCall: bci},
		&isup.Connect{BackwardCall: bci},
		&isup.Release{Cause: isup.CauseIndicators{Value: 16, Location: 1, Diagnostics: []byte{0xab}}},
	} {
		t.Run(m.MessageType().String(), func(t *testing.T) {
			keys, vals := members(t, encodeCallMessage("progress", 9, m))
			want := []string{"type", "call", "message"}
			for _, f := range isup.Describe(m) {
				want = append(want, f.Name)
			}
			checkFields(t, keys, vals, want, isup.Describe(m))
		})
	}
}

func checkFields(t *testing.T, keys []string, vals map[string]any, want []string, fields []isup.Field) {
	t.Helper()
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("members %v, want %v", keys, want)
	}
	for _, f := range fields {
		got := vals[f.Name]
		switch v := f.Value.(type) {
		case int:
			if got != float64(v) {
				t.Errorf("%s = %v, want %d", f.Name, got, v)
			}
		default:
			if got != v {
				t.Errorf("%s = %v (%T), want %v (%T)", f.Name, got, got, v, v)
			}
		}
	}
}
