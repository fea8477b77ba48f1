package host

import (
	"encoding/json"
	"github.com/isupgw/isupgw/mtp"
	"reflect"
	"testing"
)

var fastCorpus = []struct {
	line string
	fast bool // decodeFast takes it (else encoding/json does)
}{
	{`{"type":"outseize","seq":4,"dpc":2,"called":"4930123456","calling":"4930999"}`, true},
	{`{"seq":17,"type":"outseize","route":"exchange-b","called":"49301234*#","called_nai":4,"cpc":13,"fci":8192,"cic":5}`, true},
	{` { "type" : "release" , "seq" : 5 , "call" : 1 , "cause" : 16 , "location" : 2 } `, true},
	{`{"type":"alert","seq":2,"call":1,"bci":1044}`, true},
	{`{"type":"answer","seq":3,"call":18446744073709551615}`, true},
	{`{"type":"hello","seq":1,"version":1,"app":"pbx","token":"s3cret","incoming":true}`, true},
	{`{"type":"hello","seq":1,"version":1,"incoming":false,"unknown":"x","n":7,"b":true}`, true},
	{`{"type":"overload","seq":7,"level":1}`, true},
	{`{"type":"progress","seq":9,"call":3,"event":1}`, true},
	{`{"type":"release","seq":1,"call":5,"cause":16,"acl":2}`, true},
	{`{"type":"status","seq":6}`, true},
	{`{}`, true},
	{`{"type":"status","seq":6,"seq":7}`, true},
	// encoding/json's cases
	{`{"type":"outseize","seq":4,"dpc":2,"called":"1","params":[{"code":57,"hex":"0102"}]}`, false},
	{`{"Type":"status","seq":6}`, false},
	{`{"type":"st\u0061tus","seq":6}`, false},
	{`{"type":"status","seq":null}`, false},
	{`{"type":"release","seq":1,"call":1,"cause":300}`, false},
	{`{"type":"outseize","seq":1,"cic":-1}`, false},
	{`{"type":"status","seq":1.5}`, false},
	{`{"type":"status","seq":01}`, false},
	{`{"type":"status","seq":1e3}`, false},
	{`{"type":"status","seq":"1"}`, false},
	{`{"type":"status","seq":18446744073709551616}`, false},
	{`{"type":"status","seq":1} x`, false},
	{`{"type":"status","seq":1`, false},
	{`{"type":"status" "seq":1}`, false},
	{`["type"]`, false},
	{`{"app":"caf\u00e9","type":"hello"}`, false},
	{`{"app":"café","type":"hello"}`, false},
	{`{"x":{"y":1},"type":"status","seq":1}`, false},
	{``, false},
	{`{"type":"status","seq":1,}`, false},
	{`{,"type":"status"}`, false},
}

// Every field of rawRequest is decoded by decodeFast or sent to encoding/json;
// none is ignored.
func TestDecodeFastKnowsEveryField(t *testing.T) {
	for key := range rawKeys {
		for _, val := range []string{"1", `"1"`, "true"} {
			line := `{"` + key + `":` + val + `}`
			var fast, ref rawRequest
			if !decodeFast([]byte(line), &fast) {
				continue
			}
			if err := json.Unmarshal([]byte(line), &ref); err != nil || !reflect.DeepEqual(fast, ref) {
				t.Errorf("%s: fast %+v, json %+v (%v)", line, fast, ref, err)
			}
		}
	}
}

// Whatever decodeFast takes, it decodes exactly as encoding/json does.
func TestDecodeFastMatchesJSON(t *testing.T) {
	for _, c := range fastCorpus {
		var fast, ref rawRequest
		ok := decodeFast([]byte(c.line), &fast)
		if ok != c.fast {
			t.Errorf("%s: decodeFast took it: %v, want %v", c.line, ok, c.fast)
		}
		if !ok {
			continue
		}
		if err := json.Unmarshal([]byte(c.line), &ref); err != nil {
			t.Errorf("%s: decodeFast took a line encoding/json refuses: %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Errorf("%s:\n fast %+v\n json %+v", c.line, fast, ref)
		}
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, c := range fastCorpus {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast, ref rawRequest
		if !decodeFast(line, &fast) {
			return
		}
		if err := json.Unmarshal(line, &ref); err != nil {
			t.Fatalf("%q: decodeFast took a line encoding/json refuses: %v", line, err)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("%q:\n fast %+v\n json %+v", line, fast, ref)
		}
	})
}

// BenchmarkDecodeRequest is the host connection reader's decode of the
// requests of a call (outseize and release on the calling side, alert and
// answer on the answering side).
//
//	go test ./host -run '^$' -bench DecodeRequest -count 10 | benchstat -
func BenchmarkDecodeRequest(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"outseize", `{"type":"outseize","seq":123456,"dpc":2,"called":"4930123456","calling":"4930999"}`},
		{"release", `{"type":"release","seq":123457,"call":98765,"cause":16}`},
		{"answer", `{"type":"answer","seq":123458,"call":98765}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			b.ReportAllocs()
			for b.Loop() {
				if _, rf := decodeRequest(line, mtp.PointCodeFormat{}); rf != nil {
					b.Fatal(rf)
				}
			}
		})
	}
}
