package stack

import (
	"github.com/isupgw/isupgw/mtp"
	"strconv"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
)

func TestOutgoingCallCompletes(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id, cic := h.outseize(Outseize{Tag: 7})
	if cic%2 != 1 {
		t.Errorf("hunted CIC %d: with the lower point code we control odd CICs and take them first", cic)
	}
	sent := h.expectSent("IAM:1")
	if h.sent != nil || sent[0].(*isup.InitialAddress).CalledParty.Digits.String() != "4930123456" {
		t.Fatal("IAM content wrong")
	}
	if !h.c.timerRunning(h.c.peers[0].cicIndex[cic], tT7) {
		t.Fatal("T7 not running after IAM")
	}
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}, BackwardCall: isup.NewBackwardCallIndicators(2, 1, 1, true)})
	h.expectEvents("progress:ACM")
	ci := h.c.peers[0].cicIndex[cic]
	if h.c.timerRunning(ci, tT7) || !h.c.timerRunning(ci, tT9) {
		t.Fatal("ACM must stop T7 and start T9")
	}
	h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: cic}})
	h.expectEvents("answered")
	if h.c.timerRunning(ci, tT9) {
		t.Fatal("ANM must stop T9")
	}
	h.c.request(Release{Tag: 8, Call: id, Cause: isup.CauseNormalClearing})
	h.expectEvents("result:ok released:16")
	r := h.expectSent("REL:1")[0].(*isup.Release)
	if r.Cause.Value != isup.CauseNormalClearing || r.ACL() != 0 {
		t.Fatalf("REL %+v", r)
	}
	h.recv(rlc(cic))
	h.idleAndQuiet()
	if _, cic2 := h.outseize(Outseize{}); cic2 == cic {
		t.Errorf("LRU hunting reused CIC %d at once", cic)
	}
}

func TestIncomingCallAlertAnswerRemoteRelease(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(4)
	h.c.request(Alert{Tag: 1, Call: id})
	h.expectEvents("result:ok")
	h.expectSent("ACM:4")
	h.c.request(Answer{Tag: 2, Call: id})
	h.expectEvents("result:ok")
	h.expectSent("ANM:4")
	r := rel(4, isup.CauseNormalClearing)
	_ = r.Optional.Set(isup.AutomaticCongestionLevel(2))
	h.recv(r)
	ev := h.expectEvents("released:16")[0].(Released)
	if !ev.Remote || ev.ACL != 2 || ev.PC != peerPC || ev.CIC != 4 {
		t.Fatalf("released event %+v", ev)
	}
	h.expectSent("RLC:4")
	h.idleAndQuiet()
	h.c.request(Release{Call: id})
	h.expectEvents("result:unknown call")
}

func TestAnswerWithoutAlert(t *testing.T) {
	for _, tc := range []struct {
		v    isup.Variant
		want string
	}{{isup.ITU, "CON:4"}, {isup.ANSI, "ACM:4 ANM:4"}} {
		h := newHarness(t, testConfig(tc.v))
		id := h.incoming(4)
		h.c.request(Answer{Call: id})
		h.expectSent(tc.want)
		h.c.request(Answer{Call: id})
		h.expectEvents("result:ok result:request not valid in the call's state")
	}
}

func TestCallTimersReleaseWithTheirCauses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(h *harness) uint16
		wait  time.Duration
		cause uint8
	}{
		{"T7 no backward message", func(h *harness) uint16 { _, cic := h.outseize(Outseize{}); h.takeSent(); return cic }, DefaultTimers.T7, isup.CauseNormalUnspecified},
		{"T9 no answer", func(h *harness) uint16 {
			_, cic := h.outseize(Outseize{})
			h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
			h.takeSent()
			h.takeEvents()
			return cic
		}, DefaultTimers.T9, isup.CauseNoAnswer},
		{"T8 no continuity", func(h *harness) uint16 {
			iam := h.iam(6)
			iam.NatureOfConnection = isup.NewNatureOfConnection(0, 2, false)
			h.recv(iam)
			return 6
		}, DefaultTimers.T8, isup.CauseTemporaryFailure},
		{"T6 network suspend", func(h *harness) uint16 {
			id := h.incoming(6)
			h.c.request(Answer{Call: id})
			h.recv(&isup.SuspendResume{Kind: isup.SUS, Circuit: isup.Circuit{CIC: 6}, Indicators: 1})
			h.takeSent()
			h.takeEvents()
			return 6
		}, DefaultTimers.T6, isup.CauseRecoveryOnTimerExpiry},
		{"T2 user suspend", func(h *harness) uint16 {
			id := h.incoming(6)
			h.c.request(Answer{Call: id})
			h.recv(&isup.SuspendResume{Kind: isup.SUS, Circuit: isup.Circuit{CIC: 6}})
			h.takeSent()
			h.takeEvents()
			return 6
		}, DefaultTimers.T2, isup.CauseRecoveryOnTimerExpiry},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig(isup.ITU))
			cic := tc.setup(h)
			h.advance(tc.wait - time.Millisecond)
			if len(h.sent) != 0 {
				t.Fatalf("released before the timer: %s", types(h.takeSent()))
			}
			h.advance(time.Millisecond)
			if ev := h.takeEvents(); len(ev) != 1 || ev[0].(Released).Cause != tc.cause {
				t.Fatalf("events %q, want released:%d", eventNames(ev), tc.cause)
			}
			r := h.expectSent("REL:" + itoa(cic))[0].(*isup.Release)
			if r.Cause.Value != tc.cause {
				t.Fatalf("REL cause %d, want %d", r.Cause.Value, tc.cause)
			}
			h.recv(rlc(cic))
			h.idleAndQuiet()
		})
	}
}

func itoa(n uint16) string { return strconv.Itoa(int(n)) }

func TestReleaseT1RepeatsAndT5ResetsTheCircuit(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(10)
	h.c.request(Release{Call: id, Cause: isup.CauseUserBusy})
	h.takeEvents()
	h.expectSent("REL:10")
	h.advance(DefaultTimers.T1)
	if r := h.expectSent("REL:10")[0].(*isup.Release); r.Cause.Value != isup.CauseUserBusy {
		t.Fatalf("T1 repeated REL with cause %d", r.Cause.Value)
	}
	if h.c.circuits[h.c.peers[0].cicIndex[10]].usable() {
		t.Fatal("a circuit awaiting RLC must not be hunted")
	}
	// T1 keeps repeating every 15 s (at 30 ... 285 s: 18 more RELs); at 300 s
	// T5, started first, wins the tie: RSC, and T1 stops.
	h.advance(DefaultTimers.T5 - DefaultTimers.T1)
	got := h.takeSent()
	if n := len(got); n != 19 || got[n-1].MessageType() != isup.RSC || got[n-2].MessageType() != isup.REL {
		t.Fatalf("after T5: %s", types(got))
	}
	h.expectEvents("alarm:2")
	h.advance(DefaultTimers.T17)
	h.expectSent("RSC:10")
	h.expectEvents("alarm:2")
	h.recv(rlc(10))
	h.idleAndQuiet()
}

func TestRSCRepeatsOnT16(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.c.request(Maintenance{Op: OpReset, DPC: peerPC, CIC: 3})
	h.expectEvents("result:ok")
	h.expectSent("RSC:3")
	h.advance(DefaultTimers.T16)
	h.expectSent("RSC:3")
	h.recv(rlc(3))
	h.idleAndQuiet()
}

func TestReleaseCollision(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(5)
	h.c.request(Release{Call: id})
	h.takeEvents()
	h.expectSent("REL:5")
	h.recv(rel(5, isup.CauseNormalClearing))
	h.expectSent("RLC:5")
	if ev := h.takeEvents(); len(ev) != 0 {
		t.Fatalf("a second release for one call: %q", eventNames(ev))
	}
	h.recv(rlc(5)) // their RLC to our REL: now the circuit is idle
	h.idleAndQuiet()
}

func TestContinuityCheckOnPreviousCircuit(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	iam := h.iam(8)
	iam.NatureOfConnection = isup.NewNatureOfConnection(0, 2, false)
	h.recv(iam)
	h.expectEvents("") // not offered before COT
	h.recv(&isup.Continuity{Circuit: isup.Circuit{CIC: 8}, Indicators: 1})
	id := h.expectEvents("incoming")[0].(Incoming).Call
	if h.c.timerRunning(h.c.peers[0].cicIndex[8], tT8) {
		t.Fatal("T8 still running after COT")
	}
	h.c.request(Release{Call: id})
	h.takeEvents()
	h.recv(rlc(8))
	h.takeSent()
	h.idleAndQuiet()

	// A failed check: no call for the host; the far end releases.
	h.recv(iam)
	h.recv(&isup.Continuity{Circuit: isup.Circuit{CIC: 8}, Indicators: 0})
	h.expectEvents("released:41")
	h.recv(rel(8, isup.CauseTemporaryFailure))
	h.expectSent("RLC:8")
	h.idleAndQuiet()
}

func TestACLFromHookGoesIntoEveryREL(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	level := isup.AutomaticCongestionLevel(0)
	h.c.hooks.ReleaseACL = func() isup.AutomaticCongestionLevel { return level }
	id := h.incoming(3)
	level = 3 // ANSI level: clipped to 2 in ITU
	h.c.request(Release{Call: id})
	h.takeEvents()
	if r := h.expectSent("REL:3")[0].(*isup.Release); r.ACL() != 2 {
		t.Fatalf("ACL %d, want 2", r.ACL())
	}
	h.recv(rlc(3))
	level = 0
	id = h.incoming(3)
	h.c.request(Release{Call: id})
	if r := h.expectSent("REL:3")[0].(*isup.Release); r.Optional.Has(isup.ParamAutomaticCongestionLevel) {
		t.Fatal("ACL sent with level 0")
	}
}

func TestOverloadMessageHoldsCircuitUntilT3(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	_, cic := h.outseize(Outseize{})
	h.takeSent()
	h.recv(simple(isup.OLM, cic))
	h.expectEvents("released:42")
	if h.c.circuits[h.c.peers[0].cicIndex[cic]].usable() {
		t.Fatal("held circuit is huntable")
	}
	h.advance(DefaultTimers.T3)
	h.expectSent("REL:" + itoa(cic))
	h.recv(rlc(cic))
	h.idleAndQuiet()
}

func TestUnexpectedMessageOnIdleCircuitResetsIt(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: 9}})
	h.expectSent("RSC:9")
	h.recv(rlc(9))
	h.recv(rel(11, isup.CauseNormalClearing)) // REL on idle: RLC
	h.expectSent("RLC:11")
	h.idleAndQuiet()
}

func TestRequestsRefused(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	cases := []struct {
		r    Outseize
		want Status
	}{
		{Outseize{DPC: 99, Called: h.called()}, StatusUnknownDestination},
		{Outseize{Route: "nowhere", Called: h.called()}, StatusUnknownDestination},
		{Outseize{DPC: peerPC}, StatusBadRequest},
		{Outseize{DPC: peerPC, Called: h.called(), HasCIC: true, CIC: 77}, StatusCircuitUnavailable},
		{Outseize{DPC: peerPC, Called: h.called(), HasCIC: true, CIC: 5000}, StatusBadRequest},
	}
	for _, tc := range cases {
		h.c.request(tc.r)
		if ev := h.takeEvents(); len(ev) != 1 || ev[0].(Result).Status != tc.want {
			t.Errorf("%+v: %q, want %s", tc.r, eventNames(ev), tc.want)
		}
	}
	if len(h.sent) != 0 {
		t.Fatalf("refused requests sent %s", types(h.takeSent()))
	}
	// Every circuit busy: no circuit.
	for i := 0; i < 31; i++ {
		h.outseize(Outseize{})
	}
	h.c.request(Outseize{DPC: peerPC, Called: h.called()})
	if ev := h.takeEvents(); ev[0].(Result).Status != StatusNoCircuit {
		t.Fatalf("%q", eventNames(ev))
	}
	h.c.hooks.AdmitOutgoing = func(pcode mtp.PointCode) Status { return StatusOutboundCongestion }
}

func TestDrainReleaseAllAndSetTimers(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(2)
	_, cic := h.outseize(Outseize{})
	h.takeSent()
	h.c.request(Drain{Tag: 1})
	h.expectEvents("result:ok")
	h.c.request(Outseize{DPC: peerPC, Called: h.called()})
	h.expectEvents("result:shutting down")
	h.recv(h.iam(4))
	if r := h.expectSent("REL:4")[0].(*isup.Release); r.Cause.Value != isup.CauseTemporaryFailure {
		t.Fatalf("IAM while draining: REL cause %d", r.Cause.Value)
	}
	h.expectEvents("")
	h.c.request(SetTimers{Timers: Timers{T1: time.Second}})
	h.takeEvents()
	if h.c.cfg.Timers.T1 != time.Second || h.c.cfg.Timers.T5 != DefaultTimers.T5 {
		t.Fatalf("timers %+v", h.c.cfg.Timers)
	}
	h.c.request(ReleaseAll{Tag: 2})
	evs := h.takeEvents()
	if len(evs) != 3 || eventNames(evs[:2]) != "released:41 released:41" || evs[2].(Result).Status != StatusOK {
		t.Fatalf("release all: %q", eventNames(evs))
	}
	if len(h.c.calls) != 0 || id == 0 || cic == 0 {
		t.Fatal("calls left")
	}
	h.takeSent()
	h.advance(time.Second) // the RELs sent by ReleaseAll repeat on the new T1
	if got := h.takeSent(); len(got) < 2 {
		t.Fatalf("after 1 s with T1 = 1 s: %s", types(got))
	}
}

func TestReleaseWithHostACLAndUnencodableIAM(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(3)
	h.c.request(Release{Call: id, ACL: 3})
	if r := h.expectSent("REL:3")[0].(*isup.Release); r.ACL() != 2 {
		t.Fatalf("host ACL 3 in ITU: %d, want 2", r.ACL())
	}
	h.takeEvents()
	// 400 octets of optional parameters do not fit an MTP message.
	big := isup.Optional{{Code: isup.ParamUserToUserInformation, Value: make([]byte, 200)}, {Code: isup.ParamGenericDigits, Value: make([]byte, 200)}}
	h.c.request(Outseize{DPC: peerPC, Called: h.called(), Optional: big})
	if ev := h.takeEvents(); len(ev) != 1 || ev[0].(Result).Status != StatusBadRequest {
		t.Fatalf("unencodable IAM: %q", eventNames(ev))
	}
	h.expectSent("")
}
