package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// TraceFilter selects what a trace shows; zero fields select all. With Called,
// a circuit is traced from an IAM (either direction) whose called number starts
// with the prefix until the next IAM on it that does not match.
type TraceFilter struct {
	DPC    mtp.PointCode // the adjacent exchange
	CIC    uint16
	Called string // called number prefix (digits as the host API writes them)
}

// traceTimeFormat is `isupgw decode`'s.
const traceTimeFormat = "2006-01-02T15:04:05.000000Z"

// tracer holds the running traces. The core's pointer to it is nil while no
// trace runs, so the loop pays one pointer test per message: only the loop
// goroutine reads or writes it.
type tracer struct {
	subs   []*traceSub
	nextID uint64
}

type traceSub struct {
	id    uint64
	f     TraceFilter
	sink  func(string)
	circs map[int32]bool  // circuits an IAM matched (Called filter)
	tags  map[uint64]bool // requests shown, whose Result is shown too
}

// MaxTraces bounds the traces running at once: each costs the loop a filter
// test per message.
const MaxTraces = 16

// ErrTooManyTraces refuses a trace beyond MaxTraces.
var ErrTooManyTraces = errors.New("stack: too many traces running")

// Trace starts a trace: sink gets one line per matching ISUP message, host
// request, result and release, on the loop goroutine (it must not block). The
// returned id ends it with Untrace.
func (s *Stack) Trace(ctx context.Context, f TraceFilter, sink func(line string)) (uint64, error) {
	ch := make(chan uint64, 1)
	it := item{fn: func(c *core) {
		if c.trace != nil && len(c.trace.subs) >= MaxTraces {
			ch <- 0
			return
		}
		ch <- c.startTrace(f, sink)
	}}
	select {
	case s.outbound <- it:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case id := <-ch:
		if id == 0 {
			return 0, ErrTooManyTraces
		}
		return id, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Untrace ends a trace; the sink is not called after the loop has taken it.
func (s *Stack) Untrace(ctx context.Context, id uint64) error {
	select {
	case s.outbound <- item{fn: func(c *core) { c.stopTrace(id) }}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *core) startTrace(f TraceFilter, sink func(string)) uint64 {
	if c.traceRef == nil {
		c.traceRef = &tracer{}
		// Events pass the trace on their way out; installed once, it tests the
		// pointer and goes on.
		inner := c.emit
		c.emit = func(e Event) {
			if c.trace != nil {
				c.trace.event(c, e)
			}
			inner(e)
		}
	}
	t := c.traceRef
	t.nextID++
	t.subs = append(t.subs, &traceSub{id: t.nextID, f: f, sink: sink, circs: map[int32]bool{}, tags: map[uint64]bool{}})
	c.trace = t
	return t.nextID
}

func (c *core) stopTrace(id uint64) {
	t := c.traceRef
	if t == nil {
		return
	}
	for i, s := range t.subs {
		if s.id == id {
			t.subs = append(t.subs[:i:i], t.subs[i+1:]...)
			break
		}
	}
	if len(t.subs) == 0 {
		c.trace = nil
	}
}

func (s *traceSub) circuitMatches(c *core, p int, cic uint16, ci int32) bool {
	f := s.f
	if f.DPC != 0 && c.peers[p].group.DPC != f.DPC || f.CIC != 0 && cic != f.CIC {
		return false
	}
	return f.Called == "" || ci >= 0 && s.circs[ci]
}

// message shows an ISUP message sent (out) or received to every trace it
// matches, in `isupgw decode`'s line format.
func (t *tracer) message(c *core, p int, lbl mtp.Label, m isup.Message) {
	cic := m.CircuitID()
	ci, ok := c.circuitAt(p, cic)
	if !ok {
		ci = -1
	}
	var line string
	for _, s := range t.subs {
		if iam, ok := m.(*isup.InitialAddress); ok && s.f.Called != "" && ci >= 0 {
			s.circs[ci] = strings.HasPrefix(iam.CalledParty.Digits.String(), s.f.Called)
		}
		if !s.circuitMatches(c, p, cic, ci) {
			continue
		}
		if line == "" {
			pcf := c.cfg.PointCodes
			line = fmt.Sprintf("%s %s>%s sls=%d cic=%d %s", c.now.UTC().Format(traceTimeFormat), pcf.Format(lbl.OPC), pcf.Format(lbl.DPC), lbl.SLS, cic, m.MessageType())
			if d := isup.DescribeString(m); d != "" {
				line += " " + d
			}
		}
		s.sink(line)
	}
}

// callCircuit finds the peer, CIC and circuit of a call (ok false when over).
func (c *core) callCircuit(id CallID) (p int, cic uint16, ci int32, ok bool) {
	cl, found := c.calls[id]
	if !found {
		return 0, 0, -1, false
	}
	cc := &c.circuits[cl.circ]
	return int(cc.peer), cc.cic, cl.circ, true
}

// request shows a host request that concerns a traced call or circuit.
func (t *tracer) request(c *core, r Request) {
	var (
		tag  uint64
		text string
		p    int
		cic  uint16
		ci   int32 = -1
		ok   bool
	)
	switch x := r.(type) {
	case Outseize:
		tag = x.Tag
		var st Status
		if p, st, _ = c.destination(x); st != StatusOK {
			return
		}
		called := x.Called.Digits.String()
		text = fmt.Sprintf("outseize dpc=%s called=%s", c.cfg.PointCodes.Format(c.peers[p].group.DPC), called)
		if x.HasCIC {
			text += fmt.Sprintf(" cic=%d", x.CIC)
			cic = uint16(x.CIC)
		}
		for _, s := range t.subs {
			f := s.f
			if (f.DPC == 0 || c.peers[p].group.DPC == f.DPC) && (f.CIC == 0 || x.HasCIC && cic == f.CIC) && strings.HasPrefix(called, f.Called) {
				s.tags[tag] = true
				s.sink(t.hostLine(c, 0, text))
			}
		}
		return
	case Alert:
		tag, text = x.Tag, "alert"
		p, cic, ci, ok = c.callCircuit(x.Call)
	case Answer:
		tag, text = x.Tag, "answer"
		p, cic, ci, ok = c.callCircuit(x.Call)
	case Progress:
		tag, text = x.Tag, fmt.Sprintf("progress event=%d", x.Event)
		p, cic, ci, ok = c.callCircuit(x.Call)
	case Release:
		tag, text = x.Tag, fmt.Sprintf("release cause=%d location=%d", x.Cause, x.Location)
		p, cic, ci, ok = c.callCircuit(x.Call)
	case Maintenance:
		var st Status
		if p, st, _ = c.destination(Outseize{DPC: x.DPC, Route: x.Route}); st != StatusOK {
			return
		}
		tag, cic = x.Tag, x.CIC
		ci, _ = c.circuitAt(p, cic)
		text = fmt.Sprintf("maintenance %s cic=%d range=%d hardware=%v", x.Op, x.CIC, x.Range, x.Hardware)
		ok = true
	default:
		return
	}
	if !ok {
		return
	}
	var call CallID
	if cc := ci; cc >= 0 && c.circuits[cc].call != nil {
		call = c.circuits[cc].call.id
	}
	for _, s := range t.subs {
		if s.circuitMatches(c, p, cic, ci) {
			s.tags[tag] = true
			s.sink(t.hostLine(c, call, text))
		}
	}
}

func (t *tracer) hostLine(c *core, call CallID, text string) string {
	return fmt.Sprintf("%s host>gw call=%d %s", c.now.UTC().Format(traceTimeFormat), call, text)
}

// event shows the results of traced requests, incoming offers and releases.
func (t *tracer) event(c *core, e Event) {
	now := c.now.UTC().Format(traceTimeFormat)
	switch x := e.(type) {
	case Result:
		for _, s := range t.subs {
			if !s.tags[x.Tag] {
				continue
			}
			delete(s.tags, x.Tag)
			line := fmt.Sprintf("%s gw>host call=%d result status=0x%04X %s", now, x.Call, uint16(x.Status), x.Status)
			if x.CIC != 0 {
				line += fmt.Sprintf(" dpc=%s cic=%d", c.cfg.PointCodes.Format(x.DPC), x.CIC)
			}
			if x.Detail != "" {
				line += ": " + x.Detail
			}
			s.sink(line)
		}
	case Incoming:
		p, ok := c.peerByPC[x.OPC]
		if !ok {
			return
		}
		ci, _ := c.circuitAt(p, x.CIC)
		for _, s := range t.subs {
			if s.circuitMatches(c, p, x.CIC, ci) {
				s.sink(fmt.Sprintf("%s gw>host call=%d incoming route=%s cic=%d", now, x.Call, x.Route, x.CIC))
			}
		}
	case Released:
		p, ok := c.peerByPC[x.PC]
		if !ok {
			return
		}
		ci, found := c.circuitAt(p, x.CIC)
		if !found {
			ci = -1
		}
		for _, s := range t.subs {
			if s.circuitMatches(c, p, x.CIC, ci) {
				line := fmt.Sprintf("%s gw>host call=%d released cause=%d location=%d remote=%v", now, x.Call, x.Cause, x.Location, x.Remote)
				if x.ACL != 0 {
					line += fmt.Sprintf(" acl=%d", x.ACL)
				}
				if x.Reason != "" {
					line += " reason=" + x.Reason
				}
				s.sink(line)
			}
		}
	}
}

// TraceCount reports how many traces run (waiting for the loop).
func (s *Stack) TraceCount(ctx context.Context) (int, error) {
	ch := make(chan int, 1)
	select {
	case s.outbound <- item{fn: func(c *core) {
		n := 0
		if c.trace != nil {
			n = len(c.trace.subs)
		}
		ch <- n
	}}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case n := <-ch:
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (op MaintenanceOp) String() string {
	switch op {
	case OpBlock:
		return "block"
	case OpUnblock:
		return "unblock"
	case OpReset:
		return "reset"
	case OpQuery:
		return "query"
	}
	return fmt.Sprintf("op%d", uint8(op))
}
