package host

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
)

// maxDigits bounds a called or calling number: E.164 allows 15 digits; 40 leaves
// room for prefixes and network-specific numbers while keeping every IAM small.
const maxDigits = 40

// maxParams bounds the optional parameters a host may add to an IAM.
const maxParams = 32

// rawRequest is a request line as JSON. Pointers tell a missing field from a
// zero one; fields a request type does not use are ignored, and so are keys
// this version does not know.
type rawRequest struct {
	Type *string `json:"type"`
	Seq  *uint64 `json:"seq"`
	// hello
	Version  *int   `json:"version"`
	App      string `json:"app"`
	Token    string `json:"token"`
	Incoming bool   `json:"incoming"`
	// outseize
	DPC          *pcField     `json:"dpc"`
	Route        *string      `json:"route"`
	CIC          *int         `json:"cic"`
	Called       *string      `json:"called"`
	CalledNAI    *uint8       `json:"called_nai"`
	CalledNPI    *uint8       `json:"called_npi"`
	INN          *uint8       `json:"inn"`
	Calling      *string      `json:"calling"`
	CallingNAI   *uint8       `json:"calling_nai"`
	CallingNPI   *uint8       `json:"calling_npi"`
	Presentation *uint8       `json:"presentation"`
	Screening    *uint8       `json:"screening"`
	CPC          *uint8       `json:"cpc"`
	NCI          *uint8       `json:"nci"`
	FCI          *uint16      `json:"fci"`
	Params       []wire.Param `json:"params"`
	// call requests
	Call     *uint64 `json:"call"`
	BCI      *uint16 `json:"bci"`
	Event    *uint8  `json:"event"`
	Cause    *uint8  `json:"cause"`
	Location *uint8  `json:"location"`
	ACL      *uint8  `json:"acl"`
	// overload
	Level *int `json:"level"`
}

// decoded is a request that passed the host API's own checks.
type decoded struct {
	typ  string
	seq  *uint64
	call stack.CallID // for call requests: the handle, to check ownership
	// hello
	version  int
	app      string
	token    string
	incoming bool
	// overload
	level int
	// the stack request for alert, progress, answer and release (its Tag is
	// set by the server)
	req stack.Request
	// an outseize, by value: boxed into a Request only once admitted at the
	// edge (a refused outseize costs no allocation for it)
	out stack.Outseize
}

// refusal is a nak the host API gives without asking the stack.
type refusal struct {
	status wire.Status
	detail string
}

func (r *refusal) Error() string { return r.status.Name() + ": " + r.detail }

func refuse(st wire.Status, format string, a ...any) *refusal {
	return &refusal{status: st, detail: fmt.Sprintf(format, a...)}
}

// decodeRequest parses one line (without its newline). On a refusal, d.typ and
// d.seq are filled in as far as the line allowed, so the nak can echo seq.
// Point codes in text are read with pcf, the configuration's format.
func decodeRequest(line []byte, pcf pcParser) (d decoded, _ *refusal) {
	var r rawRequest // on the stack: only unmarshalRaw's copy escapes
	if !decodeFast(line, &r) {
		r = rawRequest{}
		if err := unmarshalRaw(line, &r); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return d, refuse(wire.StatusBadJSON, "malformed JSON: %v", err)
			}
			if te.Field == "" {
				return d, refuse(wire.StatusBadJSON, "a request must be a JSON object, not %s", te.Value)
			}
			// A field of the wrong type: the rest of the object was decoded, so
			// seq can still be echoed.
			d.seq = r.Seq
			if r.Type != nil {
				d.typ = *r.Type
			}
			return d, refuse(wire.StatusBadValue, "field %q: %s is not a valid %s", te.Field, te.Value, typeName(te.Type.String()))
		}
	}
	d.seq = r.Seq
	if r.Type == nil {
		return d, refuse(wire.StatusMissingField, `missing field "type"`)
	}
	d.typ = *r.Type
	if !knownType(d.typ) {
		return d, refuse(wire.StatusUnknownType, "unknown message type %q", d.typ)
	}
	if r.Seq == nil {
		return d, refuse(wire.StatusMissingField, `missing field "seq"`)
	}
	var rf *refusal
	switch d.typ {
	case wire.TypeHello:
		if r.Version == nil {
			return d, refuse(wire.StatusMissingField, `missing field "version"`)
		}
		d.version, d.app, d.token, d.incoming = *r.Version, r.App, r.Token, r.Incoming
	case wire.TypeOutseize:
		d.out, rf = decodeOutseize(&r, pcf)
	case wire.TypeAlert, wire.TypeProgress, wire.TypeAnswer, wire.TypeRelease:
		if r.Call == nil {
			return d, refuse(wire.StatusMissingField, `missing field "call"`)
		}
		d.call = stack.CallID(*r.Call)
		d.req, rf = decodeCallRequest(d.typ, d.call, &r)
	case wire.TypeOverload:
		if r.Level == nil {
			return d, refuse(wire.StatusMissingField, `missing field "level"`)
		}
		if *r.Level < 0 || *r.Level > 2 {
			return d, refuse(wire.StatusBadValue, `field "level": %d is not 0, 1 or 2`, *r.Level)
		}
		d.level = *r.Level
	case wire.TypeStatus:
	}
	return d, rf
}

// unmarshalRaw is encoding/json's decoding of a request, into a copy: the
// pointer json.Unmarshal takes escapes to the heap, and decodeRequest's own
// rawRequest, which decodeFast fills for almost every line, must not.
func unmarshalRaw(line []byte, r *rawRequest) error {
	var heap rawRequest
	err := json.Unmarshal(line, &heap)
	*r = heap
	return err
}

func knownType(t string) bool {
	for _, k := range wire.RequestTypes {
		if k == t {
			return true
		}
	}
	return false
}

// typeName turns a Go type in a json error into words a host developer reads.
func typeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "*"):
		return typeName(goType[1:])
	case goType == "string":
		return "string"
	case strings.HasPrefix(goType, "uint"):
		return goType[4:] + "-bit unsigned integer"
	case strings.HasPrefix(goType, "int"):
		return "integer"
	case goType == "bool":
		return "boolean"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	}
	return "value of this field"
}

func digits(field, s string) (isup.Digits, *refusal) {
	if s == "" {
		return isup.Digits{}, refuse(wire.StatusBadDigits, "field %q: no digits", field)
	}
	if len(s) > maxDigits {
		return isup.Digits{}, refuse(wire.StatusBadDigits, "field %q: %d digits, at most %d", field, len(s), maxDigits)
	}
	d, err := isup.ParseDigits(s)
	if err != nil {
		var ie *isup.Error
		msg := err.Error()
		if errors.As(err, &ie) && ie.Err != nil {
			msg = ie.Err.Error()
		}
		return isup.Digits{}, refuse(wire.StatusBadDigits, "field %q: %s", field, msg)
	}
	return d, nil
}

func opt8(p *uint8, def uint8) uint8 {
	if p == nil {
		return def
	}
	return *p
}

func max8(field string, p *uint8, max uint8) *refusal {
	if p != nil && *p > max {
		return refuse(wire.StatusBadValue, "field %q: %d is more than %d", field, *p, max)
	}
	return nil
}

func decodeOutseize(r *rawRequest, pcf pcParser) (stack.Outseize, *refusal) {
	o := stack.Outseize{}
	switch {
	case r.Route != nil && *r.Route != "":
		o.Route = *r.Route
	case r.DPC != nil:
		var rf *refusal
		if o.DPC, rf = r.DPC.resolve("dpc", pcf); rf != nil {
			return stack.Outseize{}, rf
		}
	default:
		return stack.Outseize{}, refuse(wire.StatusMissingField, `missing field "dpc" (or "route")`)
	}
	if r.CIC != nil {
		o.CIC, o.HasCIC = *r.CIC, true
	}
	if r.Called == nil {
		return stack.Outseize{}, refuse(wire.StatusMissingField, `missing field "called"`)
	}
	for _, c := range []struct {
		f   string
		p   *uint8
		max uint8
	}{
		{"called_nai", r.CalledNAI, 127}, {"called_npi", r.CalledNPI, 7}, {"inn", r.INN, 1},
		{"calling_nai", r.CallingNAI, 127}, {"calling_npi", r.CallingNPI, 7},
		{"presentation", r.Presentation, 3}, {"screening", r.Screening, 3},
	} {
		if rf := max8(c.f, c.p, c.max); rf != nil {
			return stack.Outseize{}, rf
		}
	}
	d, rf := digits("called", *r.Called)
	if rf != nil {
		return stack.Outseize{}, rf
	}
	o.Called = isup.CalledPartyNumber{
		NatureOfAddress: opt8(r.CalledNAI, isup.NAINational),
		NumberingPlan:   opt8(r.CalledNPI, isup.NPIISDN),
		INN:             opt8(r.INN, 0),
		Digits:          d,
	}
	if r.Calling != nil {
		d, rf := digits("calling", *r.Calling)
		if rf != nil {
			return stack.Outseize{}, rf
		}
		o.Calling = &isup.CallingPartyNumber{
			NatureOfAddress: opt8(r.CallingNAI, isup.NAINational),
			NumberingPlan:   opt8(r.CallingNPI, isup.NPIISDN),
			Presentation:    opt8(r.Presentation, isup.PresentationAllowed),
			Screening:       opt8(r.Screening, isup.ScreeningUserVerified),
			Digits:          d,
		}
	}
	if r.CPC != nil {
		o.Category = isup.CallingPartyCategory(*r.CPC)
	}
	if r.NCI != nil {
		o.NatureOfConnection = isup.NatureOfConnection(*r.NCI)
	}
	if r.FCI != nil {
		o.ForwardCall = isup.ForwardCallIndicators(*r.FCI)
	}
	if len(r.Params) > maxParams {
		return stack.Outseize{}, refuse(wire.StatusBadValue, `field "params": %d parameters, at most %d`, len(r.Params), maxParams)
	}
	for i, p := range r.Params {
		if p.Code == 0 {
			return stack.Outseize{}, refuse(wire.StatusBadValue, `field "params[%d].code": 0 is the end of the optional part, not a parameter`, i)
		}
		v, err := hex.DecodeString(p.Hex)
		if err != nil {
			return stack.Outseize{}, refuse(wire.StatusBadValue, `field "params[%d].hex": %v`, i, err)
		}
		if len(v) > 255 {
			return stack.Outseize{}, refuse(wire.StatusBadValue, `field "params[%d].hex": %d octets, at most 255`, i, len(v))
		}
		o.Optional.SetRaw(isup.ParameterCode(p.Code), bytes.Clone(v))
	}
	return o, nil
}

func decodeCallRequest(typ string, call stack.CallID, r *rawRequest) (stack.Request, *refusal) {
	switch typ {
	case wire.TypeAlert:
		return stack.Alert{Call: call, BCI: isup.BackwardCallIndicators(opt16(r.BCI))}, nil
	case wire.TypeProgress:
		if r.Event == nil {
			return nil, refuse(wire.StatusMissingField, `missing field "event"`)
		}
		if *r.Event == 0 || *r.Event > 0x7f {
			return nil, refuse(wire.StatusBadValue, `field "event": %d is not an event code 1-127`, *r.Event)
		}
		return stack.Progress{Call: call, Event: isup.EventInformation(*r.Event)}, nil
	case wire.TypeAnswer:
		return stack.Answer{Call: call}, nil
	}
	if rf := max8("cause", r.Cause, 127); rf != nil {
		return nil, rf
	}
	if rf := max8("location", r.Location, 15); rf != nil {
		return nil, rf
	}
	if rf := max8("acl", r.ACL, 3); rf != nil {
		return nil, rf
	}
	return stack.Release{Call: call, Cause: opt8(r.Cause, 0), Location: opt8(r.Location, 0), ACL: isup.AutomaticCongestionLevel(opt8(r.ACL, 0))}, nil
}

func opt16(p *uint16) uint16 {
	if p == nil {
		return 0
	}
	return *p
}
