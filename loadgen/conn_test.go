package loadgen

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
)

// Lines as the gateway writes them (docs/host-api.md).
func TestScanLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want fields
	}{
		{`{"type":"ack","seq":4,"status":16,"name":"ok","call":1,"dpc":2,"cic":1}`, fields{typ: "ack", seq: 4, hasSeq: true, status: 16, call: 1}},
		{`{"type":"nak","seq":3,"status":276,"name":"bad_digits","detail":"field \"called\": invalid digit '-' at position 2 of \"49-30\""}`, fields{typ: "nak", seq: 3, hasSeq: true, status: 276}},
		{`{"type":"nak","status":279,"name":"line_too_long","detail":"x"}`, fields{typ: "nak", status: 279}},
		{`{"type":"incoming","call":1,"opc":1,"route":"peer","cic":1,"called":"4930123456","params":[{"code":10,"hex":"831194039909"}],"tmr":0}`, fields{typ: "incoming", call: 1}},
		{`{"type":"released","call":1,"cause":42,"location":1,"acl":2,"dpc":2,"cic":1,"remote":true}`, fields{typ: "released", call: 1, cause: 42, acl: 2, remote: true}},
		{`{"type":"alarm","number":22,"severity":3,"text":"x","data":{"direction":"outbound","level":1}}`, fields{typ: "alarm", number: 22, data: []byte(`{"direction":"outbound","level":1}`)}},
		{` {"type" : "answered" , "call" : 7 , "message":"ANM"} ` + "\n", fields{typ: "answered", call: 7}},
	} {
		var f fields
		if err := scanLine([]byte(c.line), &f); err != nil || !reflect.DeepEqual(f, c.want) {
			t.Errorf("%s: %+v %v, want %+v", c.line, f, err, c.want)
		}
	}
	for _, bad := range []string{``, `[1]`, `{"type":"ack"`, `{"type":"ack","x":{"y":1}`, `{"type" "ack"}`} {
		var f fields
		if scanLine([]byte(bad), &f) == nil {
			t.Errorf("%q scanned", bad)
		}
	}
}

// The request lines are JSON the host API reads.
func TestRequestLines(t *testing.T) {
	called, _ := ParsePattern("4930XXXX")
	calling, _ := ParsePattern("49*#")
	route, _ := json.Marshal(`exchange "b"`)
	for _, line := range [][]byte{
		appendOutseize(nil, 7, 2, nil, called, Pattern{}, 42),
		appendOutseize(nil, 8, 0, route, called, calling, 43),
		appendCallRequest(nil, "release", 9, 1234, 16),
		appendCallRequest(nil, "answer", 10, 1234, 0),
	} {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || line[len(line)-1] != '\n' {
			t.Fatalf("%q: %v", line, err)
		}
		if m["type"] == wire.TypeOutseize && m["called"] != "49300042" && m["called"] != "49300043" {
			t.Fatalf("%q", line)
		}
		if m["type"] == wire.TypeOutseize && m["route"] != nil && m["route"] != `exchange "b"` {
			t.Fatalf("%q", line)
		}
	}
}
