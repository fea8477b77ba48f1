package host

import (
	"reflect"
	"strings"

	"github.com/isupgw/isupgw/host/wire"
)

// decodeFast fills r from a request line the way json.Unmarshal would, for
// the lines hosts send all the time: one flat object whose keys are in lower
// case and whose values are plain strings (no escapes, ASCII), unsigned
// integers or booleans. It reports false for anything else (nested values
// such as params, escapes, null, negative or fractional numbers, a number too
// large for its field, upper case keys that encoding/json would match case-
// insensitively, trailing data, malformed JSON), and the caller then uses
// encoding/json, whose answers and error messages stay the reference.
//
// Reflection over rawRequest cost a host connection's reader about 4 us per
// line; this costs a fraction of that and one allocation.
func decodeFast(line []byte, r *rawRequest) bool {
	v := &fastValues{}
	i := fskip(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false
	}
	i = fskip(line, i+1)
	if i < len(line) && line[i] == '}' {
		return fskip(line, i+1) == len(line)
	}
	for {
		// key
		if i >= len(line) || line[i] != '"' {
			return false
		}
		ks := i + 1
		ke := ks
		for ke < len(line) && line[ke] != '"' {
			c := line[ke]
			if c == '\\' || c < 0x20 || c >= 0x80 || (c >= 'A' && c <= 'Z') {
				return false
			}
			ke++
		}
		if ke >= len(line) {
			return false
		}
		key := line[ks:ke]
		i = fskip(line, ke+1)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = fskip(line, i+1)
		if i >= len(line) {
			return false
		}
		// value
		var str []byte
		var num uint64
		var isStr, isNum, isBool, bval bool
		switch c := line[i]; {
		case c == '"':
			s := i + 1
			e := s
			for e < len(line) && line[e] != '"' {
				if c := line[e]; c == '\\' || c < 0x20 || c >= 0x80 {
					return false
				}
				e++
			}
			if e >= len(line) {
				return false
			}
			str, isStr, i = line[s:e], true, e+1
		case c >= '0' && c <= '9':
			s := i
			for i < len(line) && line[i] >= '0' && line[i] <= '9' {
				if num > (1<<64-1)/10 {
					return false
				}
				d := uint64(line[i] - '0')
				if num*10 > 1<<64-1-d {
					return false
				}
				num = num*10 + d
				i++
			}
			if (line[s] == '0' && i-s > 1) || (i < len(line) && (line[i] == '.' || line[i] == 'e' || line[i] == 'E')) {
				return false
			}
			isNum = true
		case c == 't' && hasPrefix(line[i:], "true"):
			isBool, bval, i = true, true, i+4
		case c == 'f' && hasPrefix(line[i:], "false"):
			isBool, i = true, i+5
		default:
			return false // null, negative numbers, objects, arrays, garbage
		}
		if !v.set(r, string(key), str, num, isStr, isNum, isBool, bval) {
			return false
		}
		i = fskip(line, i)
		if i >= len(line) {
			return false
		}
		if line[i] == '}' {
			return fskip(line, i+1) == len(line)
		}
		if line[i] != ',' {
			return false
		}
		i = fskip(line, i+1)
	}
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

func fskip(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// fastValues holds what the pointers of a rawRequest point to: one
// allocation per line instead of one per field.
type fastValues struct {
	typ, route, called, calling                                       string
	seq, call                                                         uint64
	version, cic, level                                               int
	dpc                                                               pcField
	calledNAI, calledNPI, inn, callingNAI, callingNPI, pres, scr, cpc uint8
	nci, event, cause, location, acl                                  uint8
	fci, bci                                                          uint16
}

// set stores one member; false when its value has a type the field does not
// take (encoding/json then reports it) or the key needs encoding/json.
func (v *fastValues) set(r *rawRequest, key string, str []byte, num uint64, isStr, isNum, isBool, b bool) bool {
	u8 := func(dst *uint8, p **uint8) bool {
		if !isNum || num > 0xFF {
			return false
		}
		*dst = uint8(num)
		*p = dst
		return true
	}
	u16 := func(dst *uint16, p **uint16) bool {
		if !isNum || num > 0xFFFF {
			return false
		}
		*dst = uint16(num)
		*p = dst
		return true
	}
	i := func(dst *int, p **int) bool {
		if !isNum || num > 1<<31-1 {
			return false
		}
		*dst = int(num)
		*p = dst
		return true
	}
	s := func(dst *string, p **string) bool {
		if !isStr {
			return false
		}
		*dst = string(str)
		*p = dst
		return true
	}
	switch key {
	case "type":
		for _, t := range wire.RequestTypes {
			if string(str) == t { // a known type costs no copy of its name
				if !isStr {
					return false
				}
				v.typ, r.Type = t, &v.typ
				return true
			}
		}
		return s(&v.typ, &r.Type)
	case "seq":
		if !isNum {
			return false
		}
		v.seq, r.Seq = num, &v.seq
		return true
	case "version":
		return i(&v.version, &r.Version)
	case "app":
		if !isStr {
			return false
		}
		r.App = string(str)
		return true
	case "token":
		if !isStr {
			return false
		}
		r.Token = string(str)
		return true
	case "incoming":
		if !isBool {
			return false
		}
		r.Incoming = b
		return true
	case "dpc":
		switch {
		case isNum && num <= 0xFFFFFFFF:
			v.dpc = pcField{num: uint32(num), hasNum: true}
		case isStr:
			v.dpc = pcField{text: string(str)}
		default:
			return false
		}
		r.DPC = &v.dpc
		return true
	case "route":
		return s(&v.route, &r.Route)
	case "cic":
		return i(&v.cic, &r.CIC)
	case "called":
		return s(&v.called, &r.Called)
	case "called_nai":
		return u8(&v.calledNAI, &r.CalledNAI)
	case "called_npi":
		return u8(&v.calledNPI, &r.CalledNPI)
	case "inn":
		return u8(&v.inn, &r.INN)
	case "calling":
		return s(&v.calling, &r.Calling)
	case "calling_nai":
		return u8(&v.callingNAI, &r.CallingNAI)
	case "calling_npi":
		return u8(&v.callingNPI, &r.CallingNPI)
	case "presentation":
		return u8(&v.pres, &r.Presentation)
	case "screening":
		return u8(&v.scr, &r.Screening)
	case "cpc":
		return u8(&v.cpc, &r.CPC)
	case "nci":
		return u8(&v.nci, &r.NCI)
	case "fci":
		return u16(&v.fci, &r.FCI)
	case "params":
		return false // an array: encoding/json
	case "call":
		if !isNum {
			return false
		}
		v.call, r.Call = num, &v.call
		return true
	case "bci":
		return u16(&v.bci, &r.BCI)
	case "event":
		return u8(&v.event, &r.Event)
	case "cause":
		return u8(&v.cause, &r.Cause)
	case "location":
		return u8(&v.location, &r.Location)
	case "level":
		return i(&v.level, &r.Level)
	case "acl":
		return u8(&v.acl, &r.ACL)
	}
	// A field of rawRequest this function does not know (one added since):
	// encoding/json. Any other key is ignored, as encoding/json ignores it.
	return !rawKeys[key]
}

// rawKeys are the JSON names of rawRequest's fields.
var rawKeys = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[rawRequest]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()
