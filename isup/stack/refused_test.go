package stack

import (
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// Every incoming IAM not offered to a host is reported with its CIC, the
// cause of the REL (0: discarded, no REL) and why.
func TestRefusedIAMsAreReportedWithTheirReason(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	var got []RefusedIAM
	h.c.iamRefused = func(r RefusedIAM) { got = append(got, r) }
	last := func() RefusedIAM {
		t.Helper()
		if len(got) == 0 {
			t.Fatal("no refusal reported")
		}
		return got[len(got)-1]
	}

	// A circuit we blocked: the IAM is discarded and BLO sent again (Q.764 §2.8.2.3).
	p := h.c.peerByPC[peerPC]
	ci, ok := h.c.circuitAt(p, 2)
	if !ok {
		t.Fatal("no CIC 2")
	}
	h.c.circuits[ci].block |= blkLocalMaint
	h.recv(h.iam(2))
	h.expectSent("BLO:2")
	if r := last(); r.OPC != peerPC || r.CIC != 2 || r.Cause != 0 || r.Reason != "circuit blocked locally: IAM discarded, blocking sent again" {
		t.Errorf("blocked circuit: %+v", r)
	}

	// Congestion control says no: REL 42.
	h.c.hooks.AdmitIncoming = func(mtp.PointCode) bool { return false }
	h.recv(h.iam(3))
	h.expectSent("REL:3")
	if r := last(); r.CIC != 3 || r.Cause != isup.CauseSwitchingCongestion || r.Reason != "inbound congestion or Code Yellow" {
		t.Errorf("congestion: %+v", r)
	}
	h.c.hooks.AdmitIncoming = nil

	// Stopping: REL 41.
	h.c.draining = true
	h.recv(h.iam(4))
	h.expectSent("REL:4")
	if r := last(); r.CIC != 4 || r.Cause != isup.CauseTemporaryFailure || r.Reason != "gateway stopping (draining)" {
		t.Errorf("draining: %+v", r)
	}
	if len(got) != 3 {
		t.Errorf("%d refusals reported, want 3: %+v", len(got), got)
	}
	if evs := h.takeEvents(); len(evs) != 0 {
		for _, e := range evs {
			if _, ok := e.(Incoming); ok {
				t.Errorf("a refused IAM was offered: %+v", e)
			}
		}
	}
}
