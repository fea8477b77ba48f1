package gateway

import (
	"context"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/sprc"
)

// WithCongestionControl attaches congestion and admission control: the stack
// asks it before every IAM and puts its ACL in every REL, the inbound pump
// sheds IAM/SAM at inbound level 2, and probes measure both queues. Alarms go
// to alarm; codeRed is called when Code Yellow has lasted too long (the binary
// dumps profiles and exits). Either may be nil.
func WithCongestionControl(cfg sprc.Config, alarm func(sprc.Alarm), codeRed func(reason string)) Option {
	return func(o *options) { o.sprc = &sprcOptions{cfg: cfg, alarm: alarm, codeRed: codeRed} }
}

type sprcOptions struct {
	cfg     sprc.Config
	alarm   func(sprc.Alarm)
	codeRed func(string)
}

// attachControl builds the controller and the stack hooks before the stack.
func (g *Gateway) attachControl(cfg Config) error {
	so := g.opts.sprc
	ctl, err := sprc.New(so.cfg, time.Now, sprc.Actions{Alarm: so.alarm, Ping: g.ping, CodeRed: so.codeRed})
	if err != nil {
		return err
	}
	g.Control = ctl
	g.firstCIC = map[mtp.PointCode]uint16{}
	for _, grp := range cfg.Stack.Groups {
		if len(grp.CICs) > 0 {
			g.firstCIC[grp.DPC] = grp.CICs[0].First
		}
	}
	g.routes = map[string]mtp.PointCode{}
	for _, grp := range cfg.Stack.Groups {
		g.routes[grp.Name] = grp.DPC
	}
	g.opts.stack = append(g.opts.stack, stack.WithEdgeAdmission(g.edgeAdmit), stack.WithHooks(stack.Hooks{
		// In the loop the wait is the request's own (just recorded).
		AdmitOutgoing: func(dpc mtp.PointCode) stack.Status {
			return refusalStatus[ctl.AdmitOutgoingAt(dpc, g.Stack.OutboundWait())]
		},
		AdmitIncoming: ctl.AdmitIncoming,
		ReleaseACL:    ctl.ReleaseACL,
		SendFilter:    ctl.SendAllowed,
		Observe:       func(o stack.Observation) { g.observe(ctl, o) },
	}))
	return nil
}

// edgeAdmit decides on an outseize before it is queued, while the gateway is
// at outbound congestion or in Code Yellow: then the answer is a refusal that
// does not depend on the destination (or, with the level-1 throttle, depends
// on the outbound queue's wait), and it is given at once instead of after
// the backlog it is about. Otherwise the adaptive admission refuses, without
// a lock, a call to a destination whose calls in set-up plus the requests to
// it already queued reach its limit. What passes (and destinations that are not
// configured) the loop decides, after its own checks. A destination that is
// unavailable (MTP paused, its user part unavailable) is left to the loop
// before any of this: it answers 0x0102, which tells the host to route
// around it, where 0x0C would have it back off and try again.
func (g *Gateway) edgeAdmit(dpc mtp.PointCode, route string) (stack.Status, bool, stack.Queued) {
	if g.Stack.Closed(dpc, route) {
		// Unavailable before congested, as in the loop: it answers 0x0102.
		return stack.StatusOK, false, nil
	}
	if route != "" {
		dpc = g.routes[route]
	}
	if r := g.Control.EdgeRefusal(); r != sprc.Admit || g.edge.Load() != 0 {
		if _, ok := g.firstCIC[dpc]; !ok {
			return stack.StatusOK, false, nil
		}
		if r != sprc.Admit {
			g.Control.RefuseAtEdge(r) // the same for every call: no lock, no clock
			return refusalStatus[r], true, nil
		}
		return refusalStatus[g.Control.AdmitOutgoingAt(dpc, g.Stack.OutboundWait())], true, nil
	}
	// The admission knows only destinations the loop admitted calls to; it
	// counts the requests to dpc it let through until the loop takes them.
	r, q := g.Control.AdmitEdge(dpc)
	if r != sprc.Admit {
		return stack.StatusOutboundCongestion, true, nil
	}
	return stack.StatusOK, false, q // a nil sprc.Queued stays nil
}

// refreshEdge records whether new outgoing calls are refused whatever their
// destination (outbound level 1 or 2, Code Yellow). Levels and Code Yellow
// change only when a probe period closes, so the runner's prober calls it.
func (g *Gateway) refreshEdge() {
	s := g.Control.Snapshot()
	var st stack.Status
	switch {
	case s.Level[sprc.Outbound] >= 1:
		st = stack.StatusOutboundCongestion
	case s.CodeYellow:
		st = stack.StatusHighTraffic
	}
	g.edge.Store(uint32(st))
}

// refusalStatus is the host-visible status of each refusal (an array: it is
// read for every outseize).
var refusalStatus = [...]stack.Status{
	sprc.Admit:                    stack.StatusOK,
	sprc.RefuseOutboundCongestion: stack.StatusOutboundCongestion,
	sprc.RefuseHighTraffic:        stack.StatusHighTraffic,
	sprc.RefuseOutOfService:       stack.StatusDestinationOutOfService,
	sprc.RefuseNetworkCongestion:  stack.StatusNetworkCongestion,
	sprc.RefuseACC:                stack.StatusACCThrottled,
	sprc.RefuseConstraint:         stack.StatusConstraintViolation,
	sprc.RefuseAdmission:          stack.StatusOutboundCongestion,
}

// observe feeds the controller from the loop. An outgoing call's set-up time
// counts from when its outseize was queued to its first backward message;
// the stack measures it (Observation.Setup).
func (g *Gateway) observe(ctl *sprc.Controller, o stack.Observation) {
	switch o.Kind {
	case stack.ObsRELReceived:
		ctl.RELReceivedFrom(o.PC, o.ACL, o.Variant)
	case stack.ObsCallStarted:
		if o.Outgoing {
			ctl.OutgoingCallStarted(o.PC, uint64(o.Call))
		} else {
			ctl.CallStarted(o.PC, false)
		}
	case stack.ObsCallEnded:
		ctl.CallEndedFor(o.PC, o.Outgoing, o.InSetup, uint64(o.Call))
	case stack.ObsT7Expired:
		ctl.T7Expired(o.PC, uint64(o.Call))
	case stack.ObsBackward:
		ctl.BackwardFor(o.PC, uint64(o.Call), o.Setup, o.Waited)
	case stack.ObsQueryAnswered:
		ctl.QueryAnswered(o.PC)
	case stack.ObsQueryUnanswered:
		ctl.QueryUnanswered(o.PC)
	}
}

// ping tests an out-of-service destination with a circuit query on its first
// CIC; the CQR (or T28) comes back as an observation.
func (g *Gateway) ping(dpc mtp.PointCode) {
	if cic, ok := g.firstCIC[dpc]; ok {
		g.Stack.Submit(stack.Maintenance{Op: stack.OpQuery, DPC: dpc, CIC: cic})
	}
}

// shed is the edge filter: true drops the message before it is queued.
func (g *Gateway) shed(m mtp.Message) bool {
	if g.Control == nil || m.SI != mtp.SIISUP || len(m.Payload) < 3 {
		return false
	}
	t := isup.MessageType(m.Payload[2])
	if !g.Control.ShedInbound(t) {
		return false
	}
	if f := g.opts.iamRefused; f != nil && t == isup.IAM {
		// The CIC is the first two octets (Q.763 §1.2: 12 bits ITU, 14 ANSI;
		// the spare bits are zero in practice), read without a decode.
		f(stack.RefusedIAM{OPC: m.OPC, CIC: uint16(m.Payload[0]) | uint16(m.Payload[1]&0x3F)<<8,
			Reason: "shed at the edge: inbound congestion level 2 (IAM dropped unread, no REL)"})
	}
	return true
}

// runControl sends the probes and ticks the controller until ctx ends.
func (g *Gateway) runControl(ctx context.Context) {
	queue := map[sprc.Direction]stack.Queue{sprc.Inbound: stack.Inbound, sprc.Outbound: stack.Outbound}
	// A probe waits behind the backlog; it must not hold up the runner.
	// The runner calls the prober right after it recorded the period's delay
	// for that queue: the moment the levels may have changed.
	r := sprc.NewRunner(g.Control, func(d sprc.Direction, done func(time.Duration)) {
		g.refreshEdge()
		go g.Stack.Probe(queue[d], done)
	}, time.Now)
	r.Run(ctx)
}
