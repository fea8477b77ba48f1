package host_test

import (
	"errors"
	"testing"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// One call between two gateways over the real M3UA layer, step by step: the
// caller on TCP, the callee on the Unix socket; every event on both sides.
func TestCallEndToEnd(t *testing.T) {
	a, b := startPair(t, pairOpts{})
	caller := a.dial(t, "tcp", client.Config{App: "caller"})
	callee := b.dial(t, "unix", client.Config{App: "pbx", Incoming: true})

	s, err := caller.Outseize(ctx10(t), client.Outseize{DPC: 2, Called: "4930123456", Calling: "4930999"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Call == 0 || s.DPC != 2 || s.CIC < 1 || s.CIC > 8 {
		t.Fatalf("ack: %+v", s)
	}
	in := next[*client.Incoming](callee)
	if in.Called != "4930123456" || in.Calling != "4930999" || in.OPC != 1 || in.CIC != s.CIC || in.Route != "peer" || in.CPC != 10 || in.CalledNAI != 3 {
		t.Fatalf("incoming: %+v", in)
	}
	if len(in.Params) == 0 || in.Params[0].Code != 0x0a {
		t.Errorf("incoming params (calling party number expected): %+v", in.Params)
	}
	if err := callee.Alert(ctx10(t), in.Call); err != nil {
		t.Fatal(err)
	}
	if p := next[*client.Progress](caller); p.Call != s.Call || p.Message != "ACM" {
		t.Fatalf("progress: %+v", p)
	}
	if err := callee.Progress(ctx10(t), in.Call, 3); err != nil {
		t.Fatal(err)
	}
	if p := next[*client.Progress](caller); p.Message != "CPG" || p.Fields["event"] != float64(3) {
		t.Fatalf("progress: %+v", p)
	}
	if err := callee.Answer(ctx10(t), in.Call); err != nil {
		t.Fatal(err)
	}
	if an := next[*client.Answered](caller); an.Call != s.Call || an.Message != "ANM" {
		t.Fatalf("answered: %+v", an)
	}
	if err := caller.Release(ctx10(t), s.Call, 0, 0); err != nil {
		t.Fatal(err)
	}
	if r := next[*client.Released](caller); r.Call != s.Call || r.Remote || r.Cause != 16 {
		t.Fatalf("caller released: %+v", r)
	}
	if r := next[*client.Released](callee); r.Call != in.Call || !r.Remote || r.Cause != 16 || r.DPC != 1 || r.CIC != s.CIC {
		t.Fatalf("callee released: %+v", r)
	}
	// The call is over: a second release is refused.
	if st := nakStatus(t, caller.Release(ctx10(t), s.Call, 0, 0)); st != wire.StatusUnknownCall {
		t.Errorf("release after released: %s", st)
	}
	a.waitIdle(t)
	b.waitIdle(t)
}

// Several hosts on each gateway: incoming calls go round robin over the
// subscribed hosts; then a call the other way, released by the callee.
func TestSeveralHostsRoundRobin(t *testing.T) {
	a, b := startPair(t, pairOpts{})
	callers := []*hostConn{a.dial(t, "tcp", client.Config{App: "x"}), a.dial(t, "unix", client.Config{App: "y"})}
	var calleeRel []<-chan *client.Released
	for i := 0; i < 3; i++ {
		h := b.dial(t, []string{"tcp", "unix"}[i%2], client.Config{App: "pbx", Incoming: true})
		calleeRel = append(calleeRel, h.answerer())
	}
	b.dial(t, "tcp", client.Config{App: "watcher"}) // not subscribed: never offered a call
	for i := 0; i < 6; i++ {
		c := callers[i%2]
		s := c.call(2, "4930123456")
		if err := c.Release(ctx10(t), s.Call, 31, 0); err != nil {
			t.Fatal(err)
		}
		if r := next[*client.Released](c); r.Call != s.Call || r.Remote || r.Cause != 31 {
			t.Fatalf("released: %+v", r)
		}
		r := <-calleeRel[i%3]
		if r == nil || !r.Remote || r.Cause != 31 || r.Location != 1 {
			t.Fatalf("callee %d released: %+v", i%3, r)
		}
	}

	callee := a.dial(t, "unix", client.Config{App: "pbx", Incoming: true})
	caller := b.dial(t, "tcp", client.Config{App: "dialer"})
	s, err := caller.Outseize(ctx10(t), client.Outseize{DPC: 1, Called: "123"})
	if err != nil {
		t.Fatal(err)
	}
	in := next[*client.Incoming](callee)
	if in.OPC != 2 || in.Called != "123" {
		t.Fatalf("incoming: %+v", in)
	}
	if err := callee.Answer(ctx10(t), in.Call); err != nil { // CON: answer without alerting
		t.Fatal(err)
	}
	if an := next[*client.Answered](caller); an.Message != "CON" {
		t.Fatalf("answered: %+v", an)
	}
	if err := callee.Release(ctx10(t), in.Call, 17, 4); err != nil {
		t.Fatal(err)
	}
	if r := next[*client.Released](callee); r.Remote || r.Call != in.Call {
		t.Fatalf("callee released: %+v", r)
	}
	if r := next[*client.Released](caller); !r.Remote || r.Cause != 17 || r.Location != 4 || r.DPC != 1 || r.Call != s.Call {
		t.Fatalf("caller released: %+v", r)
	}
	a.waitIdle(t)
	b.waitIdle(t)
	m := b.srv.Metrics()
	if m.IncomingOffered != 6 || m.Requests["answer"] != 6 || m.Requests["alert"] != 6 || m.Events["incoming"] != 6 || m.Requests["hello"] != 5 {
		t.Errorf("metrics on B: %+v", m)
	}
}

func nakStatus(t *testing.T, err error) wire.Status {
	t.Helper()
	var nak *client.Nak
	if !errors.As(err, &nak) {
		t.Fatalf("want a nak, got %v", err)
	}
	if nak.Detail == "" || nak.Name != nak.Status.Name() {
		t.Errorf("nak without detail or with a wrong name: %+v", nak)
	}
	return nak.Status
}

// Each refusal the stack gives reaches the host as a nak with the stack's
// status number; congestion control's refusals come through the stack's
// admission hook, which the test drives.
func TestStatusCodes(t *testing.T) {
	admit := make(chan stack.Status, 1)
	hooks := &stack.Hooks{AdmitOutgoing: func(mtp.PointCode) stack.Status {
		select {
		case st := <-admit:
			return st
		default:
			return stack.StatusOK
		}
	}}
	a, b := startPair(t, pairOpts{hooksA: hooks})
	h := a.dial(t, "tcp", client.Config{})
	callee := b.dial(t, "unix", client.Config{Incoming: true})
	seize := func(o client.Outseize) error {
		if o.Called == "" {
			o.Called = "4930123456"
		}
		_, err := h.Outseize(ctx10(t), o)
		return err
	}
	check := func(what string, err error, want wire.Status) {
		t.Helper()
		if got := nakStatus(t, err); got != want {
			t.Errorf("%s: got %s, want %s", what, got, want)
		}
	}
	minus1, cic100 := -1, 100
	check("unknown point code", seize(client.Outseize{DPC: 99}), wire.StatusUnknownDestination)
	check("unknown route", seize(client.Outseize{Route: "nosuch"}), wire.StatusUnknownDestination)
	check("unreachable destination", seize(client.Outseize{DPC: 3}), wire.StatusDestinationUnavailable)
	check("CIC not in the group", seize(client.Outseize{DPC: 2, CIC: &cic100}), wire.StatusCircuitUnavailable)
	check("negative CIC", seize(client.Outseize{DPC: 2, CIC: &minus1}), wire.StatusBadRequest)
	check("unknown call", h.Answer(ctx10(t), 987654), wire.StatusUnknownCall)
	for _, st := range []stack.Status{stack.StatusOutboundCongestion, stack.StatusACCThrottled, stack.StatusConstraintViolation,
		stack.StatusDestinationOutOfService, stack.StatusHighTraffic, stack.StatusNetworkCongestion} {
		admit <- st
		check(st.String(), seize(client.Outseize{DPC: 2}), wire.Status(st))
	}

	// Every circuit busy: the ninth call finds none. The callee holds the calls
	// without answering them.
	var calls []uint64
	for i := 0; i < 8; i++ {
		s, err := h.Outseize(ctx10(t), client.Outseize{Route: "peer", Called: "4930123456"})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		calls = append(calls, s.Call)
		next[*client.Incoming](callee)
	}
	check("all circuits busy", seize(client.Outseize{DPC: 2}), wire.StatusNoCircuit)
	// Requests that do not fit the call's state.
	check("alert on an outgoing call", h.Alert(ctx10(t), calls[0]), wire.StatusInvalidState)
	check("answer on an outgoing call", h.Answer(ctx10(t), calls[0]), wire.StatusInvalidState)
	check("progress on an outgoing call", h.Progress(ctx10(t), calls[0], 1), wire.StatusInvalidState)
	// Another host cannot touch this host's calls.
	other := a.dial(t, "unix", client.Config{})
	check("another host's call", other.Release(ctx10(t), calls[0], 0, 0), wire.StatusUnknownCall)
	for _, id := range calls {
		if err := h.Release(ctx10(t), id, 0, 0); err != nil {
			t.Fatal(err)
		}
		next[*client.Released](h)
		next[*client.Released](callee)
	}
	a.waitIdle(t)
	b.waitIdle(t)
	m := a.srv.Metrics()
	if m.Naks[uint16(wire.StatusUnknownDestination)] != 2 || m.Naks[uint16(wire.StatusNoCircuit)] != 1 || m.Naks[uint16(wire.StatusInvalidState)] != 3 {
		t.Errorf("nak counters: %v", m.Naks)
	}
}
