package host

import (
	"encoding/json"
	"github.com/isupgw/isupgw/mtp"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
)

// FuzzMaintenanceRequest: any line gives a refusal or a request within the
// limits (one CIC of 14 bits, at most 32 circuits), never a panic.
func FuzzMaintenanceRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"block","seq":1,"dpc":2,"cic":1,"last":8}`,
		`{"type":"reset","seq":1,"route":"b","cic":5}`,
		`{"type":"query","seq":1,"dpc":2,"cic":1,"last":40}`,
		`{"type":"unblock","seq":1,"dpc":2,"cic":-1,"hardware":true}`,
		`{"dpc":"2-100-3","cic":1e9}`, `[]`, `{"cic":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var r maintRequest
		if json.Unmarshal(line, &r) != nil {
			return
		}
		for _, typ := range []string{wire.TypeBlock, wire.TypeUnblock, wire.TypeReset, wire.TypeQuery} {
			req, rf := maintenanceRequest(typ, r, mtp.PointCodeFormat{})
			if rf != nil {
				continue
			}
			if req.CIC > 0x3FFF || req.Range > maxMaintRange || int(req.CIC)+int(req.Range) != *r.CIC+int(req.Range) {
				t.Fatalf("%s %q accepted as %+v", typ, line, req)
			}
			if req.Route == "" && req.DPC == 0 && r.DPC == nil {
				t.Fatalf("%s %q accepted without a destination", typ, line)
			}
		}
	})
}
