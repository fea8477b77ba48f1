package host

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/mtp"
)

// pcField is a point code as a host sends it (docs/host-api.md): a JSON
// number, or a string holding a number or the dashed form of the gateway's
// variant ("2-100-3" ITU zone-area-id, "1-2-3" ANSI network-cluster-member).
// Decoding never fails here; resolve says what is wrong, so the host gets
// bad_value with the field's name and the reason.
type pcField struct {
	num    uint32
	hasNum bool
	text   string
}

func (p *pcField) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*p = pcField{text: s}
		return nil
	}
	if v, err := strconv.ParseUint(string(b), 10, 32); err == nil {
		*p = pcField{num: uint32(v), hasNum: true}
		return nil
	}
	*p = pcField{text: string(bytes.TrimSpace(b))}
	return nil
}

// resolve turns the field into a point code. A number is taken as it is (a
// code no group has is the stack's unknown_destination); text is read with
// the configured format's variant.
func (p *pcField) resolve(field string, f mtp.PointCodeFormat) (mtp.PointCode, *refusal) {
	if p.hasNum {
		return mtp.PointCode(p.num), nil
	}
	pc, err := f.Parse(p.text)
	if err != nil {
		return 0, refuse(wire.StatusBadValue, "field %q: %v", field, err)
	}
	return pc, nil
}
