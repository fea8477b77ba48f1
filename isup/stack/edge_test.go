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
