package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
)

// Maintainer is what circuit maintenance needs of the stack (*stack.Stack has
// it). A Stack without it answers the maintenance requests with unknown_type.
type Maintainer interface {
	Maintain(ctx context.Context, r stack.Maintenance, done func(stack.MaintenanceOutcome)) error
	Circuits(ctx context.Context, f stack.CircuitFilter) (stack.CircuitList, error)
}

// maxMaintRange: one request covers at most 32 circuits, the limit of GRS and
// CQM and of the status bits set in a CGB (Q.763 §3.43).
const maxMaintRange = 31

// circuitsPage bounds one circuits answer so that it stays far below MaxLine;
// the host asks again with "offset" for the rest.
const circuitsPage = 300

// maintRequest is a maintenance or circuits request line.
type maintRequest struct {
	DPC      *pcField `json:"dpc"`
	Route    string   `json:"route"`
	Group    string   `json:"group"`
	CIC      *int     `json:"cic"`
	Last     *int     `json:"last"`
	Hardware bool     `json:"hardware"`
	State    string   `json:"state"`
	Summary  bool     `json:"summary"` // circuits: the group summaries only
	Offset   int      `json:"offset"`
}

func (c *conn) maintainer() (Maintainer, bool) {
	ref := c.s.stack.Load()
	if ref == nil {
		return nil, false
	}
	m, ok := ref.s.(Maintainer)
	return m, ok
}

// maintenance answers block, unblock, reset, query and circuits.
func (c *conn) maintenance(typ string, seq uint64, line []byte) {
	var r maintRequest
	if err := json.Unmarshal(line, &r); err != nil {
		c.nak(&seq, wire.StatusBadValue, fmt.Sprintf("malformed %s request: %v", typ, err), 0)
		return
	}
	m, ok := c.maintainer()
	if !ok {
		c.nak(&seq, wire.StatusUnknownType, "this gateway's stack offers no circuit maintenance", 0)
		return
	}
	if r.Route == "" {
		r.Route = r.Group
	}
	if typ == wire.TypeCircuits {
		c.circuits(m, seq, r)
		return
	}
	req, rf := maintenanceRequest(typ, r, c.s.pcs)
	if rf != nil {
		c.nak(&seq, rf.status, rf.detail, 0)
		return
	}
	s := c.s
	s.log.Info("circuit maintenance", "conn", c.id, "app", c.app, "op", typ, "dpc", s.cfg.PointCodes.Format(req.DPC), "route", req.Route,
		"cic", req.CIC, "range", req.Range, "hardware", req.Hardware)
	data := map[string]any{"op": typ, "cic": req.CIC, "last": int(req.CIC) + int(req.Range), "hardware": req.Hardware}
	if req.Route != "" {
		data["route"] = req.Route
	} else {
		data["dpc"] = uint32(req.DPC)
	}
	err := m.Maintain(s.runCtx(), req, func(o stack.MaintenanceOutcome) {
		// On the stack's loop: queue the answer, never wait.
		if o.Sent != 0 {
			data["sent"] = o.Sent.String()
		}
		if o.Status != stack.StatusOK {
			s.metrics.naks.add(uint16(o.Status))
			detail := o.Detail
			if detail == "" {
				detail = o.Status.String()
			}
			c.send(wire.TypeNak, encodeNak(&seq, wire.Status(o.Status), detail, 0))
			return
		}
		data["ack"] = o.Ack.String()
		data["waited_ms"] = o.Waited.Milliseconds()
		if o.States != nil {
			states := make([]map[string]any, len(o.States))
			for i, q := range o.States {
				states[i] = map[string]any{"cic": q.CIC, "coded": fmt.Sprintf("%02x", q.Coded), "state": q.Text}
			}
			data["states"] = states
		}
		c.ack(seq, data)
	})
	if err != nil {
		c.nak(&seq, wire.StatusShuttingDown, "the gateway is stopping", 0)
	}
}

// maintenanceRequest checks a maintenance request and builds the stack's.
func maintenanceRequest(typ string, r maintRequest, pcf pcParser) (stack.Maintenance, *refusal) {
	var req stack.Maintenance
	switch typ {
	case wire.TypeBlock:
		req.Op = stack.OpBlock
	case wire.TypeUnblock:
		req.Op = stack.OpUnblock
	case wire.TypeReset:
		req.Op = stack.OpReset
	case wire.TypeQuery:
		req.Op = stack.OpQuery
	}
	switch {
	case r.Route != "":
		req.Route = r.Route
	case r.DPC != nil:
		var rf *refusal
		if req.DPC, rf = r.DPC.resolve("dpc", pcf); rf != nil {
			return req, rf
		}
	default:
		return req, refuse(wire.StatusMissingField, `missing field "dpc" (or "route")`)
	}
	if r.CIC == nil {
		return req, refuse(wire.StatusMissingField, `missing field "cic"`)
	}
	if *r.CIC < 0 || *r.CIC > 0x3FFF {
		return req, refuse(wire.StatusBadValue, `field "cic": %d is not a CIC (0-16383)`, *r.CIC)
	}
	req.CIC = uint16(*r.CIC)
	if r.Last != nil {
		n := *r.Last - *r.CIC
		if n < 0 || n > maxMaintRange {
			return req, refuse(wire.StatusBadValue, `field "last": %d: want %d to %d (one request covers at most 32 circuits)`, *r.Last, *r.CIC, *r.CIC+maxMaintRange)
		}
		req.Range = uint8(n)
	}
	if r.Hardware && req.Op != stack.OpBlock && req.Op != stack.OpUnblock {
		return req, refuse(wire.StatusBadValue, `field "hardware": only block and unblock have a hardware kind`)
	}
	req.Hardware = r.Hardware
	return req, nil
}

// circuits answers the circuits request: a page of matching circuits and a
// summary of each group.
func (c *conn) circuits(m Maintainer, seq uint64, r maintRequest) {
	f := stack.CircuitFilter{Group: r.Route, State: r.State}
	if r.DPC != nil {
		var rf *refusal
		if f.DPC, rf = r.DPC.resolve("dpc", c.s.pcs); rf != nil {
			c.nak(&seq, rf.status, rf.detail, 0)
			return
		}
	}
	if !stack.ValidCircuitState(r.State) {
		c.nak(&seq, wire.StatusBadValue, fmt.Sprintf(`field "state": %q is not one of %s`, r.State, strings.Join(stack.CircuitStates, ", ")), 0)
		return
	}
	if r.CIC != nil {
		if *r.CIC < 1 || *r.CIC > 0x3FFF {
			c.nak(&seq, wire.StatusBadValue, fmt.Sprintf(`field "cic": %d is not a CIC (1-16383)`, *r.CIC), 0)
			return
		}
		f.First = uint16(*r.CIC)
		if r.Last != nil {
			if *r.Last < *r.CIC || *r.Last > 0x3FFF {
				c.nak(&seq, wire.StatusBadValue, fmt.Sprintf(`field "last": %d is below "cic" or beyond 16383`, *r.Last), 0)
				return
			}
			f.Last = uint16(*r.Last)
		}
	}
	if r.Offset < 0 {
		c.nak(&seq, wire.StatusBadValue, `field "offset": negative`, 0)
		return
	}
	f.Offset, f.Limit = r.Offset, circuitsPage
	if r.Summary {
		f.Limit = -1 // no rows (a negative limit takes none)
	}
	ctx, cancel := context.WithTimeout(c.s.runCtx(), 5*time.Second)
	list, err := m.Circuits(ctx, f)
	cancel()
	if err != nil {
		st := wire.StatusShuttingDown
		if errors.Is(err, context.DeadlineExceeded) {
			st = wire.StatusOutboundCongestion
		}
		c.nak(&seq, st, "the stack did not answer: "+err.Error(), 0)
		return
	}
	now := time.Now()
	page, sums := list.Rows, list.Groups
	data := map[string]any{"total": list.Total}
	if !r.Summary && r.Offset+len(page) < list.Total {
		data["next"] = r.Offset + len(page)
	}
	rows := make([]map[string]any, len(page))
	for i, ci := range page {
		row := map[string]any{"group": ci.Group, "dpc": uint32(ci.DPC), "pc": c.s.cfg.PointCodes.Format(ci.DPC), "cic": ci.CIC, "state": ci.State,
			"in_state_ms": now.Sub(ci.Since).Milliseconds()}
		if k := blockingKind(ci.LocalMaint, ci.LocalHW); k != "" {
			row["local"] = k
		}
		if k := blockingKind(ci.RemoteMaint, ci.RemoteHW); k != "" {
			row["remote"] = k
		}
		if len(ci.Awaiting) > 0 {
			row["awaiting"] = strings.Join(ci.Awaiting, ",")
		}
		if ci.Call != 0 {
			row["call"] = uint64(ci.Call)
			row["direction"] = "in"
			if ci.Outgoing {
				row["direction"] = "out"
			}
		}
		rows[i] = row
	}
	data["circuits"] = rows
	groups := make([]map[string]any, len(sums))
	for i, g := range sums {
		groups[i] = map[string]any{"group": g.Group, "dpc": uint32(g.DPC), "pc": c.s.cfg.PointCodes.Format(g.DPC), "variant": g.Variant.String(), "total": g.Total, "idle": g.Idle,
			"outgoing": g.Outgoing, "incoming": g.Incoming, "releasing": g.Releasing,
			"locally_blocked": g.LocallyBlocked, "remotely_blocked": g.RemBlocked, "awaiting": g.Awaiting}
	}
	data["groups"] = groups
	c.ack(seq, data)
}

func blockingKind(maint, hw bool) string {
	switch {
	case maint && hw:
		return "maintenance+hardware"
	case maint:
		return "maintenance"
	case hw:
		return "hardware"
	}
	return ""
}

// AlarmNumber is the host API's number for a stack alarm (docs/host-api.md),
// for logs that write it as the docs do.
func AlarmNumber(a stack.Alarm) uint16 { return mapStackAlarm(a).Number }
