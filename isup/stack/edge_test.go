package stack

import (
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// An outseize refused at the edge is answered from Submit, without waiting in
// the outbound queue or reaching the loop; one admitted there is queued and not
// asked about again; other requests and undecided outseizes are queued as before.
func TestEdgeAdmission(t *testing.T) {
	var events []Event
	decide := func(dpc mtp.PointCode, route string) (Status, bool) {
		switch {
		case route == "refuse":
			return StatusOutboundCongestion, true
		case route == "admit":
			return StatusOK, true
		}
		return StatusOK, false
	}
	s, err := New(testConfig(isup.ITU), func(*mtp.Message) error { return nil }, func(e Event) { events = append(events, e) }, WithEdgeAdmission(decide))
	if err != nil {
		t.Fatal(err)
	}
	s.Submit(Outseize{Tag: 7, Route: "refuse", Owner: "host"})
	if len(events) != 1 || s.QueueLen(Outbound) != 0 {
		t.Fatalf("refused at the edge: events %+v, queued %d", events, s.QueueLen(Outbound))
	}
	if r, ok := events[0].(Result); !ok || r.Tag != 7 || r.Status != StatusOutboundCongestion || r.Owner != "host" || r.Call != 0 {
		t.Fatalf("refusal %+v", events[0])
	}
	if got := s.snapshot().Stats.Refused[StatusOutboundCongestion]; got != 1 {
		t.Fatalf("edge refusals counted %d, want 1", got)
	}
	s.Submit(Outseize{Tag: 8, Route: "admit"})
	s.Submit(Outseize{Tag: 9, DPC: peerPC})
	s.Submit(Release{Tag: 10, Call: 1})
	if len(events) != 1 || s.QueueLen(Outbound) != 3 {
		t.Fatalf("events %+v, queued %d (want 3)", events, s.QueueLen(Outbound))
	}
	if it := <-s.outbound; !it.req.(Outseize).admitted {
		t.Fatal("an outseize admitted at the edge is not marked admitted")
	}
	if it := <-s.outbound; it.req.(Outseize).admitted {
		t.Fatal("an undecided outseize is marked admitted")
	}
}

// The loop does not ask AdmitOutgoing about an outseize admitted at the edge.
func TestEdgeAdmittedSkipsHook(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	asked := 0
	h.c.hooks.AdmitOutgoing = func(mtp.PointCode) Status { asked++; return StatusOutboundCongestion }
	h.c.request(Outseize{DPC: peerPC, Called: h.called(), admitted: true})
	if asked != 0 {
		t.Fatalf("hook asked %d times", asked)
	}
	h.c.request(Outseize{DPC: peerPC, Called: h.called()})
	if asked != 1 {
		t.Fatalf("hook asked %d times for an outseize not admitted at the edge", asked)
	}
}
