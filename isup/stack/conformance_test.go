package stack

import (
	"testing"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// Tests for the Q.764 deviations of issue 13, each named after its item.

// Item 1: on a circuit held after OLM, a REL from the far end idles the circuit
// and must stop T3 with it; the next call on the circuit must not be touched
// by the old T3 (no REL 42), and ends normally.
func TestT3DoesNotOutliveItsCall(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	_, cic := h.outseize(Outseize{HasCIC: true, CIC: 3})
	h.takeSent()
	h.recv(simple(isup.OLM, cic))
	h.expectEvents("released:42")
	h.recv(rel(cic, isup.CauseNormalClearing)) // the far end clears the held circuit
	h.expectSent("RLC:3")
	h.idleAndQuiet()

	id, _ := h.outseize(Outseize{HasCIC: true, CIC: 3})
	h.expectSent("IAM:3")
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: cic}})
	h.expectEvents("progress:ACM answered")
	h.advance(DefaultTimers.T3) // the old T3 would have fired here
	h.expectSent("")
	if _, ok := h.c.calls[id]; !ok {
		t.Fatal("the new call is gone")
	}
	h.recv(rel(cic, isup.CauseNormalClearing))
	h.expectEvents("released:16")
	h.expectSent("RLC:3")
	h.idleAndQuiet()
}

// Item 1: a call timer that a path forgot to stop is dead once its circuit has
// been seized again: its expiry does nothing to the new call and the timer is
// no longer counted as running.
func TestStaleCallTimerIgnoredByLaterCall(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	ci := h.c.peers[0].cicIndex[5]
	h.c.startTimer(ci, tT1) // as if left behind by an earlier release
	id := h.incoming(5)
	h.advance(DefaultTimers.T1)
	h.expectSent("")
	h.expectEvents("")
	if _, ok := h.c.calls[id]; !ok || h.c.circuits[ci].state != csIncoming {
		t.Fatal("a stale T1 acted on the new call")
	}
	if h.c.timerRunning(ci, tT1) || h.c.stats.StaleTimers != 1 {
		t.Fatalf("stale T1: running %v, counted %d", h.c.timerRunning(ci, tT1), h.c.stats.StaleTimers)
	}
	h.c.request(Release{Call: id})
	h.takeEvents()
	h.expectSent("REL:5")
	h.recv(rlc(5))
	h.idleAndQuiet()
}

// Item 2: in a REL collision the circuit becomes idle only once RLC has been
// both sent and received (Q.764 §2.3.1 e), Q.784 test 3.8): until the far
// end's RLC it is not hunted, T1 repeats our REL, and the late RLC completes
// the release instead of killing a new call.
func TestRELCollisionIdleOnlyAfterRLCBothWays(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id, cic := h.outseize(Outseize{HasCIC: true, CIC: 7})
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.takeEvents()
	h.takeSent()
	h.c.request(Release{Call: id})
	h.expectEvents("result:ok released:16")
	h.expectSent("REL:7")
	h.recv(rel(cic, isup.CauseNormalClearing)) // theirs crossed ours
	h.expectSent("RLC:7")
	h.expectEvents("")
	ci := h.c.peers[0].cicIndex[cic]
	if cc := &h.c.circuits[ci]; cc.state != csReleasing || cc.usable() || !h.c.timerRunning(ci, tT1) || !h.c.timerRunning(ci, tT5) {
		t.Fatalf("after RLC sent, none received: %s, T1 %v, T5 %v", cc.describe(), h.c.timerRunning(ci, tT1), h.c.timerRunning(ci, tT5))
	}
	if _, c2 := h.outseize(Outseize{}); c2 == cic {
		t.Fatal("a new IAM went out on the circuit awaiting RLC")
	}
	h.takeSent()
	h.recv(rel(cic, isup.CauseNormalClearing)) // their T1 repeat: answered again
	h.expectSent("RLC:7")
	h.recv(rlc(cic))
	if cc := &h.c.circuits[ci]; cc.state != csIdle || !cc.usable() || h.c.timerRunning(ci, tT1) || h.c.timerRunning(ci, tT5) {
		t.Fatalf("after RLC both ways: %s", cc.describe())
	}
	if h.c.stats.ReleaseCollisions != 2 {
		t.Fatalf("collisions counted %d, want 2", h.c.stats.ReleaseCollisions)
	}
}

// Item 3: RSC or GRS after our IAM and before any backward message leads to an
// automatic repeat attempt on another circuit (Q.764 §2.8.1), not to a
// release: the host sees no Released, the call answers on the new circuit.
func TestResetDuringSetupRepeatsAttempt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reset isup.Message
		ack   string
		lo    uint16
		hi    uint16
	}{
		{"RSC", simple(isup.RSC, 3), "RLC:3", 3, 3},
		{"GRS", &isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 6}}, "GRA:1", 1, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig(isup.ITU))
			id, _ := h.outseize(Outseize{HasCIC: true, CIC: 3})
			h.expectSent("IAM:3")
			h.recv(tc.reset)
			got := h.takeSent()
			if len(got) != 2 || types(got[:1]) != tc.ack || got[1].MessageType() != isup.IAM {
				t.Fatalf("after %s: sent %q, want %s then IAM on another circuit", tc.name, types(got), tc.ack)
			}
			cic := got[1].CircuitID()
			if cic >= tc.lo && cic <= tc.hi {
				t.Fatalf("repeat attempt on CIC %d, inside the reset range %d-%d", cic, tc.lo, tc.hi)
			}
			h.expectEvents("")
			if h.c.stats.RepeatAttempts != 1 {
				t.Fatalf("repeat attempts %d", h.c.stats.RepeatAttempts)
			}
			h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
			h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: cic}})
			h.expectEvents("progress:ACM answered")
			h.c.request(Release{Call: id})
			h.expectEvents("result:ok released:16")
			h.expectSent("REL:" + itoa(cic))
			h.recv(rlc(cic))
			h.idleAndQuiet()
		})
	}
}

// Item 3: after a backward message there is no repeat attempt: the reset
// releases the call towards its host.
func TestResetAfterBackwardMessageReleases(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.outseize(Outseize{HasCIC: true, CIC: 3})
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: 3}})
	h.takeSent()
	h.takeEvents()
	h.recv(simple(isup.RSC, 3))
	h.expectSent("RLC:3")
	h.expectEvents("released:41")
	h.idleAndQuiet()
}

// Item 10: a CPG before the ACM does not stop T7 (only ACM or CON do): the
// call stays supervised, and T7 releases it when no ACM follows.
func TestCPGBeforeACMKeepsT7(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	_, cic := h.outseize(Outseize{})
	h.takeSent()
	ci := h.c.peers[0].cicIndex[cic]
	h.recv(&isup.CallProgress{Circuit: isup.Circuit{CIC: cic}, Event: 2})
	h.expectEvents("progress:CPG")
	if !h.c.timerRunning(ci, tT7) {
		t.Fatal("CPG before ACM stopped T7")
	}
	h.advance(DefaultTimers.T7)
	h.expectEvents("released:31")
	h.expectSent("REL:" + itoa(cic))
	h.recv(rlc(cic))
	h.idleAndQuiet()

	// With the ACM after the CPG, T7 stops and T9 runs.
	_, cic = h.outseize(Outseize{})
	h.takeSent()
	ci = h.c.peers[0].cicIndex[cic]
	h.recv(&isup.CallProgress{Circuit: isup.Circuit{CIC: cic}, Event: 2})
	h.recv(&isup.AddressComplete{Circuit: isup.Circuit{CIC: cic}})
	h.expectEvents("progress:CPG progress:ACM")
	if h.c.timerRunning(ci, tT7) || !h.c.timerRunning(ci, tT9) {
		t.Fatal("ACM after CPG: T7 must stop and T9 run")
	}
}

// Item 14: T1 repeats the very REL that was sent (Q.764 §2.9.6): same cause,
// location, diagnostics and ACL, whatever congestion control says meanwhile.
func TestT1RepeatsTheSameREL(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	level := isup.AutomaticCongestionLevel(1)
	h.c.hooks.ReleaseACL = func() isup.AutomaticCongestionLevel { return level }
	id := h.incoming(6)
	h.c.request(Release{Call: id, Cause: isup.CauseUserBusy, Location: isup.LocationPrivateLocal, ACL: 2})
	h.takeEvents()
	first := h.expectSent("REL:6")[0].(*isup.Release)
	if first.Cause.Value != isup.CauseUserBusy || first.Cause.Location != isup.LocationPrivateLocal || first.ACL() != 2 {
		t.Fatalf("first REL %+v", first)
	}
	level = 0 // congestion ended: a new REL would carry no ACL
	want, _ := isup.Marshal(first, isup.ITU)
	for i := 0; i < 3; i++ {
		h.advance(DefaultTimers.T1)
		again := h.expectSent("REL:6")[0]
		got, _ := isup.Marshal(again, isup.ITU)
		if string(got) != string(want) {
			t.Fatalf("T1 repeat %d: % X, want the original % X", i+1, got, want)
		}
	}
	h.recv(rlc(6))
	h.idleAndQuiet()
	if len(h.c.sentREL) != 0 {
		t.Fatalf("%d RELs kept after RLC", len(h.c.sentREL))
	}
}

// Item 11: an outseize whose nature of connection indicators ask for a
// continuity check (on this circuit, or on a previous one) is refused with
// its own status: the far end would wait for a COT that never comes.
func TestOutseizeAskingContinuityRefused(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	for _, dc := range []uint8{1, 2} {
		h.c.request(Outseize{Tag: 9, DPC: peerPC, Called: h.called(), NatureOfConnection: isup.NewNatureOfConnection(0, dc, false)})
		ev := h.takeEvents()
		if len(ev) != 1 || ev[0].(Result).Status != StatusContinuityNotSupported || ev[0].(Result).Tag != 9 {
			t.Fatalf("continuity %d: %q", dc, eventNames(ev))
		}
	}
	h.expectSent("")
	h.idleAndQuiet()
	// Satellite and echo control bits alone are fine.
	h.outseize(Outseize{NatureOfConnection: isup.NewNatureOfConnection(1, 0, true)})
	h.expectSent("IAM:1")
}

// Item 13: a received ACL is taken per variant (ITU 1-2, ANSI 1-3); a spare
// value is not acted upon: the host and congestion control see a REL without
// ACL, and it is counted.
func TestReceivedACLValidatedPerVariant(t *testing.T) {
	for _, tc := range []struct {
		v       isup.Variant
		raw     byte
		want    isup.AutomaticCongestionLevel
		counted uint64
	}{
		{isup.ITU, 1, 1, 0}, {isup.ITU, 2, 2, 0}, {isup.ITU, 3, 0, 1}, {isup.ITU, 5, 0, 1}, {isup.ITU, 0, 0, 1},
		{isup.ANSI, 3, 3, 0}, {isup.ANSI, 4, 0, 1}, {isup.ANSI, 0xff, 0, 1},
	} {
		h := newHarness(t, testConfig(tc.v))
		var seen []isup.AutomaticCongestionLevel
		h.c.hooks.Observe = func(o Observation) {
			if o.Kind == ObsRELReceived {
				seen = append(seen, o.ACL)
			}
		}
		h.incoming(4)
		r := rel(4, isup.CauseSwitchingCongestion)
		r.Optional = isup.Optional{{Code: isup.ParamAutomaticCongestionLevel, Value: []byte{tc.raw}}}
		h.recv(r)
		ev := h.expectEvents("released:42")[0].(Released)
		h.expectSent("RLC:4")
		if ev.ACL != tc.want || len(seen) != 1 || seen[0] != tc.want || h.c.stats.SpareACL != tc.counted {
			t.Errorf("%s ACL %d: host %d, observed %v, counted %d; want %d", tc.v, tc.raw, ev.ACL, seen, h.c.stats.SpareACL, tc.want)
		}
	}
}

// Settled: an ITU RLC with no optional-part pointer completes the release
// (as Yate, libss7 and Wireshark read it), instead of being discarded until
// T5 resets the circuit.
func TestITURLCWithoutPointerCompletesRelease(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id := h.incoming(9)
	h.c.request(Release{Call: id})
	h.takeEvents()
	h.expectSent("REL:9")
	h.c.receive(mtp.Label{OPC: peerPC, DPC: ownPC, SI: 5, NI: 2}, []byte{9, 0, byte(isup.RLC)})
	if h.c.stats.DecodeErrors != 0 {
		t.Fatal("a 3-octet RLC was refused")
	}
	h.idleAndQuiet()
}

// Settled: a REL whose cause is one octet (undecodable) still releases: the
// call ends with cause 31 normal, unspecified, and RLC answers it.
func TestRELWithOneOctetCauseReleases(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	h.incoming(4)
	// CIC 4, REL, pointers: cause at +2, no optional part; cause length 1.
	h.c.receive(mtp.Label{OPC: peerPC, DPC: ownPC, SI: 5, NI: 2}, []byte{4, 0, byte(isup.REL), 2, 0, 1, 0x82})
	ev := h.expectEvents("released:31")[0].(Released)
	if !ev.Remote || h.c.stats.MalformedREL != 1 {
		t.Fatalf("released %+v, counted %d", ev, h.c.stats.MalformedREL)
	}
	h.expectSent("RLC:4")
	h.idleAndQuiet()
}

// Settled: a REL with an unrecognised parameter releases the call, and the
// RLC (not a CFN) reports the parameter with cause 99 in ITU (Q.764 §2.9.5.2);
// in ANSI, whose RLC has no parameters, a plain RLC. A compatibility
// instruction to discard the message does not keep the call up.
func TestRELWithUnrecognisedParameter(t *testing.T) {
	unknown := isup.ParameterCode(0xF3)
	for _, tc := range []struct {
		name  string
		v     isup.Variant
		pci   bool // instructions: discard message, no notification
		cause bool // RLC carries cause 99 naming the parameter
	}{
		{"ITU no instructions", isup.ITU, false, true},
		{"ITU discard message", isup.ITU, true, false},
		{"ANSI no instructions", isup.ANSI, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig(tc.v))
			h.incoming(4)
			r := rel(4, isup.CauseNormalClearing)
			r.Optional = isup.Optional{{Code: unknown, Value: []byte{1, 2}}}
			if tc.pci {
				var pci isup.ParameterCompatibilityInformation
				pci = pci.Append(unknown, 0x08, 0, 0) // D: discard message
				_ = r.Optional.Set(pci)
			}
			h.recv(r)
			h.expectEvents("released:16")
			got := h.expectSent("RLC:4")[0].(*isup.ReleaseComplete)
			var cause isup.CauseIndicators
			found, err := got.Optional.Decode(&cause)
			if found != tc.cause || err != nil || found && (cause.Value != isup.CauseParameterNonExistent || string(cause.Diagnostics) != string([]byte{byte(unknown)})) {
				t.Fatalf("RLC cause found %v (%+v, %v), want %v", found, cause, err, tc.cause)
			}
			h.idleAndQuiet()
		})
	}
}
