package sprc

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
)

// TestEdgeRefusalMatchesTheLoop: the refusal the edge gives without asking
// is the one the full check gives, in every state where it gives one.
func TestEdgeRefusalMatchesTheLoop(t *testing.T) {
	for _, policy := range []Level1Policy{Level1RefuseAll, Level1Throttle} {
		cfg := Default
		cfg.Level1Outseize = policy
		cfg.CodeYellow.SampleSize = 1
		f := newFake(t, cfg)
		check := func(state string, want Refusal) {
			t.Helper()
			if got := f.c.EdgeRefusal(); got != want {
				t.Fatalf("%s, %s: edge refusal %v, want %v", policy, state, got, want)
			}
			if want != Admit {
				if got := f.c.AdmitOutgoing(9); got != want {
					t.Fatalf("%s, %s: the loop says %v, the edge %v", policy, state, got, want)
				}
			}
		}
		check("no congestion", Admit)
		f.c.Probe(Outbound, 10*time.Second) // level 1
		if policy == Level1Throttle {
			check("level 1", Admit) // depends on the wait: the loop decides
		} else {
			check("level 1", RefuseOutboundCongestion)
		}
		f.c.Probe(Outbound, 12*time.Second)
		check("level 2", RefuseOutboundCongestion)
		for range 10 {
			f.c.Probe(Outbound, 0)
		}
		f.c.Probe(Inbound, 30*time.Millisecond) // Code Yellow after one sample
		check("Code Yellow", RefuseHighTraffic)
		before := f.c.Snapshot().Refused[RefuseHighTraffic]
		f.c.RefuseAtEdge(RefuseHighTraffic)
		if n := f.c.Snapshot().Refused[RefuseHighTraffic]; n != before+1 {
			t.Fatalf("edge refusal counted %d, want %d", n, before+1)
		}
	}
}

// TestAdmissionLevelRaisesAlarmAndACL: the admission's level 1 raises alarm
// 0x16 (outbound) and the ACL, leaves the probes' level alone, combines with
// it, and clears only after the hold and clear times.
func TestAdmissionLevelRaisesAlarmAndACL(t *testing.T) {
	cfg := Config{Admission: AdmissionConfig{Enabled: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1, Hold: 2 * time.Second, ClearAfter: time.Second}}
	f := newFake(t, cfg)
	f.c.OutgoingCallStarted(5, 1)
	if r := f.c.AdmitOutgoing(5); r != RefuseAdmission {
		t.Fatalf("second call in set-up at limit 1: %v", r)
	}
	f.advance(100 * time.Millisecond) // the window closes: one stray refusal
	f.expectAlarms("")
	f.c.AdmitOutgoing(5)
	f.advance(100 * time.Millisecond) // a second window in a row with a refusal
	if len(f.alarms) != 1 || f.alarms[0].Data["direction"] != "outbound" || f.alarms[0].Data["level"] != 1 {
		t.Fatalf("alarms %+v", f.alarms)
	}
	f.expectAlarms("0x16+")
	if acl := f.c.ReleaseACL(); acl != 1 {
		t.Fatalf("ACL %d while refusing the excess, want 1", acl)
	}
	if s := f.c.Snapshot(); s.Level[Outbound] != 0 || s.Admission.Level != 1 {
		t.Fatalf("probe level %d, admission level %d", s.Level[Outbound], s.Admission.Level)
	}
	// The probes' level 2 on top moves the alarm; back to none, the
	// admission's level 1 remains.
	f.c.Probe(Outbound, 12*time.Second)
	f.expectAlarms("0x16+")
	for range 10 {
		f.c.Probe(Outbound, 0)
	}
	if len(f.alarms) != 1 || f.alarms[0].Cleared || f.alarms[0].Data["level"] != 1 {
		t.Fatalf("probe level cleared under the admission's level 1: %+v", f.alarms)
	}
	f.takeAlarms()
	// Nothing refused any more: cleared after ClearAfter once Hold has passed.
	f.c.BackwardFor(5, 1, 0, 0)
	for range 9 {
		f.advance(100 * time.Millisecond)
	}
	f.expectAlarms("") // 1 s since the raise: held
	for range 11 {
		f.advance(100 * time.Millisecond)
	}
	f.expectAlarms("0x16-")
	if acl := f.c.ReleaseACL(); acl != 0 {
		t.Fatalf("ACL %d after clearing", acl)
	}
}

// TestAdmissionSwitchedOnAndOff: a reload that switches the admission off
// stops its refusals; switched on again its limits start afresh and the
// calls still in set-up stay counted, the one from before the reloads as
// well as one started while off, each counted out once. The edge may read it
// meanwhile (go test -race).
func TestAdmissionSwitchedOnAndOff(t *testing.T) {
	cfg := Config{Admission: AdmissionConfig{Enabled: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 2}}
	f := newFake(t, cfg)
	f.c.OutgoingCallStarted(5, 1)
	if r := admitEdge(f.c, 5); r != RefuseAdmission {
		t.Fatalf("at the limit: %v", r)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			admitEdge(f.c, 5)
		}
	}()
	off := cfg
	off.Admission.Enabled = false
	if err := f.c.Reconfigure(off); err != nil {
		t.Fatal(err)
	}
	if r := admitEdge(f.c, 5); r != Admit {
		t.Fatalf("switched off, refused: %v", r)
	}
	f.c.OutgoingCallStarted(5, 2) // while off: counted
	if err := f.c.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	<-done
	if s := f.c.Snapshot().Admission; !s.Enabled || s.InSetup != 2 || s.Destinations[5].InSetup != 2 {
		t.Fatalf("after off and on: %+v, want both calls in set-up", s)
	}
	if r := admitEdge(f.c, 5); r != RefuseAdmission {
		t.Fatalf("a fresh limit of 1 with two calls in set-up admitted: %v", r)
	}
	f.c.BackwardFor(5, 1, 0, 0)
	f.c.CallEndedFor(5, true, true, 2) // ended in set-up
	if s := f.c.Snapshot().Admission; s.InSetup != 0 || s.Destinations[5].InSetup != 0 {
		t.Fatalf("in set-up %+v, want 0", s)
	}
	if r := admitEdge(f.c, 5); r != Admit {
		t.Fatalf("nothing in set-up, refused: %v", r)
	}
}

// admitEdge is AdmitEdge for a test whose loop takes the request at once.
func admitEdge(c *Controller, dpc mtp.PointCode) Refusal {
	r, q := c.AdmitEdge(dpc)
	if q != nil {
		q.Dequeued()
	}
	return r
}

// TestAdmitEdgeCountsOnlyItsDestinationsQueue: the edge counts against a
// destination's limit the outseizes to it that still wait in the stack's
// queue, and against the overall limit all of them; requests for another
// destination, however many, do not refuse calls to this one below the
// overall limit, and a request that leaves the queue frees its place.
func TestAdmitEdgeCountsOnlyItsDestinationsQueue(t *testing.T) {
	f := newFake(t, Config{Admission: AdmissionConfig{Enabled: true, InitialLimit: 4, MinLimit: 4, MaxLimit: 4}})
	f.c.adm.all.Load().gate.limit.Store(100)
	for _, pc := range []mtp.PointCode{5, 6} {
		if r := f.c.AdmitOutgoing(pc); r != Admit { // the loop meets both destinations
			t.Fatalf("first call to %d refused: %v", pc, r)
		}
	}
	var waiting []Queued
	for i := range 4 {
		r, q := f.c.AdmitEdge(5)
		if r != Admit || q == nil {
			t.Fatalf("queued request %d to 5: %v, %v", i, r, q)
		}
		waiting = append(waiting, q)
	}
	if r, _ := f.c.AdmitEdge(5); r != RefuseAdmission {
		t.Fatalf("a fifth request behind four queued to 5 (limit 4): %v", r)
	}
	if r, q := f.c.AdmitEdge(6); r != Admit || q == nil {
		t.Fatalf("destination 6 refused behind 5's queue: %v", r)
	} else {
		q.Dequeued()
	}
	waiting[0].Dequeued()
	if r, q := f.c.AdmitEdge(5); r != Admit || q == nil {
		t.Fatalf("a request left the queue, yet 5 refused: %v", r)
	}
	if got := f.c.adm.all.Load().queued.Load(); got != 4 {
		t.Fatalf("overall queued %d, want 4", got)
	}
}
