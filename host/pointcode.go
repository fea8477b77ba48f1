package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

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

// pcParser reads a point code written as text: mtp.PointCodeFormat, or the
// server's pointCodes, which knows the circuit groups' variants.
type pcParser interface {
	Parse(string) (mtp.PointCode, error)
}

// resolve turns the field into a point code. A number is taken as it is (a
// code no group has is the stack's unknown_destination); text is read with
// the configured format's variant, or in a gateway with ITU and ANSI groups
// with the variant of the group it names.
func (p *pcField) resolve(field string, f pcParser) (mtp.PointCode, *refusal) {
	if p.hasNum {
		return mtp.PointCode(p.num), nil
	}
	pc, err := f.Parse(p.text)
	if err != nil {
		return 0, refuse(wire.StatusBadValue, "field %q: %v", field, err)
	}
	return pc, nil
}

// Destination is a circuit group's point code and variant, for reading a
// dashed point code in a gateway with ITU and ANSI groups: "1-10-2" is 2130
// as ITU 3-8-3 and 68098 as ANSI 8-8-8.
type Destination struct {
	DPC  mtp.PointCode
	ANSI bool
}

// pointCodes reads point codes from requests: with the configured format,
// and, when the groups have both variants, with the reading that names a
// group of that variant.
type pointCodes struct {
	f         mtp.PointCodeFormat
	itu, ansi map[mtp.PointCode]bool
}

func newPointCodes(f mtp.PointCodeFormat, dests []Destination) pointCodes {
	r := pointCodes{f: f, itu: map[mtp.PointCode]bool{}, ansi: map[mtp.PointCode]bool{}}
	for _, d := range dests {
		if d.ANSI {
			r.ansi[d.DPC] = true
		} else {
			r.itu[d.DPC] = true
		}
	}
	return r
}

// Parse reads s. A number is the same in both variants; a dashed code in a
// gateway with groups of both is read both ways, and the reading that names
// a group of its variant wins (both naming one: ambiguous, the host must
// give the number). When neither does, the configured format decides (and
// the stack answers unknown_destination).
func (r pointCodes) Parse(s string) (mtp.PointCode, error) {
	if len(r.itu) == 0 || len(r.ansi) == 0 { // one variant: the configured format
		return r.f.Parse(s)
	}
	if !strings.Contains(s, "-") {
		return mtp.PointCodeFormat{ANSI: true}.Parse(s) // up to 24 bits, as a JSON number is
	}
	itu, errITU := mtp.PointCodeFormat{}.Parse(s)
	ansi, errANSI := mtp.PointCodeFormat{ANSI: true}.Parse(s)
	isITU, isANSI := errITU == nil && r.itu[itu], errANSI == nil && r.ansi[ansi]
	switch {
	case isITU && isANSI:
		return 0, fmt.Errorf("%q names an ITU group (%d) and an ANSI group (%d): give the number", s, itu, ansi)
	case isITU:
		return itu, nil
	case isANSI:
		return ansi, nil
	}
	return r.f.Parse(s)
}
