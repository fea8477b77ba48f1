package host

import (
	"encoding/hex"
	"strconv"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
)

// The gateway's lines to hosts. Each returns a whole line, newline included.

func encodeAck(seq uint64, r stack.Result, outseize bool) []byte {
	w := newObj(wire.TypeAck, 96)
	w.uint("seq", seq)
	w.uint("status", uint64(wire.StatusOK))
	w.str("name", wire.StatusOK.Name())
	if r.Call != 0 {
		w.uint("call", uint64(r.Call))
	}
	if outseize {
		w.uint("dpc", uint64(r.DPC))
		w.uint("cic", uint64(r.CIC))
	}
	return w.end()
}

func encodeNak(seq *uint64, st wire.Status, detail string, call uint64) []byte {
	w := newObj(wire.TypeNak, 96+len(detail))
	if seq != nil {
		w.uint("seq", *seq)
	}
	w.uint("status", uint64(st))
	w.str("name", st.Name())
	if detail != "" {
		w.str("detail", detail)
	}
	if call != 0 {
		w.uint("call", call)
	}
	return w.end()
}

// encodeIncoming is the Request for Service with Data: the call's handle, where
// it comes from, and the IAM's contents (isup.Describe's fields, then every
// optional parameter in hex). It is written for every incoming call, so the
// fields go straight into the line (isup.DescribeTo), not through []Field.
func encodeIncoming(in stack.Incoming) []byte {
	w := &fieldsJSON{newObj(wire.TypeIncoming, 256)}
	w.uint("call", uint64(in.Call))
	w.uint("opc", uint64(in.OPC))
	w.str("route", in.Route)
	w.uint("cic", uint64(in.CIC))
	if in.IAM != nil {
		isup.DescribeTo(w, in.IAM)
		if len(in.IAM.Optional) > 0 {
			w.key("params")
			w.b = append(w.b, '[')
			for i, p := range in.IAM.Optional {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				w.b = append(w.b, `{"code":`...)
				w.b = strconv.AppendUint(w.b, uint64(p.Code), 10)
				w.b = append(w.b, `,"hex":"`...)
				w.b = hex.AppendEncode(w.b, p.Value)
				w.b = append(w.b, '"', '}')
			}
			w.b = append(w.b, ']')
		}
	}
	return w.end()
}

// encodeCallMessage is progress or answered: the ISUP message's name and fields.
func encodeCallMessage(typ string, id stack.CallID, m isup.Message) []byte {
	w := &fieldsJSON{newObj(typ, 96)}
	w.uint("call", uint64(id))
	if m != nil {
		w.str("message", m.MessageType().String())
		isup.DescribeTo(w, m)
	}
	return w.end()
}

// fieldsJSON writes isup.DescribeTo's fields as JSON members.
type fieldsJSON struct{ jw }

func (w *fieldsJSON) Int(k string, v int)   { w.int(k, int64(v)) }
func (w *fieldsJSON) Bool(k string, v bool) { w.bool(k, v) }

// Digits are 0-9 and A-F only: nothing to escape.
func (w *fieldsJSON) Digits(k string, d isup.Digits) {
	w.key(k)
	w.b = append(d.Append(append(w.b, '"')), '"')
}

func (w *fieldsJSON) Hex(k string, b []byte) {
	w.key(k)
	w.b = append(hex.AppendEncode(append(w.b, '"'), b), '"')
}

// encodeReleased is Channel Released with Data.
func encodeReleased(r stack.Released) []byte {
	w := newObj(wire.TypeReleased, 160)
	w.uint("call", uint64(r.Call))
	w.uint("cause", uint64(r.Cause))
	w.uint("location", uint64(r.Location))
	if r.ACL != 0 {
		w.uint("acl", uint64(r.ACL))
	}
	w.uint("dpc", uint64(r.PC))
	w.uint("cic", uint64(r.CIC))
	w.bool("remote", r.Remote)
	if r.Reason != "" {
		w.str("reason", r.Reason)
	}
	return w.end()
}

func encodeAlarm(a Alarm) []byte {
	typ := wire.TypeAlarm
	if a.Cleared {
		typ = wire.TypeAlarmCleared
	}
	w := newObj(typ, 128)
	w.uint("number", uint64(a.Number))
	w.uint("severity", uint64(a.Severity))
	w.str("text", a.Text)
	if a.Data == nil {
		w.key("data")
		w.b = append(w.b, '{', '}')
	} else {
		w.any("data", a.Data)
	}
	return w.end()
}

// mapStackAlarm numbers the stack's alarms for hosts.
func mapStackAlarm(a stack.Alarm) Alarm {
	out := Alarm{Cleared: a.Cleared, Text: a.Text, Data: map[string]any{}}
	if a.PC != 0 {
		out.Data["dpc"] = uint32(a.PC)
	}
	circuit := func() {
		out.Data["cic"] = a.CIC
		out.Data["range"] = a.Range
	}
	switch a.Kind {
	case stack.AlarmDestinationUnavailable:
		out.Number, out.Severity = wire.AlarmDestinationUnavailable, wire.SeverityMajor
	case stack.AlarmCircuitReset:
		out.Number, out.Severity = wire.AlarmCircuitReset, wire.SeverityMinor
		out.Data["cic"] = a.CIC
	case stack.AlarmGroupResetUnanswered:
		out.Number, out.Severity = wire.AlarmGroupResetUnanswered, wire.SeverityMajor
		circuit()
	case stack.AlarmBlockingUnanswered:
		out.Number, out.Severity = wire.AlarmBlockingUnanswered, wire.SeverityMinor
		circuit()
	case stack.AlarmUnequippedCircuit:
		out.Number, out.Severity = wire.AlarmUnequippedCircuit, wire.SeverityMinor
		out.Data["cic"] = a.CIC
	case stack.AlarmRemoteBlocked:
		out.Number, out.Severity = wire.AlarmRemoteBlocked, wire.SeverityMinor
		circuit()
	case stack.AlarmQueryResult:
		out.Number, out.Severity = wire.AlarmQueryResult, wire.SeverityInformative
		circuit()
	case stack.AlarmStandby:
		out.Number, out.Severity = wire.AlarmStandby, wire.SeverityInformative
		out.Data["role"] = "standby"
		if a.Cleared {
			out.Data["role"] = "active"
		}
	default:
		out.Number, out.Severity = 0, wire.SeverityInformative
		out.Data["kind"] = int(a.Kind)
	}
	if out.Text == "" {
		for _, ai := range wire.Alarms {
			if ai.Number == out.Number {
				out.Text = ai.Name
			}
		}
	}
	return out
}
