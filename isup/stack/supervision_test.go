package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

func TestGlareWeControl(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	_, cic := h.outseize(Outseize{}) // odd: ours (lower point code controls odd CICs)
	h.takeSent()
	h.recv(h.iam(cic))
	h.expectEvents("") // their IAM is discarded
	h.expectSent("")
	if h.c.stats.Glare != 1 {
		t.Fatalf("glare count %d", h.c.stats.Glare)
	}
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.expectEvents("progress:ACM")
}

func TestGlareWeYieldAndRepeatOnce(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id, _ := h.outseize(Outseize{HasCIC: true, CIC: 2}) // even: theirs
	h.expectSent("IAM:2")
	h.recv(h.iam(2))
	// Our call moves to the first idle CIC we control; theirs is offered on 2.
	h.expectSent("IAM:1")
	ev := h.expectEvents("incoming")[0].(Incoming)
	if ev.CIC != 2 {
		t.Fatalf("incoming on CIC %d", ev.CIC)
	}
	if h.c.calls[id] == nil || h.c.calls[id].circ != h.c.peers[0].cicIndex[1] {
		t.Fatal("our call was not moved to CIC 1")
	}
	// A second dual seizure on a CIC we do not control ends the call: one repeat only.
	h2 := newHarness(t, Config{OPC: 3, NI: 2, Groups: []Group{{DPC: peerPC, CICs: []CICRange{{First: 1, Last: 4}}}}}) // higher PC: we control even
	h2.c.cfg.OPC = 3
	id2, cic := h2.outseize(Outseize{HasCIC: true, CIC: 1})
	h2.takeSent()
	h2.c.receive(mtp.Label{OPC: peerPC, DPC: 3, SI: 5}, mustMarshal(t, h2.iam(cic)))
	moved := h2.takeSent()
	if len(moved) != 1 || moved[0].CircuitID() == 1 {
		t.Fatalf("repeat attempt: %s", types(moved))
	}
	h2.takeEvents()
	h2.c.receive(mtp.Label{OPC: peerPC, DPC: 3, SI: 5}, mustMarshal(t, h2.iam(moved[0].CircuitID())))
	if moved[0].CircuitID()%2 == 0 {
		// We controlled the new CIC: no second glare resolution against us.
		h2.expectEvents("")
		return
	}
	evs := h2.takeEvents()
	if len(evs) != 2 || evs[0].(Released).Call != id2 || evs[0].(Released).Cause != isup.CauseNoCircuitAvailable {
		t.Fatalf("second glare: %q", eventNames(evs))
	}
}

func mustMarshal(t *testing.T, m isup.Message) []byte {
	b, err := isup.Marshal(m, isup.ITU)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLocalBlockingWithTimersAndAlarm(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 1})
	h.expectEvents("result:ok")
	h.expectSent("BLO:1")
	h.advance(DefaultTimers.T12)
	h.expectSent("BLO:1")
	h.advance(DefaultTimers.T13 - DefaultTimers.T12)
	sent := h.takeSent()
	if len(sent) < 2 || sent[len(sent)-1].MessageType() != isup.BLO {
		t.Fatalf("T13: %s", types(sent))
	}
	h.expectEvents("alarm:4")
	h.recv(simple(isup.BLA, 1))
	if h.c.pendingTimers() != 0 {
		t.Fatal("BLA did not stop T12/T13")
	}
	if _, cic := h.outseize(Outseize{}); cic == 1 {
		t.Fatal("hunted a locally blocked circuit")
	}
	h.c.request(Maintenance{Op: OpUnblock, DPC: peerPC, CIC: 1})
	h.takeEvents()
	h.expectSent("IAM:3 UBL:1")
	h.recv(simple(isup.UBA, 1))
	if h.c.circuits[0].block != 0 || h.c.circuits[0].pend != 0 {
		t.Fatalf("CIC 1 after UBA: %s", h.c.circuits[0].describe())
	}
}

func TestRemoteBlockingDuringCalls(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	// An answered call survives a BLO; new calls avoid the circuit.
	id := h.incoming(1)
	h.c.request(Answer{Call: id})
	h.takeEvents()
	h.takeSent()
	h.recv(simple(isup.BLO, 1))
	h.expectSent("BLA:1")
	if h.c.calls[id] == nil {
		t.Fatal("BLO ended an answered call")
	}
	h.recv(rel(1, isup.CauseNormalClearing))
	h.takeEvents()
	h.takeSent()
	if _, cic := h.outseize(Outseize{}); cic == 1 {
		t.Fatal("hunted a remotely blocked circuit")
	}
	h.takeSent()
	// A BLO under an IAM with no backward message: REL there, repeat elsewhere.
	h.recv(simple(isup.BLO, 3))
	h.expectSent("BLA:3 IAM:5 REL:3")
	h.expectEvents("")
	h.recv(simple(isup.UBL, 1))
	h.expectSent("UBA:1")
	h.recv(rlc(3))
	// An IAM on a remotely blocked circuit unblocks it (Q.764 §2.8.2.3).
	h.recv(h.iam(3))
	h.expectEvents("incoming")
	if h.c.circuits[h.c.peers[0].cicIndex[3]].block != 0 {
		t.Fatal("IAM did not clear the remote blocking")
	}
}

func TestGroupBlockingWithStatusBits(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	// Far end blocks CICs 10, 12 and 13 of 10..17 (maintenance).
	cgb := &isup.GroupSupervision{Kind: isup.CGB, Circuit: isup.Circuit{CIC: 10}, RangeAndStatus: isup.RangeAndStatus{Range: 7, Status: []byte{0b00001101}}}
	h.recv(cgb)
	ack := h.expectSent("CGBA:10")[0].(*isup.GroupSupervision)
	if ack.RangeAndStatus.Status[0] != 0b00001101 || ack.RangeAndStatus.Range != 7 {
		t.Fatalf("CGBA status %08b", ack.RangeAndStatus.Status[0])
	}
	h.expectEvents("alarm:6")
	for cic, want := range map[uint16]bool{10: true, 11: false, 12: true, 13: true, 14: false} {
		ci := h.c.peers[0].cicIndex[cic]
		if got := h.c.circuits[ci].block&blkRemoteMaint != 0; got != want {
			t.Errorf("CIC %d remotely blocked = %v", cic, got)
		}
	}
	// Hardware blocking ends a call on the circuit without REL.
	id := h.incoming(20)
	hw := &isup.GroupSupervision{Kind: isup.CGB, Type: isup.HardwareFailureOriented, Circuit: isup.Circuit{CIC: 20}, RangeAndStatus: isup.RangeAndStatus{Range: 1, Status: []byte{0x01}}}
	h.recv(hw)
	h.expectSent("CGBA:20")
	if ev := h.expectEvents("released:41 alarm:6"); ev[0].(Released).Call != id {
		t.Fatal("wrong call released")
	}
	cgu := &isup.GroupSupervision{Kind: isup.CGU, Circuit: isup.Circuit{CIC: 10}, RangeAndStatus: isup.RangeAndStatus{Range: 7, Status: []byte{0b00000100}}}
	h.recv(cgu)
	h.expectSent("CGUA:10")
	if h.c.circuits[h.c.peers[0].cicIndex[12]].block != 0 || h.c.circuits[h.c.peers[0].cicIndex[10]].block == 0 {
		t.Fatal("CGU acted on the wrong circuits")
	}
	// A range of 0 is not allowed in CGB.
	h.recv(&isup.GroupSupervision{Kind: isup.CGB, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 0, Status: []byte{1}}})
	h.expectSent("")
}

func TestLocalGroupBlockingT18T19(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 1, Range: 9, Hardware: true})
	h.takeEvents()
	m := h.expectSent("CGB:1")[0].(*isup.GroupSupervision)
	if m.Type != isup.HardwareFailureOriented || m.RangeAndStatus.Ones() != 10 {
		t.Fatalf("CGB %+v", m)
	}
	h.advance(DefaultTimers.T18)
	h.expectSent("CGB:1")
	h.advance(DefaultTimers.T19 - DefaultTimers.T18)
	h.takeSent()
	h.expectEvents("alarm:4")
	h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Type: isup.HardwareFailureOriented, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: m.RangeAndStatus})
	if h.c.pendingTimers() != 0 {
		t.Fatal("CGBA did not stop T18/T19")
	}
}

func TestGroupResetDuringCalls(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	idIn := h.incoming(2)
	idOut, cic := h.outseize(Outseize{})
	// After a backward message the reset releases the call (before one, it is
	// repeated elsewhere: TestResetDuringSetupRepeatsAttempt).
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.takeSent()
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 4})
	h.takeEvents()
	h.takeSent()
	h.takeEvents()
	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 4}})
	evs := h.expectEvents("released:41 released:41")
	if ids := map[CallID]bool{evs[0].(Released).Call: true, evs[1].(Released).Call: true}; !ids[idIn] || !ids[idOut] {
		t.Fatal("GRS did not release both calls")
	}
	gra := h.expectSent("GRA:1")[0].(*isup.GroupReset)
	if gra.RangeAndStatus.Status[0] != 0b01000 { // CIC 4 is locally blocked: bit 3
		t.Fatalf("GRA status %05b", gra.RangeAndStatus.Status[0])
	}
	if len(h.c.calls) != 0 || cic != 1 {
		t.Fatalf("calls left %d", len(h.c.calls))
	}
}

func TestStartupResetAndReannouncedBlocking(t *testing.T) {
	cfg := testConfig(isup.ITU)
	cfg.Groups[0].CICs = []CICRange{{First: 1, Last: 40}, {First: 100, Last: 101}}
	cfg.ResetOnStart = true
	h := newHarness(t, cfg)
	h.c.circuits[h.c.peers[0].cicIndex[5]].block |= blkLocalMaint
	h.c.start()
	// Runs of consecutive CICs, at most 32 each.
	sent := h.expectSent("GRS:1 GRS:33 GRS:100")
	if r := sent[0].(*isup.GroupReset).RangeAndStatus.Range; r != 31 {
		t.Fatalf("first GRS range %d", r)
	}
	if _, ok := h.c.hunt(0); ok {
		t.Fatal("circuits in a pending reset are huntable")
	}
	h.advance(DefaultTimers.T22)
	h.expectSent("GRS:1 GRS:33 GRS:100")
	gra := &isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(31, true)}
	gra.RangeAndStatus.SetBit(1, true) // they have CIC 2 locally blocked
	h.recv(gra)
	h.expectSent("BLO:5") // ours is re-announced
	if h.c.circuits[h.c.peers[0].cicIndex[2]].block&blkRemoteMaint == 0 {
		t.Fatal("GRA status bit did not block CIC 2 remotely")
	}
	h.advance(DefaultTimers.T23)
	h.takeSent()
	if evs := h.takeEvents(); !strings.Contains(eventNames(evs), "alarm:3") {
		t.Fatalf("no T23 alarm for the unanswered resets: %q", eventNames(evs))
	}
}

func TestCircuitQuery(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.incoming(2)
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 3})
	h.recv(simple(isup.BLA, 3)) // until then CIC 3 is transient
	h.takeEvents()
	h.takeSent()
	h.recv(&isup.CircuitQuery{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 2}})
	cqr := h.expectSent("CQR:1")[0].(*isup.CircuitQueryResponse)
	want := []byte{isup.NewCircuitState(0, isup.CallStateIdle, 0), isup.NewCircuitState(0, isup.CallStateIncomingBusy, 0), isup.NewCircuitState(isup.BlockingLocal, isup.CallStateIdle, 0)}
	if string(cqr.States) != string(want) {
		t.Fatalf("CQR states % X, want % X", []byte(cqr.States), want)
	}
	h.c.request(Maintenance{Op: OpQuery, DPC: peerPC, CIC: 5, Range: 1})
	h.takeEvents()
	h.expectSent("CQM:5")
	h.recv(&isup.CircuitQueryResponse{Circuit: isup.Circuit{CIC: 5}, RangeAndStatus: isup.RangeAndStatus{Range: 1}, States: isup.CircuitStateIndicator{0x0c, 0x0c}})
	if a := h.expectEvents("alarm:7")[0].(Alarm); a.Text != "5:0c 6:0c" {
		t.Fatalf("query result %q", a.Text)
	}
	h.c.request(Maintenance{Op: OpQuery, DPC: peerPC, CIC: 5})
	h.takeEvents()
	h.advance(DefaultTimers.T28)
	h.expectEvents("alarm:7")
}

func TestUnequippedCircuits(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.recv(h.iam(200)) // not ours
	h.expectSent("UCIC:200")
	h.recv(simple(isup.UCIC, 300)) // never answered with UCIC
	h.expectSent("")
	id, cic := h.outseize(Outseize{})
	h.takeSent()
	h.recv(simple(isup.UCIC, cic))
	h.expectSent("IAM:3") // repeated elsewhere
	h.expectEvents("alarm:5")
	if h.c.calls[id] == nil || h.c.circuits[h.c.peers[0].cicIndex[cic]].block&blkUnequipped == 0 {
		t.Fatal("UCIC: call not moved or circuit not taken out of service")
	}
}

func TestCompatibilityProcedures(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	// Unknown message type: CFN with cause 97 and the type as diagnostic.
	h.c.receive(mtp.Label{OPC: peerPC, DPC: ownPC, SI: 5}, []byte{1, 0, 0x7f, 0x01, 0x00})
	cfn := h.expectSent("CFN:1")[0].(*isup.Confusion)
	if cfn.Cause.Value != isup.CauseMessageTypeNonExistent || cfn.Cause.Diagnostics[0] != 0x7f {
		t.Fatalf("CFN %+v", cfn.Cause)
	}
	// Unknown message whose compatibility information says release call: REL 97.
	id := h.incoming(2)
	mci := isup.MessageCompatibilityInformation{0x82} // release call, last octet
	h.c.receive(mtp.Label{OPC: peerPC, DPC: ownPC, SI: 5}, []byte{2, 0, 0x7e, 0x01, byte(isup.ParamMessageCompatibility), 1, mci[0], 0})
	if ev := h.expectEvents("released:97"); ev[0].(Released).Call != id {
		t.Fatal("wrong call")
	}
	h.expectSent("REL:2")
	h.recv(rlc(2))

	// Unknown parameter, no instructions: discarded, CFN 99, the call goes on
	// (the exchange in isup.cap answers its IAM this way).
	iam := h.iam(3)
	iam.Optional = isup.Optional{{Code: 0xF4, Value: []byte{1, 2}}}
	h.recv(iam)
	if c := h.expectSent("CFN:3")[0].(*isup.Confusion); c.Cause.Value != isup.CauseParameterNonExistent || c.Cause.Diagnostics[0] != 0xF4 {
		t.Fatalf("CFN %+v", c.Cause)
	}
	in := h.expectEvents("incoming")[0].(Incoming)
	if in.IAM.Optional.Has(0xF4) {
		t.Fatal("unrecognised parameter passed to the host")
	}
	// With instructions "release call": the IAM is refused with REL 99.
	var pci isup.ParameterCompatibilityInformation
	pci = pci.Append(0xF4, 0x02, 0, 0)
	iam = h.iam(5)
	iam.Optional = isup.Optional{{Code: 0xF4, Value: []byte{1}}}
	_ = iam.Optional.Set(pci)
	h.recv(iam)
	if r := h.expectSent("REL:5")[0].(*isup.Release); r.Cause.Value != isup.CauseParameterNonExistent {
		t.Fatalf("REL cause %d", r.Cause.Value)
	}
	h.expectEvents("")
	// With "discard parameter", no notification: silently dropped.
	pci = isup.ParameterCompatibilityInformation(nil).Append(0xF4, 0x10, 0, 0)
	iam = h.iam(7)
	iam.Optional = isup.Optional{{Code: 0xF4, Value: []byte{1}}}
	_ = iam.Optional.Set(pci)
	h.recv(iam)
	h.expectSent("")
	h.expectEvents("incoming")
}

func TestMTPPauseResumeAndUserPart(t *testing.T) {
	cfg := testConfig(isup.ITU)
	cfg.ResetOnResume = true
	cfg.Groups[0].CICs = []CICRange{{First: 1, Last: 4}}
	h := newHarness(t, cfg)
	h.c.mtpEvent(mtp.Pause{PC: peerPC})
	h.expectEvents("alarm:1")
	h.c.request(Outseize{DPC: peerPC, Called: h.called()})
	if ev := h.takeEvents(); ev[0].(Result).Status != StatusDestinationUnavailable {
		t.Fatalf("%q", eventNames(ev))
	}
	h.c.mtpEvent(mtp.Resume{PC: peerPC})
	if a := h.takeEvents()[0].(Alarm); !a.Cleared {
		t.Fatal("resume did not clear the alarm")
	}
	h.expectSent("GRS:1")
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(3, true)})

	h.c.mtpEvent(mtp.UserPartUnavailable{PC: peerPC, User: mtp.SIISUP, Cause: mtp.UPUInaccessibleRemote})
	h.expectEvents("alarm:1")
	h.advance(DefaultTimers.T4)
	h.expectSent("UPT:1")
	h.advance(DefaultTimers.T4)
	h.expectSent("UPT:1")
	h.recv(&isup.Generic{Kind: isup.UPA, Circuit: isup.Circuit{CIC: 1}, Optional: isup.Optional{}})
	if a := h.takeEvents()[0].(Alarm); !a.Cleared {
		t.Fatal("UPA did not clear the alarm")
	}
	h.idleAndQuiet()
	h.outseize(Outseize{})
}

func TestLocalBlockingSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(isup.ITU)
	cfg.StateFile = filepath.Join(dir, "state.json")
	s, err := New(cfg, func(*mtp.Message) error { return nil }, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	s.core.out = func(lbl mtp.Label, b []byte) {
		m, _ := isup.Decode(b, isup.ITU)
		sent = append(sent, types([]isup.Message{m}))
	}
	s.core.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 7})
	s.core.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 9, Hardware: true})
	b, err := os.ReadFile(cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cic": 7`) || !strings.Contains(string(b), `"hardware": true`) {
		t.Fatalf("state file:\n%s", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
	// A new stack from the same file starts blocked and says so to the far end.
	s2, err := New(cfg, func(*mtp.Message) error { return nil }, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	sent = nil
	s2.core.out = func(lbl mtp.Label, b []byte) {
		m, _ := isup.Decode(b, isup.ITU)
		sent = append(sent, types([]isup.Message{m}))
	}
	s2.core.start()
	// Each blocking in its own kind: BLO for 7, a hardware CGB for 9.
	if strings.Join(sent, " ") != "BLO:7 CGB:9" {
		t.Fatalf("after restart sent %v", sent)
	}
	if op, ok := s2.core.groupOps[groupKey{s2.core.peers[0].cicIndex[9], isup.CGB}]; !ok || op.msg.(*isup.GroupSupervision).Type != isup.HardwareFailureOriented {
		t.Fatal("CIC 9 not announced with a hardware CGB awaiting its CGBA")
	}
	for _, cic := range []uint16{7, 9} {
		if s2.core.circuits[s2.core.peers[0].cicIndex[cic]].usable() {
			t.Errorf("CIC %d unblocked after restart", cic)
		}
	}
	// A broken state file is a clear error.
	if err := os.WriteFile(cfg.StateFile, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, func(*mtp.Message) error { return nil }, func(Event) {}); err == nil || !strings.Contains(err.Error(), "state file") {
		t.Fatalf("broken state file: %v", err)
	}
}

func TestAwaitResumeDefersTheStartupReset(t *testing.T) {
	cfg := testConfig(isup.ITU)
	cfg.Groups[0].CICs = []CICRange{{First: 1, Last: 2}}
	cfg.ResetOnStart, cfg.AwaitResume = true, true
	h := newHarness(t, cfg)
	h.c.start()
	h.expectSent("")
	h.c.request(Outseize{DPC: peerPC, Called: h.called()})
	if ev := h.takeEvents(); ev[0].(Result).Status != StatusDestinationUnavailable {
		t.Fatalf("%q", eventNames(ev))
	}
	h.c.mtpEvent(mtp.Resume{PC: peerPC})
	h.takeEvents()
	h.expectSent("GRS:1")
	h.c.mtpEvent(mtp.Pause{PC: peerPC})
	h.c.mtpEvent(mtp.Resume{PC: peerPC})
	h.expectSent("") // the start-up reset is done; ResetOnResume is off
}

func TestGlareRules(t *testing.T) {
	cases := []struct {
		rule      Glare
		own, peer mtp.PointCode
		even, odd bool // do we control an even / an odd CIC
	}{
		{GlareITU, 2, 1, true, false}, // higher point code: even CICs
		{GlareITU, 1, 2, false, true}, // lower: odd
		{GlareOdd, 2, 1, false, true},
		{GlareEven, 1, 2, true, false},
		{GlareAll, 1, 2, true, true},
		{GlareNone, 2, 1, false, false},
	}
	for _, c := range cases {
		g := Group{DPC: c.peer, Glare: c.rule, Variant: isup.ANSI}
		if weControl(g, c.own, 10) != c.even || weControl(g, c.own, 11) != c.odd {
			t.Errorf("rule %d own %d peer %d: even %v odd %v, want %v %v", c.rule, c.own, c.peer,
				weControl(g, c.own, 10), weControl(g, c.own, 11), c.even, c.odd)
		}
	}
}

// Issue 13 item 9: a CCR after a failed continuity check stops T27 (Q.764
// Table A.1), so no reset follows a re-check that did come.
func TestT27StoppedByCCR(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	iam := h.iam(4)
	iam.NatureOfConnection = isup.NewNatureOfConnection(0, 1, false) // continuity check on this circuit
	h.recv(iam)
	h.expectEvents("")
	h.recv(&isup.Continuity{Circuit: isup.Circuit{CIC: 4}, Indicators: 0}) // failed
	h.expectEvents("released:41")
	ci := h.c.peers[0].cicIndex[4]
	if !h.c.timerRunning(ci, tT27) {
		t.Fatal("T27 not started by the failed COT")
	}
	h.recv(simple(isup.CCR, 4))
	h.expectSent("LPA:4")
	if h.c.timerRunning(ci, tT27) {
		t.Fatal("CCR did not stop T27")
	}
	h.advance(DefaultTimers.T27)
	h.expectSent("") // no RSC: the re-check came in time
	h.recv(rel(4, isup.CauseNormalClearing))
	h.expectSent("RLC:4")
	h.idleAndQuiet()
}

// Issue 13 item 12: GRS and GRA with range 0 (Q.763 §3.43 reserves it for
// them) are discarded, counted and not answered; they touch no circuit.
func TestGroupResetRangeZeroDiscarded(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(1)
	before := h.c.stats.Unexpected
	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 0}})
	h.expectSent("")
	h.expectEvents("")
	if h.c.calls[id] == nil {
		t.Fatal("a GRS with range 0 released the call")
	}
	if h.c.stats.Unexpected != before+1 {
		t.Fatalf("GRS range 0 not counted: %d", h.c.stats.Unexpected-before)
	}
	// Our GRS for 5..8 is not completed by a GRA with range 0.
	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 5, Range: 3})
	h.expectEvents("result:ok")
	h.expectSent("GRS:5")
	head := h.c.peers[0].cicIndex[5]
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 5}, RangeAndStatus: isup.NewRangeAndStatus(0, true)})
	if h.c.stats.Unexpected != before+2 || !h.c.timerRunning(head, tT22) || h.c.circuits[head].pend&pendGRS == 0 {
		t.Fatalf("GRA range 0 accepted: %s, unexpected %d", h.c.circuits[head].describe(), h.c.stats.Unexpected-before)
	}
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 5}, RangeAndStatus: isup.NewRangeAndStatus(3, true)})
	h.expectSent("")
	h.c.request(Release{Call: id})
	h.takeEvents()
	h.expectSent("REL:1")
	h.recv(rlc(1))
	h.idleAndQuiet()
}

// Issue 13 item 8: an RSC on a locally blocked circuit is answered with BLO
// then RLC (Q.764 §2.9.3.1 c)), and that BLO runs the blocking procedure: a
// lost one is repeated on T12 and the BLA is expected.
func TestRSCReannouncesBlockingWithT12T13(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 3})
	h.expectEvents("result:ok")
	h.expectSent("BLO:3")
	h.recv(simple(isup.BLA, 3))
	ci := h.c.peers[0].cicIndex[3]
	if h.c.circuits[ci].pend != 0 || h.c.pendingTimers() != 0 {
		t.Fatalf("after BLA: %s", h.c.circuits[ci].describe())
	}
	h.recv(simple(isup.RSC, 3))
	h.expectSent("BLO:3 RLC:3")
	if h.c.circuits[ci].pend&pendBLO == 0 || !h.c.timerRunning(ci, tT12) || !h.c.timerRunning(ci, tT13) {
		t.Fatalf("the BLO after RSC awaits no BLA: %s", h.c.circuits[ci].describe())
	}
	h.advance(DefaultTimers.T12) // that BLO was lost
	h.expectSent("BLO:3")
	h.recv(simple(isup.BLA, 3))
	if h.c.circuits[ci].pend != 0 || h.c.pendingTimers() != 0 || h.c.circuits[ci].block != blkLocalMaint {
		t.Fatalf("after the second BLA: %s, %d timers", h.c.circuits[ci].describe(), h.c.pendingTimers())
	}
	before := h.c.stats.Unexpected
	h.recv(simple(isup.BLA, 3))
	if h.c.stats.Unexpected != before+1 {
		t.Fatal("a BLA with no BLO pending was not counted")
	}
}

// Issue 13 item 7: a CQR reports as transient (Q.763 §3.14 code 0, Q.764
// §2.9.3.2) a circuit with an IAM sent and no backward message, and one with
// a (group) (un)blocking sent and no acknowledgement yet.
func TestCQRReportsTransientStates(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	_, cic := h.outseize(Outseize{HasCIC: true, CIC: 1})
	h.expectSent("IAM:1")
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 2}) // BLA awaited
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 3})
	h.recv(simple(isup.BLA, 3))
	h.c.request(Maintenance{Op: OpUnblock, DPC: peerPC, CIC: 3})         // UBA awaited
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 4, Range: 1}) // CGBA awaited for 4 and 5
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 7, Range: 1}) // acknowledged below
	h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Circuit: isup.Circuit{CIC: 7}, RangeAndStatus: isup.RangeAndStatus{Range: 1, Status: []byte{3}}})
	h.takeEvents()
	h.expectSent("BLO:2 BLO:3 UBL:3 CGB:4 CGB:7")
	query := func() []byte {
		h.recv(&isup.CircuitQuery{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 7}})
		return h.expectSent("CQR:1")[0].(*isup.CircuitQueryResponse).States
	}
	transient := isup.NewCircuitState(0, 0, 0)
	idle, blocked := isup.NewCircuitState(0, isup.CallStateIdle, 0), isup.NewCircuitState(isup.BlockingLocal, isup.CallStateIdle, 0)
	want := []byte{transient, transient, transient, transient, transient, idle, blocked, blocked}
	if got := query(); string(got) != string(want) {
		t.Fatalf("CQR states % X, want % X", got, want)
	}
	// The acknowledgements end the transients.
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.recv(simple(isup.BLA, 2))
	h.recv(simple(isup.UBA, 3))
	h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Circuit: isup.Circuit{CIC: 4}, RangeAndStatus: isup.RangeAndStatus{Range: 1, Status: []byte{3}}})
	h.takeEvents()
	want = []byte{isup.NewCircuitState(0, isup.CallStateOutgoingBusy, 0), blocked, idle, blocked, blocked, idle, blocked, blocked}
	if got := query(); string(got) != string(want) {
		t.Fatalf("CQR states after the acknowledgements % X, want % X", got, want)
	}
}

// Issue 13 item 5: Q.763 §3.43 allows a CGB or CGU at most 32 status bits set.
// A request for more is split into messages of at most 32 circuits, each
// acknowledged on its own; a received one with more is discarded, counted and
// not acted on.
func TestCGBOver32CircuitsSplitAndReceivedDiscarded(t *testing.T) {
	cfg := testConfig(isup.ITU)
	cfg.Groups[0].CICs = []CICRange{{First: 1, Last: 100}}
	h := newHarness(t, cfg)
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 1, Range: 39})
	h.expectEvents("result:ok")
	sent := h.expectSent("CGB:1 CGB:33")
	for i, want := range []struct {
		rng  uint8
		ones int
	}{{31, 32}, {7, 8}} {
		rs := sent[i].(*isup.GroupSupervision).RangeAndStatus
		if rs.Range != want.rng || rs.Ones() != want.ones {
			t.Fatalf("CGB %d: range %d with %d bits, want %d with %d", i, rs.Range, rs.Ones(), want.rng, want.ones)
		}
	}
	for cic := uint16(1); cic <= 40; cic++ {
		if h.c.circuits[h.c.peers[0].cicIndex[cic]].block&blkLocalMaint == 0 {
			t.Fatalf("CIC %d not blocked", cic)
		}
	}
	for i := range sent {
		m := sent[i].(*isup.GroupSupervision)
		h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Circuit: m.Circuit, RangeAndStatus: m.RangeAndStatus})
	}
	if h.c.pendingTimers() != 0 || len(h.c.groupOps) != 0 {
		t.Fatalf("%d timers, %d group operations after both CGBAs", h.c.pendingTimers(), len(h.c.groupOps))
	}
	// The far end blocks 40 circuits in one CGB (range 39, every bit set).
	before := h.c.stats.Unexpected
	rs := isup.NewRangeAndStatus(39, true)
	for i := 0; i <= 39; i++ {
		rs.SetBit(i, true)
	}
	h.recv(&isup.GroupSupervision{Kind: isup.CGB, Circuit: isup.Circuit{CIC: 50}, RangeAndStatus: rs})
	h.recv(&isup.GroupSupervision{Kind: isup.CGU, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: rs})
	h.expectSent("")
	h.expectEvents("")
	if h.c.stats.Unexpected != before+2 {
		t.Fatalf("%d of 2 over-long group messages counted", h.c.stats.Unexpected-before)
	}
	if h.c.circuits[h.c.peers[0].cicIndex[50]].block != 0 {
		t.Fatal("acted on a CGB with 40 status bits set")
	}
}

// Issue 13 item 6: a CGBA or CGUA is checked against its request circuit by
// circuit (Q.764 §2.8.2.3). Circuits not acknowledged stay pending and their
// message is repeated for them alone; circuits acknowledged into a state they
// are not in here are corrected.
func TestGroupAckStatusCheckedAgainstRequest(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	cgba := func(kind isup.MessageType, cic uint16, rng uint8, bits byte) *isup.GroupSupervision {
		return &isup.GroupSupervision{Kind: kind, Circuit: isup.Circuit{CIC: cic}, RangeAndStatus: isup.RangeAndStatus{Range: rng, Status: []byte{bits}}}
	}
	status := func(m isup.Message) byte { return m.(*isup.GroupSupervision).RangeAndStatus.Status[0] }
	head := h.c.peers[0].cicIndex[1]
	before := h.c.stats.Unexpected

	// CGB for 1..4; the CGBA leaves out CIC 3.
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 1, Range: 3})
	h.expectEvents("result:ok")
	h.expectSent("CGB:1")
	h.recv(cgba(isup.CGBA, 1, 3, 0b1011))
	if !h.c.timerRunning(head, tT18) || !h.c.timerRunning(head, tT19) {
		t.Fatal("a CGBA without CIC 3 completed the CGB")
	}
	h.advance(DefaultTimers.T18) // repeated for CIC 3 alone
	if got := status(h.expectSent("CGB:1")[0]); got != 0b0100 {
		t.Fatalf("repeated CGB status %04b, want 0100", got)
	}
	h.recv(cgba(isup.CGBA, 1, 3, 0b0100))
	if h.c.pendingTimers() != 0 || len(h.c.groupOps) != 0 {
		t.Fatal("the CGBA for CIC 3 did not complete the CGB")
	}

	// CGU for 1..4; the CGUA leaves out CIC 1, and T20 repeats it for CIC 1.
	h.c.request(Maintenance{Op: OpUnblock, DPC: peerPC, CIC: 1, Range: 3})
	h.takeEvents()
	h.expectSent("CGU:1")
	h.recv(cgua(1, 3, 0b1110))
	h.advance(DefaultTimers.T20)
	if got := status(h.expectSent("CGU:1")[0]); got != 0b0001 {
		t.Fatalf("repeated CGU status %04b, want 0001", got)
	}
	h.recv(cgua(1, 3, 0b0001))
	if h.c.pendingTimers() != 0 || len(h.c.groupOps) != 0 {
		t.Fatal("the CGUA for CIC 1 did not complete the CGU")
	}

	// A CGBA answering nothing of ours for 20..21, not blocked here: CGU for
	// them. A CGUA answering nothing for 6..7 with 6 blocked here: CGB for 6.
	h.recv(cgba(isup.CGBA, 20, 1, 0b11))
	if got := status(h.expectSent("CGU:20")[0]); got != 0b11 {
		t.Fatalf("correcting CGU status %02b", got)
	}
	h.recv(cgua(20, 1, 0b11))
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 6})
	h.takeEvents()
	h.expectSent("BLO:6")
	h.recv(simple(isup.BLA, 6))
	h.recv(cgua(6, 1, 0b11))
	if got := status(h.expectSent("CGB:6")[0]); got != 0b01 {
		t.Fatalf("correcting CGB status %02b", got)
	}
	h.recv(cgba(isup.CGBA, 6, 1, 0b01))
	// One not matching anything and needing no correction is only counted.
	h.recv(cgba(isup.CGBA, 6, 1, 0b01))
	h.expectSent("")
	if n := h.c.stats.Unexpected - before; n != 5 {
		t.Fatalf("%d mismatched acknowledgements counted, want 5", n)
	}
	if h.c.pendingTimers() != 0 || len(h.c.groupOps) != 0 {
		t.Fatalf("%d timers, %d group operations left", h.c.pendingTimers(), len(h.c.groupOps))
	}
}

func cgua(cic uint16, rng uint8, bits byte) *isup.GroupSupervision {
	return &isup.GroupSupervision{Kind: isup.CGUA, Circuit: isup.Circuit{CIC: cic}, RangeAndStatus: isup.RangeAndStatus{Range: rng, Status: []byte{bits}}}
}

// Settled (issue 13): a BLA or UBA that answers no request of ours is
// counted; Q.764 §2.8.2.3 then corrects the far end's view: UBL for a BLA on
// a circuit not blocked here, BLO for a UBA on one blocked here, each by the
// normal procedure; otherwise it is only discarded.
func TestUnexpectedBLAAndUBACorrectTheFarEnd(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	before := h.c.stats.Unexpected
	h.recv(simple(isup.BLA, 5)) // CIC 5 is not blocked here
	h.expectSent("UBL:5")
	ci5 := h.c.peers[0].cicIndex[5]
	if h.c.circuits[ci5].pend&pendUBL == 0 || !h.c.timerRunning(ci5, tT14) {
		t.Fatalf("the correcting UBL awaits no UBA: %s", h.c.circuits[ci5].describe())
	}
	h.recv(simple(isup.UBA, 5))
	h.recv(simple(isup.UBA, 5)) // not blocked here: discarded
	h.expectSent("")

	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 7})
	h.takeEvents()
	h.expectSent("BLO:7")
	h.recv(simple(isup.BLA, 7))
	h.recv(simple(isup.BLA, 7)) // blocked here: discarded
	h.expectSent("")
	h.recv(simple(isup.UBA, 7)) // blocked here: the far end is told again
	h.expectSent("BLO:7")
	h.recv(simple(isup.BLA, 7))
	if n := h.c.stats.Unexpected - before; n != 4 {
		t.Fatalf("%d unexpected acknowledgements counted, want 4", n)
	}
	if h.c.pendingTimers() != 0 {
		t.Fatalf("%d timers left", h.c.pendingTimers())
	}
}

// Settled (issue 13): Q.764 §2.8.2.3 xiv). An IAM that is not a test call
// removes the far end's blocking, hardware blocking included, and is taken;
// on a circuit blocked here it is discarded and our blocking is announced
// again in its own kind: a hardware CGB for hardware blocking, a BLO (with
// T12/T13) for maintenance blocking.
func TestIAMOnHardwareBlockedCircuits(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.recv(&isup.GroupSupervision{Kind: isup.CGB, Type: isup.HardwareFailureOriented, Circuit: isup.Circuit{CIC: 8}, RangeAndStatus: isup.RangeAndStatus{Range: 1, Status: []byte{0b01}}})
	h.expectSent("CGBA:8")
	h.takeEvents()
	h.recv(h.iam(8))
	h.expectSent("")
	h.expectEvents("incoming")
	if b := h.c.circuits[h.c.peers[0].cicIndex[8]].block; b != 0 {
		t.Fatalf("the IAM left the remote hardware blocking: %04b", b)
	}

	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 10, Hardware: true})
	h.takeEvents()
	cgb := h.expectSent("CGB:10")[0].(*isup.GroupSupervision)
	h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Type: isup.HardwareFailureOriented, Circuit: cgb.Circuit, RangeAndStatus: cgb.RangeAndStatus})
	before := h.c.stats.Unexpected
	h.recv(h.iam(10))
	again := h.expectSent("CGB:10")[0].(*isup.GroupSupervision)
	h.expectEvents("")
	if again.Type != isup.HardwareFailureOriented || again.RangeAndStatus.Ones() != 1 || !again.RangeAndStatus.Bit(0) {
		t.Fatalf("hardware blocking re-announced as %+v", again)
	}
	h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Type: isup.HardwareFailureOriented, Circuit: again.Circuit, RangeAndStatus: again.RangeAndStatus})

	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 12})
	h.takeEvents()
	h.expectSent("BLO:12")
	h.recv(simple(isup.BLA, 12))
	h.recv(h.iam(12))
	h.expectSent("BLO:12")
	h.expectEvents("")
	if !h.c.timerRunning(h.c.peers[0].cicIndex[12], tT12) {
		t.Fatal("the BLO re-announcing our blocking awaits no BLA")
	}
	h.recv(simple(isup.BLA, 12))
	if n := h.c.stats.Unexpected - before; n != 2 {
		t.Fatalf("%d discarded IAMs counted, want 2", n)
	}
	if h.c.pendingTimers() != 0 {
		t.Fatalf("%d timers left", h.c.pendingTimers())
	}
}

// Settled (issue 13): a UCIC (Q.764 §2.12) takes the circuit out of service
// without making it an operator's block: nothing is saved for a restart, no
// BLO goes out for it after a reset, a pending request on it stops repeating,
// and the far end's next message on it brings it back.
func TestUCICNotPersistedNorReannounced(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	saved := 0
	h.c.persist = func() { saved++ }
	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 4}) // RSC awaiting RLC
	h.takeEvents()
	h.expectSent("RSC:4")
	h.recv(simple(isup.UCIC, 4))
	h.expectEvents("alarm:5")
	ci := h.c.peers[0].cicIndex[4]
	if saved != 0 || len(h.c.currentState().Blocked) != 0 {
		t.Fatalf("UCIC saved as a local block (%d saves, %v)", saved, h.c.currentState().Blocked)
	}
	if h.c.circuits[ci].usable() || h.c.circuits[ci].pend != 0 || h.c.pendingTimers() != 0 {
		t.Fatalf("after UCIC: %s, usable %v, %d timers", h.c.circuits[ci].describe(), h.c.circuits[ci].usable(), h.c.pendingTimers())
	}
	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 1, Range: 7})
	h.takeEvents()
	h.expectSent("GRS:1")
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(7, true)})
	h.expectSent("") // no BLO:4
	h.c.request(Outseize{DPC: peerPC, Called: h.called(), HasCIC: true, CIC: 4})
	if r := h.takeEvents()[0].(Result); r.Status != StatusCircuitUnavailable {
		t.Fatalf("outseize on the unequipped circuit: %s", r.Status)
	}
	h.recv(h.iam(4)) // the far end has it after all
	h.expectEvents("incoming")
	if h.c.circuits[ci].block != 0 {
		t.Fatalf("still out of service: %s", h.c.circuits[ci].describe())
	}
}

// Settled (issue 13), no change: a GRS is a message of its CIC, the first of
// its range (Q.763 §3.43). With that CIC unequipped here it is discarded and
// answered with UCIC (Q.764 §2.12; OpenSS7 does the same), even if the range
// covers circuits of ours; with that CIC equipped, the circuits of ours in
// the range are reset and the GRA covers the whole range.
func TestGroupResetWithUnequippedHeadCIC(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU)) // CICs 1..31
	id := h.incoming(1)
	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 0}, RangeAndStatus: isup.RangeAndStatus{Range: 3}})
	h.expectSent("UCIC:0")
	h.expectEvents("")
	if h.c.calls[id] == nil {
		t.Fatal("a GRS headed by an unequipped CIC reset CIC 1")
	}
	id2 := h.incoming(31)
	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 30}, RangeAndStatus: isup.RangeAndStatus{Range: 3}})
	if ev := h.expectEvents("released:41"); ev[0].(Released).Call != id2 {
		t.Fatal("wrong call released")
	}
	if gra := h.expectSent("GRA:30")[0].(*isup.GroupReset); gra.RangeAndStatus.Range != 3 {
		t.Fatalf("GRA range %d", gra.RangeAndStatus.Range)
	}
}

// Settled with item 8 (issue 13): hardware blocking is announced again like
// maintenance blocking, in its own kind, after an RSC (Q.764 §2.9.3.1 c)),
// after a GRS received (its GRA shows only maintenance blocking, Q.764
// §2.9.3.2) and after the GRA to our GRS; and a reset lifts the far end's
// hardware blocking as well as its maintenance blocking (§2.9.3.1 d)).
func TestHardwareBlockingReannouncedAfterResets(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	ack := func(m isup.Message) {
		g := m.(*isup.GroupSupervision)
		if g.Type != isup.HardwareFailureOriented || g.RangeAndStatus.Ones() != 1 || !g.RangeAndStatus.Bit(0) {
			t.Fatalf("not a hardware CGB for its CIC alone: %+v", g)
		}
		h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Type: g.Type, Circuit: g.Circuit, RangeAndStatus: g.RangeAndStatus})
	}
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 5, Hardware: true})
	h.c.request(Maintenance{Op: OpBlock, DPC: peerPC, CIC: 6})
	h.takeEvents()
	sent := h.expectSent("CGB:5 BLO:6")
	ack(sent[0])
	h.recv(simple(isup.BLA, 6))

	h.recv(simple(isup.RSC, 5))
	ack(h.expectSent("CGB:5 RLC:5")[0])

	h.recv(&isup.GroupSupervision{Kind: isup.CGB, Type: isup.HardwareFailureOriented, Circuit: isup.Circuit{CIC: 2}, RangeAndStatus: isup.RangeAndStatus{Range: 1, Status: []byte{0b11}}})
	h.expectSent("CGBA:2")
	h.takeEvents()
	h.recv(&isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 6}})
	sent = h.expectSent("GRA:1 CGB:5")
	if st := sent[0].(*isup.GroupReset).RangeAndStatus.Status[0]; st != 0b0100000 { // CIC 6 only
		t.Fatalf("GRA status %07b", st)
	}
	ack(sent[1])
	for _, cic := range []uint16{2, 3} {
		if b := h.c.circuits[h.c.peers[0].cicIndex[cic]].block; b != 0 {
			t.Fatalf("CIC %d still blocked after the GRS: %04b", cic, b)
		}
	}

	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 1, Range: 6})
	h.takeEvents()
	h.expectSent("GRS:1")
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(6, true)})
	sent = h.expectSent("BLO:6 CGB:5")
	h.recv(simple(isup.BLA, 6))
	ack(sent[1])
	if h.c.pendingTimers() != 0 || len(h.c.groupOps) != 0 {
		t.Fatalf("%d timers, %d group operations left", h.c.pendingTimers(), len(h.c.groupOps))
	}
}

// A far end that answers our correcting CGU with another wrong CGBA gets no
// second CGU at once: the pending one is repeated on T20 only, so the two
// ends cannot ping-pong at signalling speed.
func TestGroupAckCorrectionIsNotRepeatedWhilePending(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	wrong := &isup.GroupSupervision{Kind: isup.CGBA, Circuit: isup.Circuit{CIC: 20}, RangeAndStatus: isup.RangeAndStatus{Range: 1, Status: []byte{0b11}}}
	h.recv(wrong)
	h.expectSent("CGU:20")
	for i := 0; i < 3; i++ {
		h.recv(wrong)
	}
	h.expectSent("")
	h.advance(DefaultTimers.T20)
	h.expectSent("CGU:20")
	h.recv(cgua(20, 1, 0b11))
	if h.c.pendingTimers() != 0 || len(h.c.groupOps) != 0 {
		t.Fatalf("%d timers, %d group operations left", h.c.pendingTimers(), len(h.c.groupOps))
	}
}

// A second GRS with the same head but a shorter range (CIC 5-6 while 5-8
// awaits its GRA) covers the first one's circuits: the GRS sent names 5-8,
// and the one GRA, whatever range it answers, ends the reset for all four
// (Q.764 §2.9.3.1). Before, 7-8 kept awaiting a GRA no GRS was pending for,
// with no timer running (found by TestRandomScenario).
func TestSecondGroupResetOfSameHeadCoversTheFirst(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 5, Range: 3})
	h.expectEvents("result:ok")
	h.expectSent("GRS:5")
	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 5, Range: 1})
	h.expectEvents("result:ok")
	h.expectSent("GRS:5")
	head := h.c.peers[0].cicIndex[5]
	if op := h.c.groupOps[groupKey{head, isup.GRS}]; op.msg.(*isup.GroupReset).RangeAndStatus.Range != 3 {
		t.Fatalf("second GRS range %d, want 3 (covering the first)", op.msg.(*isup.GroupReset).RangeAndStatus.Range)
	}
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 5}, RangeAndStatus: isup.NewRangeAndStatus(1, true)})
	for cic := uint16(5); cic <= 8; cic++ {
		if cc := &h.c.circuits[h.c.peers[0].cicIndex[cic]]; cc.pend&pendGRS != 0 {
			t.Errorf("CIC %d after the GRA: %s", cic, cc.describe())
		}
	}
	h.idleAndQuiet()
}
