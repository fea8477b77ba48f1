package stack

import (
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// Issue 14 (a dead or hung peer): when MTP pauses a destination, its calls
// that are not yet answered end at once (the host hears cause 41, not T7 20 s
// later) and an answered call stays; the RELs sent while paused are lost, so
// on resume each is repeated at once and the RLCs bring every circuit back to
// idle, with no wait for T1.
func TestPauseReleasesUnansweredAndResumeRepeatsREL(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	_, setup := h.outseize(Outseize{HasCIC: true, CIC: 2})
	ringing, rcic := h.outseize(Outseize{HasCIC: true, CIC: 3})
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: rcic}})
	h.takeEvents()
	answered, acic := h.outseize(Outseize{HasCIC: true, CIC: 4})
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: acic}})
	h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: acic}})
	h.takeEvents()
	incoming := h.incoming(5)
	h.takeEvents()
	h.takeSent()

	h.c.mtpEvent(mtp.Pause{PC: peerPC})
	h.expectEvents("alarm:1 released:41 released:41 released:41")
	h.expectSent("REL:2 REL:3 REL:5") // into the paused MTP: lost
	if h.c.stats.PausedReleases != 3 {
		t.Fatalf("PausedReleases %d, want 3", h.c.stats.PausedReleases)
	}
	for _, id := range []CallID{ringing, incoming} {
		if _, ok := h.c.calls[id]; ok {
			t.Fatalf("call %d still in the call table", id)
		}
	}
	if _, ok := h.c.calls[answered]; !ok {
		t.Fatal("the answered call was released by the pause")
	}

	h.c.mtpEvent(mtp.Resume{PC: peerPC})
	h.expectEvents("alarm:1")
	h.expectSent("REL:2 REL:3 REL:5")
	if h.c.stats.ResumeRELs != 3 {
		t.Fatalf("ResumeRELs %d, want 3", h.c.stats.ResumeRELs)
	}
	for _, cic := range []uint16{setup, rcic, 5} {
		h.recv(rlc(cic))
	}
	for _, cic := range []uint16{setup, rcic, 5} {
		if st := h.c.circuits[h.c.peers[0].cicIndex[cic]].state; st != csIdle {
			t.Fatalf("CIC %d in state %v after its RLC", cic, st)
		}
	}
	h.c.request(Release{Call: answered})
	h.takeEvents()
	h.expectSent("REL:4")
	h.recv(rlc(acic))
	h.idleAndQuiet()
}

// Issue 20, seen against osmo-stp: after a takeover the STP sends DAVA for
// the new active's point code (M3UA stream 0) and then forwards its GRS
// (another stream); handled concurrently, the GRS can reach the stack before
// the resume, and the GRA goes into the still-paused MTP and is lost, so the
// far end waits for T22 with its circuits unusable. The GRA answered while
// paused is sent again at resume, once; a later resume sends nothing more.
func TestGRAAnsweredWhilePausedIsRepeatedAtResume(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.c.mtpEvent(mtp.Pause{PC: peerPC})
	h.takeEvents()
	h.takeSent()

	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 4}})
	first := h.expectSent("GRA:1")[0].(*isup.GroupReset)

	h.c.mtpEvent(mtp.Resume{PC: peerPC})
	h.takeEvents()
	again := h.expectSent("GRA:1")[0].(*isup.GroupReset)
	if again.RangeAndStatus.Range != first.RangeAndStatus.Range {
		t.Fatalf("repeated GRA range %d, want %d", again.RangeAndStatus.Range, first.RangeAndStatus.Range)
	}
	if h.c.stats.ResumeGRAs != 1 {
		t.Fatalf("ResumeGRAs %d, want 1", h.c.stats.ResumeGRAs)
	}

	// Answered while available: not repeated at the next resume.
	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 4}})
	h.expectSent("GRA:1")
	h.c.mtpEvent(mtp.Pause{PC: peerPC})
	h.c.mtpEvent(mtp.Resume{PC: peerPC})
	h.takeEvents()
	h.expectSent("")
	if h.c.stats.ResumeGRAs != 1 {
		t.Fatalf("ResumeGRAs %d after a second resume, want still 1", h.c.stats.ResumeGRAs)
	}
}
