package stack

import (
	"context"
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// An outseize refused at the edge is answered from Submit, without waiting in
// the outbound queue or reaching the loop; one admitted there is queued and not
// asked about again; other requests and undecided outseizes are queued as before.
func TestEdgeAdmission(t *testing.T) {
	var events []Event
	decide := func(dpc mtp.PointCode, route string) (Status, bool, Queued) {
		switch {
		case route == "refuse":
			return StatusOutboundCongestion, true, nil
		case route == "admit":
			return StatusOK, true, nil
		}
		return StatusOK, false, nil
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

// queuedCount is a Queued that counts what waits.
type queuedCount struct{ n int }

func (q *queuedCount) Dequeued() { q.n-- }

// An outseize the edge let through with a Queued tells it once when the loop
// takes it from the outbound queue, and once when SubmitContext gives up on
// it; an outseize without one and other requests tell nothing.
func TestEdgeQueuedToldWhenDequeued(t *testing.T) {
	q := &queuedCount{}
	decide := func(dpc mtp.PointCode, route string) (Status, bool, Queued) {
		if route == "counted" {
			q.n++
			return StatusOK, false, q
		}
		return StatusOK, false, nil
	}
	s, err := New(testConfig(isup.ITU), func(*mtp.Message) error { return nil }, func(Event) {}, WithEdgeAdmission(decide))
	if err != nil {
		t.Fatal(err)
	}
	s.Submit(Outseize{Tag: 1, Route: "counted"})
	s.Submit(Outseize{Tag: 2, Route: "counted"})
	s.Submit(Outseize{Tag: 3, DPC: peerPC})
	if q.n != 2 {
		t.Fatalf("queued %d, want 2", q.n)
	}
	for want := 1; want >= 0; want-- {
		s.handle(<-s.outbound)
		if q.n != want {
			t.Fatalf("after the loop took one: queued %d, want %d", q.n, want)
		}
	}
	s.handle(<-s.outbound)
	if q.n != 0 {
		t.Fatalf("an outseize without a Queued changed the count to %d", q.n)
	}

	full, err := New(testConfig(isup.ITU), func(*mtp.Message) error { return nil }, func(Event) {}, WithEdgeAdmission(decide), WithQueueSize(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := full.SubmitContext(ctx, Outseize{Tag: 4, Route: "counted"}); err == nil {
		t.Fatal("SubmitContext on a full queue with a cancelled context returned nil")
	}
	if q.n != 0 {
		t.Fatalf("an outseize given up by SubmitContext left the count at %d", q.n)
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

// Screen decides as the edge does but answers a refusal to its caller: the
// status is returned and counted, and no Result goes to the sink. What it
// lets through is submitted without the edge asked again, so a Queued is
// counted once and told once.
func TestScreen(t *testing.T) {
	q := &queuedCount{}
	asked := 0
	decide := func(dpc mtp.PointCode, route string) (Status, bool, Queued) {
		asked++
		switch route {
		case "refuse":
			return StatusOutboundCongestion, true, nil
		case "high":
			return StatusHighTraffic, true, nil
		case "admit":
			return StatusOK, true, nil
		}
		q.n++
		return StatusOK, false, q
	}
	var events []Event
	s, err := New(testConfig(isup.ITU), func(*mtp.Message) error { return nil }, func(e Event) { events = append(events, e) }, WithEdgeAdmission(decide))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		route string
		want  Status
	}{{"refuse", StatusOutboundCongestion}, {"high", StatusHighTraffic}, {"refuse", StatusOutboundCongestion}} {
		if _, st := s.Screen(Outseize{Tag: 1, Route: c.route}); st != c.want {
			t.Fatalf("Screen to %q: %v, want %v", c.route, st, c.want)
		}
	}
	if len(events) != 0 || s.QueueLen(Outbound) != 0 {
		t.Fatalf("a screened refusal reached the sink (%+v) or the queue (%d)", events, s.QueueLen(Outbound))
	}
	stats := s.snapshot().Stats.Refused
	if stats[StatusOutboundCongestion] != 2 || stats[StatusHighTraffic] != 1 {
		t.Fatalf("screened refusals counted %v", stats)
	}

	admitted, st := s.Screen(Outseize{Tag: 2, Route: "admit"})
	counted, st2 := s.Screen(Outseize{Tag: 3, DPC: peerPC})
	if st != StatusOK || st2 != StatusOK || q.n != 1 {
		t.Fatalf("passed: %v %v, queued %d", st, st2, q.n)
	}
	asked = 0
	s.Submit(admitted)
	s.Submit(counted)
	if asked != 0 || q.n != 1 || s.QueueLen(Outbound) != 2 {
		t.Fatalf("submitting what Screen passed asked the edge %d times, queued %d, in the queue %d", asked, q.n, s.QueueLen(Outbound))
	}
	if it := <-s.outbound; !it.req.(Outseize).admitted {
		t.Fatal("an outseize Screen admitted is not marked admitted")
	}
	s.handle(<-s.outbound)
	if q.n != 0 {
		t.Fatalf("the loop taking a screened outseize left queued at %d", q.n)
	}
	if again, st := s.Screen(admitted); st != StatusOK || asked != 0 || !again.admitted {
		t.Fatalf("screening a screened outseize again: %v, asked %d", st, asked)
	}
}

// edgeStack is a Stack with two circuits whose loop the test drives by hand
// (handleAll), recording its events.
type edgeStack struct {
	*Stack
	t      *testing.T
	events []Event
}

func newEdgeStack(t *testing.T, opts ...Option) *edgeStack {
	t.Helper()
	cfg := testConfig(isup.ITU)
	cfg.Groups[0].CICs = []CICRange{{First: 1, Last: 2}}
	e := &edgeStack{t: t}
	s, err := New(cfg, func(*mtp.Message) error { return nil }, func(ev Event) { e.events = append(e.events, ev) }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	e.Stack = s
	return e
}

// handleAll runs the loop over what waits in the outbound queue.
func (e *edgeStack) handleAll() {
	for len(e.outbound) > 0 {
		e.handle(<-e.outbound)
	}
}

// results takes the Results recorded since the last call.
func (e *edgeStack) results() []Result {
	var rs []Result
	for _, ev := range e.events {
		if r, ok := ev.(Result); ok {
			rs = append(rs, r)
		}
	}
	e.events = nil
	return rs
}

// submit submits an outseize and reports whether the edge answered it
// (with which status) or queued it.
func (e *edgeStack) submit(o Outseize) (st Status, answered bool) {
	e.t.Helper()
	before := len(e.outbound)
	e.Submit(o)
	if len(e.outbound) > before {
		return 0, false
	}
	rs := e.results()
	if len(rs) != 1 {
		e.t.Fatalf("%+v neither queued nor answered once: %+v", o, rs)
	}
	return rs[0].Status, true
}

func called() isup.CalledPartyNumber {
	p, err := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	if err != nil {
		panic(err)
	}
	return p
}

// The edge refuses for want of a circuit (0x0101) an outseize the loop would
// refuse for that, counting the circuits the outseizes it let through will
// take, and leaves to the loop whatever the loop's earlier checks decide: a
// CIC asked for, no called digits, a destination not configured or
// paused, draining. A circuit freed serves the next outseize.
func TestEdgeRefusesForWantOfACircuit(t *testing.T) {
	e := newEdgeStack(t)
	to := Outseize{DPC: peerPC, Called: called()}
	for i := range 2 {
		if st, answered := e.submit(to); answered {
			t.Fatalf("outseize %d of 2 circuits answered at the edge: %v", i+1, st)
		}
	}
	// Both circuits are idle, but the two queued outseizes will take them.
	if st, answered := e.submit(to); !answered || st != StatusNoCircuit {
		t.Fatalf("a third outseize behind two queued, 2 circuits: answered %v, %v", answered, st)
	}
	e.handleAll()
	rs := e.results()
	if len(rs) != 2 || rs[0].Status != StatusOK || rs[1].Status != StatusOK {
		t.Fatalf("the queued outseizes: %+v", rs)
	}
	if st, answered := e.submit(to); !answered || st != StatusNoCircuit {
		t.Fatalf("both circuits busy: answered %v, %v", answered, st)
	}
	if got := e.snapshot().Stats.Refused[StatusNoCircuit]; got != 2 {
		t.Fatalf("refusals for want of a circuit counted %d, want 2", got)
	}
	// The loop's earlier checks decide these, as they would without the edge.
	for _, c := range []struct {
		o    Outseize
		want Status
	}{
		{Outseize{DPC: peerPC, Called: called(), HasCIC: true, CIC: 1}, StatusCircuitUnavailable},
		{Outseize{DPC: peerPC}, StatusBadRequest},
		{Outseize{DPC: 99, Called: called()}, StatusUnknownDestination},
		{Outseize{Route: "nowhere", Called: called()}, StatusUnknownDestination},
	} {
		if st, answered := e.submit(c.o); answered {
			t.Fatalf("%+v answered at the edge: %v", c.o, st)
		}
		e.handleAll()
		if rs := e.results(); len(rs) != 1 || rs[0].Status != c.want {
			t.Fatalf("%+v: %+v, want %v", c.o, rs, c.want)
		}
	}
	// The caller releases one call; once its RLC comes, the circuit serves
	// the next outseize, by route as by point code.
	freed := rs[0].CIC
	e.Submit(Release{Call: rs[0].Call})
	e.handleAll()
	e.results()
	e.handle(item{msg: rlcFrom(t, freed)})
	if st, answered := e.submit(Outseize{Route: "b", Called: called()}); answered {
		t.Fatalf("a circuit freed, yet refused at the edge: %v", st)
	}
	e.handleAll()
	if rs := e.results(); len(rs) != 1 || rs[0].Status != StatusOK || rs[0].CIC != freed {
		t.Fatalf("the freed circuit: %+v", rs)
	}
	// A paused destination is the loop's to refuse, as unavailable.
	e.handle(item{ev: mtp.Pause{PC: peerPC}})
	e.events = nil
	if st, answered := e.submit(to); answered {
		t.Fatalf("paused destination answered at the edge: %v", st)
	}
	e.handleAll()
	if rs := e.results(); len(rs) != 1 || rs[0].Status != StatusDestinationUnavailable {
		t.Fatalf("paused destination: %+v", rs)
	}
	e.handle(item{ev: mtp.Resume{PC: peerPC}})
	e.events = nil
	e.Submit(Drain{})
	e.handleAll()
	e.results()
	if st, answered := e.submit(to); answered {
		t.Fatalf("draining, answered at the edge: %v", st)
	}
	e.handleAll()
	if rs := e.results(); len(rs) != 1 || rs[0].Status != StatusShuttingDown {
		t.Fatalf("draining: %+v", rs)
	}
}

func rlcFrom(t *testing.T, cic uint16) mtp.Message {
	t.Helper()
	b, err := isup.Marshal(&isup.ReleaseComplete{Circuit: isup.Circuit{CIC: cic}}, isup.ITU)
	if err != nil {
		t.Fatal(err)
	}
	return mtp.Message{Label: fromPeer, Payload: b}
}

// The admission decides first, as in the loop: a call it refuses is refused
// for that with every circuit busy, and one it let through (counting it as
// queued) that then finds no circuit is told it left the queue.
func TestEdgeAdmissionBeforeCircuits(t *testing.T) {
	q := &queuedCount{}
	decide := func(dpc mtp.PointCode, route string) (Status, bool, Queued) {
		if route == "refuse" {
			return StatusOutboundCongestion, true, nil
		}
		q.n++
		return StatusOK, false, q
	}
	e := newEdgeStack(t, WithEdgeAdmission(decide))
	for range 2 {
		e.submit(Outseize{Route: "b", Called: called()})
	}
	e.handleAll()
	e.results()
	if q.n != 0 {
		t.Fatalf("queued %d after the loop took both", q.n)
	}
	if st, _ := e.submit(Outseize{Route: "refuse", Called: called()}); st != StatusOutboundCongestion {
		t.Fatalf("admission refusal with every circuit busy: %v", st)
	}
	if st, _ := e.submit(Outseize{Route: "b", Called: called()}); st != StatusNoCircuit {
		t.Fatalf("admitted, every circuit busy: %v", st)
	}
	if q.n != 0 {
		t.Fatalf("an outseize refused for want of a circuit left the admission's queued count at %d", q.n)
	}
	// Screen, as the host API calls it, refuses the same way without a Result.
	if _, st := e.Screen(Outseize{Route: "b", Called: called()}); st != StatusNoCircuit {
		t.Fatalf("Screen, every circuit busy: %v", st)
	}
	if len(e.events) != 0 || q.n != 0 {
		t.Fatalf("Screen's refusal: events %+v, queued %d", e.events, q.n)
	}
}
