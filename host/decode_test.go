package host

import (
	"bytes"
	"encoding/json"
	"github.com/isupgw/isupgw/mtp"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
)

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		line   string
		status wire.Status // 0: accepted
		detail string      // a substring of the nak's detail
	}{
		{`{"type":"outseize","seq":1,`, wire.StatusBadJSON, "malformed JSON"},
		{`[1,2]`, wire.StatusBadJSON, "JSON object"},
		{`"hello"`, wire.StatusBadJSON, "JSON object"},
		{`{"seq":2}`, wire.StatusMissingField, `"type"`},
		{`{"type":"dial","seq":3}`, wire.StatusUnknownType, `"dial"`},
		{`{"type":"status"}`, wire.StatusMissingField, `"seq"`},
		{`{"type":"hello","seq":1}`, wire.StatusMissingField, `"version"`},
		{`{"type":"outseize","seq":4,"called":"123"}`, wire.StatusMissingField, `"dpc"`},
		{`{"type":"outseize","seq":4,"dpc":2}`, wire.StatusMissingField, `"called"`},
		{`{"type":"outseize","seq":5,"dpc":2,"called":"12x4"}`, wire.StatusBadDigits, `'x' at position 2`},
		{`{"type":"outseize","seq":5,"dpc":2,"called":""}`, wire.StatusBadDigits, "no digits"},
		{`{"type":"outseize","seq":5,"dpc":2,"called":"` + strings.Repeat("1", 41) + `"}`, wire.StatusBadDigits, "at most 40"},
		{`{"type":"outseize","seq":5,"dpc":2,"called":"1","calling":"+49"}`, wire.StatusBadDigits, `"calling"`},
		{`{"type":"outseize","seq":6,"dpc":"two","called":"1"}`, wire.StatusBadValue, `"dpc"`},
		{`{"type":"outseize","seq":6,"dpc":-1,"called":"1"}`, wire.StatusBadValue, `"dpc"`},
		{`{"type":"outseize","seq":6,"dpc":2,"called":"1","cpc":256}`, wire.StatusBadValue, `"cpc"`},
		{`{"type":"outseize","seq":6,"dpc":2,"called":"1","called_nai":200}`, wire.StatusBadValue, `"called_nai"`},
		{`{"type":"outseize","seq":6,"dpc":2,"called":"1","params":[{"code":0,"hex":""}]}`, wire.StatusBadValue, "params[0].code"},
		{`{"type":"outseize","seq":6,"dpc":2,"called":"1","params":[{"code":57,"hex":"zz"}]}`, wire.StatusBadValue, "params[0].hex"},
		{`{"type":"alert","seq":7}`, wire.StatusMissingField, `"call"`},
		{`{"type":"progress","seq":7,"call":1}`, wire.StatusMissingField, `"event"`},
		{`{"type":"release","seq":7,"call":1,"cause":128}`, wire.StatusBadValue, `"cause"`},
		{`{"type":"overload","seq":8,"level":5}`, wire.StatusBadValue, `"level"`},
		{`{"type":"overload","seq":8}`, wire.StatusMissingField, `"level"`},
		{`{"type":"status","seq":9,"colour":"blue"}`, 0, ""},
		{`{"type":"outseize","seq":10,"route":"peer","called":"4930*#ab","calling":"123","cpc":13,"fci":8192,"params":[{"code":57,"hex":"0102"}]}`, 0, ""},
		{`{"type":"release","seq":11,"call":5,"cause":17,"location":2}`, 0, ""},
	} {
		d, rf := decodeRequest([]byte(tc.line), mtp.PointCodeFormat{})
		if tc.status == 0 {
			if rf != nil {
				t.Errorf("%s: refused: %v", tc.line, rf)
			}
			continue
		}
		if rf == nil {
			t.Errorf("%s: accepted, want %s", tc.line, tc.status)
			continue
		}
		if rf.status != tc.status || !strings.Contains(rf.detail, tc.detail) {
			t.Errorf("%s: got %s %q, want %s containing %q", tc.line, rf.status, rf.detail, tc.status, tc.detail)
		}
		if strings.Contains(tc.line, `"seq":`) && tc.status != wire.StatusBadJSON && d.seq == nil {
			t.Errorf("%s: seq lost", tc.line)
		}
	}

	d, rf := decodeRequest([]byte(`{"type":"outseize","seq":10,"route":"peer","called":"4930*#ab","calling":"123","cpc":13,"fci":8192,"params":[{"code":57,"hex":"0102"}]}`), mtp.PointCodeFormat{})
	if rf != nil {
		t.Fatal(rf)
	}
	o := d.out
	if o.Route != "peer" || o.Called.Digits.String() != "4930BCAB" || o.Called.NatureOfAddress != isup.NAINational ||
		o.Calling == nil || o.Calling.Digits.String() != "123" || o.Category != 13 || o.ForwardCall != 8192 || !o.Optional.Has(57) {
		t.Errorf("outseize: %+v", o)
	}
}

// The gateway's lines are valid JSON and carry any text exactly as
// encoding/json would.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "ctl \x00\x01\x1f\t\n\r", "utf8 é ✓ 😀", "bad \xff\xfe utf8", "\u2028\u2029", "<&>"} {
		got := appendJSONString(nil, s)
		var back, want string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %s is not JSON: %v", s, got, err)
		}
		std, _ := json.Marshal(s)
		json.Unmarshal(std, &want)
		if back != want {
			t.Errorf("%q: decodes to %q, encoding/json gives %q", s, back, want)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","seq":1,"version":1,"app":"ivr","token":"t","incoming":true}`,
		`{"type":"outseize","seq":2,"dpc":2,"called":"4930123456","calling":"4930999","cpc":10,"nci":0,"fci":24577,"params":[{"code":57,"hex":"0102"}]}`,
		`{"type":"outseize","seq":2,"route":"peer","cic":5,"called":"1","called_nai":4,"inn":1,"presentation":1,"screening":3}`,
		`{"type":"alert","seq":3,"call":7,"bci":5140}`,
		`{"type":"progress","seq":4,"call":7,"event":1}`,
		`{"type":"answer","seq":5,"call":7}`,
		`{"type":"release","seq":6,"call":7,"cause":16,"location":1}`,
		`{"type":"overload","seq":7,"level":2}`,
		`{"type":"status","seq":8}`,
		`{"type":"outseize","seq":1,`, `[]`, `null`, `{"type":null,"seq":null}`, `{"seq":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		d, rf := decodeRequest(line, mtp.PointCodeFormat{})
		if rf != nil {
			if rf.status < 0x0110 || rf.status > 0x011F || rf.detail == "" {
				t.Fatalf("refusal outside the host range or without detail: %v", rf)
			}
			nak := encodeNak(d.seq, rf.status, rf.detail, uint64(d.call))
			if !json.Valid(bytes.TrimSuffix(nak, []byte("\n"))) {
				t.Fatalf("nak is not JSON: %s", nak)
			}
			return
		}
		if !knownType(d.typ) || d.seq == nil {
			t.Fatalf("accepted %q with type %q seq %v", line, d.typ, d.seq)
		}
		switch d.typ {
		case wire.TypeOutseize:
			o := d.out
			if n := o.Called.Digits.Len(); n == 0 || n > maxDigits {
				t.Fatalf("called with %d digits accepted", n)
			}
			iam := &isup.InitialAddress{CalledParty: o.Called, Optional: o.Optional}
			if o.Calling != nil {
				if err := iam.Optional.Set(*o.Calling); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := isup.Marshal(iam, isup.ITU); err != nil {
				t.Fatalf("accepted outseize does not encode: %v", err)
			}
		case wire.TypeAlert, wire.TypeProgress, wire.TypeAnswer, wire.TypeRelease:
			if d.req == nil {
				t.Fatal("call request without a stack request")
			}
		case wire.TypeOverload:
			if d.level < 0 || d.level > 2 {
				t.Fatalf("level %d accepted", d.level)
			}
		}
	})
}

// BenchmarkEncode compares the hand-written encoder of the hottest line,
// released, with encoding/json on the equivalent struct.
func BenchmarkEncode(b *testing.B) {
	r := stack.Released{Call: 123456, Cause: 16, Location: 1, PC: 2, CIC: 17, Remote: true, Reason: "REL received"}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			encodeReleased(r)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m := wire.Message{Type: wire.TypeReleased, Call: uint64(r.Call), Cause: r.Cause, Location: r.Location, DPC: uint32(r.PC), CIC: r.CIC, Remote: r.Remote, Reason: r.Reason}
			line, _ := json.Marshal(&m)
			_ = append(line, '\n')
		}
	})
}

func TestDecodeReleaseACL(t *testing.T) {
	d, rf := decodeRequest([]byte(`{"type":"release","seq":1,"call":5,"cause":16,"acl":2}`), mtp.PointCodeFormat{})
	if rf != nil {
		t.Fatalf("refused: %+v", rf)
	}
	if r, ok := d.req.(stack.Release); !ok || r.ACL != 2 || r.Call != 5 {
		t.Fatalf("decoded %+v", d.req)
	}
	if _, rf := decodeRequest([]byte(`{"type":"release","seq":1,"call":5,"acl":4}`), mtp.PointCodeFormat{}); rf == nil || rf.status != wire.StatusBadValue {
		t.Fatalf("acl 4: %+v", rf)
	}
}

// BenchmarkEncodeIncoming is the line every incoming call sends its host: the
// IAM's description (called and calling numbers, indicators) and its
// optional parameters in hex.
func BenchmarkEncodeIncoming(b *testing.B) {
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	calling, _ := isup.NewCallingPartyNumber(isup.NAINational, isup.NPIISDN, "4940987654")
	iam := &isup.InitialAddress{CalledParty: called, CallingPartyCategory: isup.CategoryOrdinary,
		ForwardCall: isup.NewForwardCallIndicators(true, isup.ISUPPreferred, false), TransmissionMedium: isup.TMRSpeech}
	if err := iam.Optional.Set(calling); err != nil {
		b.Fatal(err)
	}
	in := stack.Incoming{Call: 123456, OPC: 1, CIC: 17, IAM: iam}
	b.ReportAllocs()
	for b.Loop() {
		encodeIncoming(in)
	}
}
