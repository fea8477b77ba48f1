package isup

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// Field is one named value in a message's description.
type Field struct {
	Name  string
	Value any // string, int or bool
}

// FieldWriter takes a message's description field by field (DescribeTo). A
// writer that formats the fields itself, such as the host API's JSON lines
// written for every call, then needs no []Field and boxes no value. Digits
// and Hex are the string fields: the digits as Digits.String writes them, the
// octets in lower-case hex.
type FieldWriter interface {
	Int(name string, v int)
	Bool(name string, v bool)
	Digits(name string, d Digits)
	Hex(name string, b []byte)
}

// Describe returns the fields an operator reads first (digits, cause, ACL, range,
// ...), in a fixed order. Log lines, `isupgw decode` and its JSON use it.
// Malformed optional parameters are reported by name with their raw hex.
func Describe(m Message) []Field {
	var f fieldList
	DescribeTo(&f, m)
	return f
}

// DescribeTo writes Describe's fields, in its order, to w.
func DescribeTo(w FieldWriter, m Message) {
	switch x := m.(type) {
	case *InitialAddress:
		w.Digits("called", x.CalledParty.Digits)
		w.Int("called_nai", int(x.CalledParty.NatureOfAddress))
		if cg, ok, err := x.CallingParty(); ok && err == nil {
			w.Digits("calling", cg.Digits)
			w.Int("calling_nai", int(cg.NatureOfAddress))
			w.Int("presentation", int(cg.Presentation))
		}
		w.Int("cpc", int(x.CallingPartyCategory))
		w.Hex("nci", []byte{byte(x.NatureOfConnection)})
		w.Hex("fci", le16(uint16(x.ForwardCall)))
		if len(x.UserServiceInfo) > 0 {
			w.Hex("usi", x.UserServiceInfo)
		} else {
			w.Int("tmr", int(x.TransmissionMedium))
		}
	case *SubsequentAddress:
		w.Digits("digits", x.SubsequentNumber.Digits)
	case *AddressComplete:
		w.Hex("bci", le16(uint16(x.BackwardCall)))
	case *Connect:
		w.Hex("bci", le16(uint16(x.BackwardCall)))
	case *CallProgress:
		w.Int("event", int(x.Event.Event()))
	case *Release:
		describeCause(w, x.Cause)
		if acl := x.ACL(); acl != 0 {
			w.Int("acl", int(acl))
		}
	case *Confusion:
		describeCause(w, x.Cause)
	case *ReleaseComplete:
		var c CauseIndicators
		if ok, err := x.Optional.Decode(&c); ok && err == nil {
			describeCause(w, c)
		}
	case *SuspendResume:
		w.Bool("network_initiated", x.Indicators.NetworkInitiated())
	case *Continuity:
		w.Bool("success", x.Indicators.Successful())
	case *InformationRequest:
		w.Hex("indicators", le16(uint16(x.Indicators)))
	case *Information:
		w.Hex("indicators", le16(uint16(x.Indicators)))
	case *GroupReset:
		describeRange(w, x.RangeAndStatus)
	case *GroupSupervision:
		w.Int("supervision", int(x.Type.Kind()))
		describeRange(w, x.RangeAndStatus)
	case *CircuitQuery:
		describeRange(w, x.RangeAndStatus)
	case *CircuitQueryResponse:
		describeRange(w, x.RangeAndStatus)
		w.Hex("states", x.States)
	case *Generic:
		if len(x.Fixed) > 0 {
			w.Hex("fixed", x.Fixed)
		}
		for i, v := range x.Variable {
			w.Hex("variable"+strconv.Itoa(i+1), v)
		}
		if len(x.Body) > 0 {
			w.Hex("body", x.Body)
		}
	case *Unknown:
		w.Hex("body", x.Body)
	}
}

func describeCause(w FieldWriter, c CauseIndicators) {
	w.Int("cause", int(c.Value))
	w.Int("location", int(c.Location))
	if c.CodingStandard != 0 {
		w.Int("coding", int(c.CodingStandard))
	}
	if len(c.Diagnostics) > 0 {
		w.Hex("diagnostics", c.Diagnostics)
	}
}

func describeRange(w FieldWriter, r RangeAndStatus) {
	w.Int("range", int(r.Range))
	if r.Status != nil {
		w.Hex("status", r.Status)
	}
}

// le16 is a two-octet indicator field in wire order (first octet first).
func le16(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }

// fieldList is the FieldWriter behind Describe.
type fieldList []Field

func (f *fieldList) Int(name string, v int)       { *f = append(*f, Field{name, v}) }
func (f *fieldList) Bool(name string, v bool)     { *f = append(*f, Field{name, v}) }
func (f *fieldList) Digits(name string, d Digits) { *f = append(*f, Field{name, d.String()}) }
func (f *fieldList) Hex(name string, b []byte)    { *f = append(*f, Field{name, hex.EncodeToString(b)}) }

// DescribeString formats Describe as "name=value" pairs separated by spaces.
func DescribeString(m Message) string {
	var sb strings.Builder
	for i, fl := range Describe(m) {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(fl.Name)
		sb.WriteByte('=')
		switch v := fl.Value.(type) {
		case string:
			sb.WriteString(v)
		case int:
			sb.WriteString(strconv.Itoa(v))
		case bool:
			sb.WriteString(strconv.FormatBool(v))
		}
	}
	return sb.String()
}
