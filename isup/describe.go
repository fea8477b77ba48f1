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

// Describe returns the fields an operator reads first (digits, cause, ACL, range,
// ...), in a fixed order. Log lines, `isupgw decode` and its JSON use it.
// Malformed optional parameters are reported by name with their raw hex.
func Describe(m Message) []Field {
	var f []Field
	add := func(name string, v any) { f = append(f, Field{name, v}) }
	switch x := m.(type) {
	case *InitialAddress:
		add("called", x.CalledParty.Digits.String())
		add("called_nai", int(x.CalledParty.NatureOfAddress))
		if cg, ok, err := x.CallingParty(); ok && err == nil {
			add("calling", cg.Digits.String())
			add("calling_nai", int(cg.NatureOfAddress))
			add("presentation", int(cg.Presentation))
		}
		add("cpc", int(x.CallingPartyCategory))
		add("nci", hex2(uint16(x.NatureOfConnection), 1))
		add("fci", hex2(uint16(x.ForwardCall), 2))
		if len(x.UserServiceInfo) > 0 {
			add("usi", hex.EncodeToString(x.UserServiceInfo))
		} else {
			add("tmr", int(x.TransmissionMedium))
		}
	case *SubsequentAddress:
		add("digits", x.SubsequentNumber.Digits.String())
	case *AddressComplete:
		add("bci", hex2(uint16(x.BackwardCall), 2))
	case *Connect:
		add("bci", hex2(uint16(x.BackwardCall), 2))
	case *CallProgress:
		add("event", int(x.Event.Event()))
	case *Release:
		f = appendCause(f, x.Cause)
		if acl := x.ACL(); acl != 0 {
			add("acl", int(acl))
		}
	case *Confusion:
		f = appendCause(f, x.Cause)
	case *ReleaseComplete:
		var c CauseIndicators
		if ok, err := x.Optional.Decode(&c); ok && err == nil {
			f = appendCause(f, c)
		}
	case *SuspendResume:
		add("network_initiated", x.Indicators.NetworkInitiated())
	case *Continuity:
		add("success", x.Indicators.Successful())
	case *InformationRequest:
		add("indicators", hex2(uint16(x.Indicators), 2))
	case *Information:
		add("indicators", hex2(uint16(x.Indicators), 2))
	case *GroupReset:
		f = appendRange(f, x.RangeAndStatus)
	case *GroupSupervision:
		add("supervision", int(x.Type.Kind()))
		f = appendRange(f, x.RangeAndStatus)
	case *CircuitQuery:
		f = appendRange(f, x.RangeAndStatus)
	case *CircuitQueryResponse:
		f = appendRange(f, x.RangeAndStatus)
		add("states", hex.EncodeToString(x.States))
	case *Generic:
		if len(x.Fixed) > 0 {
			add("fixed", hex.EncodeToString(x.Fixed))
		}
		for i, v := range x.Variable {
			add("variable"+strconv.Itoa(i+1), hex.EncodeToString(v))
		}
		if len(x.Body) > 0 {
			add("body", hex.EncodeToString(x.Body))
		}
	case *Unknown:
		add("body", hex.EncodeToString(x.Body))
	}
	return f
}

func appendCause(f []Field, c CauseIndicators) []Field {
	f = append(f, Field{"cause", int(c.Value)}, Field{"location", int(c.Location)})
	if c.CodingStandard != 0 {
		f = append(f, Field{"coding", int(c.CodingStandard)})
	}
	if len(c.Diagnostics) > 0 {
		f = append(f, Field{"diagnostics", hex.EncodeToString(c.Diagnostics)})
	}
	return f
}

func appendRange(f []Field, r RangeAndStatus) []Field {
	f = append(f, Field{"range", int(r.Range)})
	if r.Status != nil {
		f = append(f, Field{"status", hex.EncodeToString(r.Status)})
	}
	return f
}

func hex2(v uint16, octets int) string {
	b := []byte{byte(v), byte(v >> 8)}
	return hex.EncodeToString(b[:octets])
}

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
