package stack

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/isupgw/isupgw/isup"
)

// TestStandbyThenTakeover: the instance made standby forgets its calls (the
// host hears cause 41) and sends nothing: the circuits are the new active's.
// Taking over later, it reads the blocking the pair shares from the state
// file (a block the other instance set, CIC 7; one only it held, CIC 9, is
// gone), resets the group with GRS, and after the GRA re-announces the block
// (Q.764 §2.9.3.2), so it is in force at the far end.
func TestStandbyThenTakeover(t *testing.T) {
	cfg := testConfig(isup.ITU)
	cfg.StateFile = filepath.Join(t.TempDir(), "blocks.json")
	h := newHarness(t, cfg)
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 9})
	h.takeEvents()
	h.takeSent()
	_, cic := h.outseize(Outseize{HasCIC: true, CIC: 2})
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: cic}})
	h.takeEvents()
	h.takeSent()

	h.c.standby("alternate ASP active")
	h.expectEvents("released:41")
	h.expectSent("")
	if len(h.c.calls) != 0 {
		t.Fatalf("%d calls left after standby", len(h.c.calls))
	}

	// The other instance, active meanwhile, blocked CIC 7 and unblocked 9.
	if err := os.WriteFile(cfg.StateFile, []byte(`{"version":1,"locally_blocked":[{"dpc":2,"cic":7}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h.c.takeover()
	sent := h.expectSent("GRS:1")
	if r := sent[0].(*isup.GroupReset).RangeAndStatus.Range; r != 30 {
		t.Fatalf("GRS range %d, want 30 (CICs 1-31)", r)
	}
	if h.c.stats.Takeovers != 1 {
		t.Fatalf("Takeovers %d", h.c.stats.Takeovers)
	}
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(30, true)})
	h.expectSent("BLO:7")
	blk := func(c uint16) uint8 { return h.c.circuits[h.c.peers[0].cicIndex[c]].block }
	if blk(7)&blkLocalMaint == 0 || blk(9)&blkLocalMaint != 0 {
		t.Fatalf("blocking after takeover: CIC 7 %b, CIC 9 %b", blk(7), blk(9))
	}
}
