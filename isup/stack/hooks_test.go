package stack

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

func TestObservationsForCongestionControl(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	var obs []Observation
	h.c.hooks.Observe = func(o Observation) { obs = append(obs, o) }
	kinds := func() map[ObservationKind]int {
		m := map[ObservationKind]int{}
		for _, o := range obs {
			m[o.Kind]++
		}
		obs = nil
		return m
	}
	// An outgoing call that loses a dual seizure and is repeated: started once.
	h.outseize(Outseize{HasCIC: true, CIC: 2})
	h.recv(h.iam(2))
	if k := kinds(); k[ObsCallStarted] != 2 {
		t.Fatalf("observations %v (want one start for ours, one for theirs)", k)
	}
	h.takeEvents()
	h.takeSent()
	h.recv(rel(2, isup.CauseNormalClearing))
	got := obs
	if len(got) != 2 || got[0].Kind != ObsRELReceived || got[1].Kind != ObsCallEnded || got[1].Outgoing {
		t.Fatalf("incoming call end: %+v", got)
	}
	obs = nil
	h.c.request(Maintenance{Op: OpQuery, DPC: peerPC, CIC: 1})
	h.recv(&isup.CircuitQueryResponse{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 0}, States: isup.CircuitStateIndicator{0x0c}})
	h.c.request(Maintenance{Op: OpQuery, DPC: peerPC, CIC: 1})
	h.advance(DefaultTimers.T28)
	if k := kinds(); k[ObsQueryAnswered] != 1 || k[ObsQueryUnanswered] != 1 {
		t.Fatalf("query observations %v", k)
	}
}

func TestSendFilterHoldsBackLowPriority(t *testing.T) {
	h := newHarness(t, testConfig(isup.ANSI))
	level := uint8(2)
	h.c.hooks.SendFilter = func(dpc mtp.PointCode, p uint8) bool { return p >= level }
	id := h.incoming(4)
	h.c.request(Alert{Call: id})  // ACM: priority 1, held back at level 2
	h.c.request(Answer{Call: id}) // ANM: priority 2, sent
	h.expectSent("ANM:4")
	if h.c.stats.HeldBack != 1 {
		t.Fatalf("held back %d", h.c.stats.HeldBack)
	}
	level = 0
	h.c.request(Release{Call: id})
	h.expectSent("REL:4")
}

// TestObservedSetupTime: an outgoing call's set-up time, from its outseize
// queued to its first backward message, and its wait in the outbound queue
// come with that backward message's observation, once; a call that ends in
// set-up says so with its end, one that got a backward message does not.
func TestObservedSetupTime(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	var obs []Observation
	h.c.hooks.Observe = func(o Observation) {
		if o.Kind == ObsBackward || o.Kind == ObsCallEnded {
			obs = append(obs, o)
		}
	}
	acm := func(cic uint16) *isup.AddressComplete {
		return &isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}, BackwardCall: isup.NewBackwardCallIndicators(2, 1, 1, true)}
	}
	h.c.reqWait = 7 * time.Millisecond // as the loop sets it for a request that waited
	answered, cic := h.outseize(Outseize{})
	h.c.reqWait = 0
	h.advance(30 * time.Millisecond)
	h.recv(acm(cic))
	h.recv(simple(isup.ANM, cic))
	if len(obs) != 1 || obs[0].Call != answered || obs[0].Setup != 37*time.Millisecond || obs[0].Waited != 7*time.Millisecond {
		t.Fatalf("first backward message: %+v, want one with set-up 37 ms, 7 ms of it queued", obs)
	}
	obs = nil
	h.takeEvents()
	h.c.request(Release{Call: answered})
	if len(obs) != 1 || obs[0].InSetup || !obs[0].Outgoing {
		t.Fatalf("end of an answered call: %+v", obs)
	}
	obs = nil
	h.takeEvents()
	abandoned, cic2 := h.outseize(Outseize{})
	h.advance(5 * time.Millisecond)
	h.recv(rel(cic2, isup.CauseNormalClearing))
	if len(obs) != 1 || obs[0].Call != abandoned || obs[0].Kind != ObsCallEnded || !obs[0].InSetup || obs[0].Setup != 5*time.Millisecond {
		t.Fatalf("end in set-up: %+v", obs)
	}
}
