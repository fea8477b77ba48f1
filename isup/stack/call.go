package stack

import (
	"fmt"
	"time"

	"github.com/isupgw/isupgw/isup"
)

// phase is where a call stands.
type phase uint8

const (
	phSetup    phase = iota // outgoing: IAM sent, no backward message; incoming: offered
	phWaitCOT               // incoming: IAM said continuity check, COT awaited (T8)
	phAlerting              // ACM received (outgoing) or sent (incoming)
	phAnswered
)

// call is a call in progress on a circuit.
type call struct {
	id       CallID
	circ     int32
	owner    any
	outgoing bool
	phase    phase
	acmSent  bool
	retried  bool                 // a repeat attempt was made already
	iam      *isup.InitialAddress // outgoing: kept until the first backward message, for a repeat attempt
	// An outgoing call is in set-up from its IAM to its first backward
	// message or its end; its set-up time counts from setupFrom, when its
	// outseize was queued, of which setupWait in the outbound queue.
	inSetup   bool
	setupFrom time.Time
	setupWait time.Duration
}

func (c *core) newCall(ci int32, outgoing bool, owner any) *call {
	c.nextID++
	cl := &call{id: c.nextID, circ: ci, owner: owner, outgoing: outgoing}
	c.calls[cl.id] = cl
	cc := &c.circuits[ci]
	cc.call = cl
	c.newEpoch(ci)
	if outgoing {
		cc.state = csOutgoing
	} else {
		cc.state = csIncoming
	}
	c.refresh(ci)
	return cl
}

// endCall detaches a call from its circuit and tells the host, exactly once.
func (c *core) endCall(cl *call, r Released) {
	cc := &c.circuits[cl.circ]
	if cc.call == cl {
		cc.call = nil
	}
	delete(c.calls, cl.id)
	r.Call, r.Owner = cl.id, cl.owner
	r.PC, r.CIC = c.peers[cc.peer].group.DPC, cc.cic
	c.emit(r)
	o := Observation{Kind: ObsCallEnded, PC: r.PC, Call: cl.id, Outgoing: cl.outgoing, InSetup: cl.inSetup}
	if cl.inSetup {
		cl.inSetup, o.Setup = false, c.now.Sub(cl.setupFrom)
	}
	c.observe(o)
}

// idle returns a circuit to idle (after RLC, or after sending RLC).
func (c *core) idle(ci int32) {
	cc := &c.circuits[ci]
	c.stopCallTimers(ci)
	c.newEpoch(ci)
	cc.state = csIdle
	c.refresh(ci)
}

// outseize places an outgoing call.
func (c *core) outseize(r Outseize) {
	p, st, detail := c.destination(r)
	if st != StatusOK {
		c.result(r.Tag, 0, st, detail, r.Owner)
		return
	}
	pr := &c.peers[p]
	if c.draining {
		c.result(r.Tag, 0, StatusShuttingDown, "", r.Owner)
		return
	}
	if r.Called.Digits.Len() == 0 {
		c.result(r.Tag, 0, StatusBadRequest, "called party number has no digits", r.Owner)
		return
	}
	if r.asksContinuity() {
		// An IAM saying "continuity check required on this circuit" or "performed
		// on a previous circuit" makes the far end wait for a COT (Q.764 §2.1.8,
		// T8), and the gateway has no tone path to test nor any COT to send.
		c.result(r.Tag, 0, StatusContinuityNotSupported, "the nature of connection indicators ask for a continuity check; the gateway sends no COT", r.Owner)
		return
	}
	if !pr.available || !pr.userPart {
		c.result(r.Tag, 0, StatusDestinationUnavailable, "", r.Owner)
		return
	}
	if h := c.hooks.AdmitOutgoing; h != nil && !r.admitted {
		if st := h(pr.group.DPC); st != StatusOK {
			c.result(r.Tag, 0, st, "", r.Owner)
			return
		}
	}
	var ci int32
	if r.HasCIC {
		var ok bool
		if r.CIC < 0 || r.CIC > int(pr.group.Variant.MaxCIC()) {
			c.result(r.Tag, 0, StatusBadRequest, "CIC out of range", r.Owner)
			return
		}
		ci, ok = c.circuitAt(p, uint16(r.CIC))
		if !ok || !c.circuits[ci].usable() {
			c.result(r.Tag, 0, StatusCircuitUnavailable, "", r.Owner)
			return
		}
	} else {
		var ok bool
		if ci, ok = c.hunt(p); !ok {
			c.result(r.Tag, 0, StatusNoCircuit, "", r.Owner)
			return
		}
	}
	iam := c.buildIAM(p, r)
	// Encode it once into the scratch buffer to know it can be sent (send
	// encodes it again with its CIC): no allocation on the way of every call.
	n, limit := isup.MarshalLen(iam, pr.group.Variant), maxISUPLen(pr.group.Variant)
	if n >= 0 && n <= limit {
		if _, err := isup.MarshalTo(c.buf[:n], iam, pr.group.Variant); err != nil {
			n = -1
		}
	}
	if n < 0 {
		_, err := isup.Marshal(iam, pr.group.Variant)
		c.result(r.Tag, 0, StatusBadRequest, fmt.Sprintf("the IAM cannot be encoded: %v", err), r.Owner)
		return
	}
	if n > limit {
		c.result(r.Tag, 0, StatusBadRequest, fmt.Sprintf("the IAM would be %d octets; MTP carries at most %d (272 with the routing label)", n, limit), r.Owner)
		return
	}
	cl := c.newCall(ci, true, r.Owner)
	cl.iam = iam
	cl.inSetup, cl.setupFrom, cl.setupWait = true, c.now.Add(-c.reqWait), c.reqWait
	c.stats.CallsOut++
	c.sendIAM(p, cl)
	c.observe(Observation{Kind: ObsCallStarted, PC: pr.group.DPC, Call: cl.id, Outgoing: true})
	c.emit(Result{Tag: r.Tag, Call: cl.id, Status: StatusOK, Owner: r.Owner, DPC: pr.group.DPC, CIC: c.circuits[ci].cic})
}

// maxISUPLen is the longest ISUP message an MTP2 link carries: the 272-octet
// signalling information field less the routing label (4 octets ITU, 7 ANSI).
func maxISUPLen(v isup.Variant) int {
	if v == isup.ANSI {
		return 272 - 7
	}
	return 272 - 4
}

// destination resolves an outseize's route or point code to a peer.
func (c *core) destination(r Outseize) (int, Status, string) {
	if r.Route != "" {
		p, ok := c.peerByName[r.Route]
		if !ok {
			return 0, StatusUnknownDestination, "no route named " + r.Route
		}
		return p, StatusOK, ""
	}
	p, ok := c.peerByPC[r.DPC]
	if !ok {
		return 0, StatusUnknownDestination, "no circuit group towards point code " + c.cfg.PointCodes.Format(r.DPC)
	}
	return p, StatusOK, ""
}

func (c *core) buildIAM(p int, r Outseize) *isup.InitialAddress {
	v := c.variant(p)
	iam := &isup.InitialAddress{
		NatureOfConnection:   r.NatureOfConnection,
		ForwardCall:          r.ForwardCall,
		CallingPartyCategory: r.Category,
		CalledParty:          r.Called,
		Optional:             append(isup.Optional(nil), r.Optional...),
	}
	if iam.ForwardCall == 0 {
		iam.ForwardCall = isup.NewForwardCallIndicators(true, isup.ISUPPreferred, false)
	}
	if iam.CallingPartyCategory == 0 {
		iam.CallingPartyCategory = isup.CategoryOrdinary
	}
	if v == isup.ANSI {
		iam.UserServiceInfo = isup.NewUserServiceInformation(isup.ITCSpeech, isup.Layer1MuLaw)
	} else {
		iam.TransmissionMedium = isup.TMRSpeech
	}
	if r.Calling != nil {
		_ = iam.Optional.Set(*r.Calling) // a calling number always fits
	}
	return iam
}

func (c *core) sendIAM(p int, cl *call) {
	cc := &c.circuits[cl.circ]
	cl.iam.CIC = cc.cic
	c.send(p, cl.iam)
	c.startTimer(cl.circ, tT7)
}

// repeatAttempt moves an outgoing call that has had no backward message to
// another circuit (glare lost, or the circuit was blocked under it), once.
// The old circuit is left to the caller.
func (c *core) repeatAttempt(p int, cl *call, reason string) {
	c.repeatAttemptOutside(p, cl, reason, 1, 0)
}

// repeatable reports whether a call may still be moved by an automatic repeat
// attempt: our IAM is out and no backward message came (Q.764 §2.8.1).
func repeatable(cl *call) bool {
	return cl != nil && cl.outgoing && cl.phase == phSetup && cl.iam != nil
}

// repeatAttemptOutside is repeatAttempt on a circuit outside CICs lo..hi (the
// range a reset covers: the far end may not have seen our GRA or RLC yet).
func (c *core) repeatAttemptOutside(p int, cl *call, reason string, lo, hi uint16) {
	old := cl.circ
	c.stopCallTimers(old)
	if c.circuits[old].call == cl {
		c.circuits[old].call = nil
	}
	ci, ok := c.huntOutside(p, lo, hi)
	if cl.retried || !ok {
		cl.circ = old
		c.endCall(cl, Released{Cause: isup.CauseNoCircuitAvailable, Location: isup.LocationPublicLocal, Reason: reason})
		return
	}
	cl.retried = true
	cl.circ = ci
	cc := &c.circuits[ci]
	cc.call, cc.state = cl, csOutgoing
	c.newEpoch(ci)
	c.refresh(ci)
	c.stats.RepeatAttempts++
	c.sendIAM(p, cl)
}

// takeForRepeat detaches from a circuit about to be reset the outgoing call
// that may still be repeated, so the reset does not release it: Q.764 §2.8.1
// lists a reset received after our IAM and before any backward message among
// the cases for an automatic repeat attempt.
func (c *core) takeForRepeat(ci int32) []*call {
	cc := &c.circuits[ci]
	cl := cc.call
	if !repeatable(cl) {
		return nil
	}
	c.stopCallTimers(ci)
	cc.call = nil
	return []*call{cl}
}

// repeatAfterReset repeats the calls takeForRepeat took, once the reset's
// answer (RLC or GRA) is out, on circuits outside the reset range lo..hi.
func (c *core) repeatAfterReset(p int, moved []*call, lo, hi uint16) {
	for _, cl := range moved {
		c.repeatAttemptOutside(p, cl, "circuit reset by the far end, no circuit for a repeat attempt", lo, hi)
	}
}

// onIAM handles an incoming IAM, including dual seizure.
func (c *core) onIAM(p int, ci int32, m *isup.InitialAddress) {
	cc := &c.circuits[ci]
	pr := &c.peers[p]
	switch cc.state {
	case csOutgoing:
		cl := cc.call
		if cl == nil || cl.phase != phSetup || cl.iam == nil {
			c.stats.Unexpected++ // an IAM on a call already under way: not glare
			return
		}
		c.stats.Glare++
		if cc.flags&flagControl != 0 {
			return // we control this CIC: their IAM is discarded, they back off
		}
		// We yield: our call is repeated on another circuit, theirs takes this one.
		cc.state = csIdle
		c.stats.GlareRetries++
		c.repeatAttempt(p, cl, "dual seizure lost, no circuit for a repeat attempt")
	case csIdle:
	default:
		c.stats.Unexpected++
		return
	}
	if cc.block&blkRemoteMaint != 0 {
		// Q.764 §2.8.2.3: an IAM unblocks a remotely maintenance-blocked circuit.
		cc.block &^= blkRemoteMaint
	}
	if cc.block&(blkLocalMaint|blkLocalHW) != 0 && m.CallingPartyCategory != isup.CategoryTest {
		// They should not seize a circuit we blocked: remind them, drop the
		// IAM (Q.764 §2.8.2.3: a non-test call on a locally blocked circuit).
		c.send(p, &isup.Simple{Kind: isup.BLO, Circuit: isup.Circuit{CIC: cc.cic}})
		c.stats.Unexpected++
		c.refusedIAM(p, ci, 0, reasonBlockedLocally)
		return
	}
	switch {
	case cc.block&blkRemoteHW != 0:
		c.rejectIAM(p, ci, isup.CauseCircuitNotAvailable, "circuit hardware-blocked by the far end")
		return
	case pr.group.Direction == OutgoingOnly:
		c.rejectIAM(p, ci, isup.CauseCircuitNotAvailable, "circuit group "+pr.group.Name+" is outgoing only")
		return
	case cc.pend&(pendRSC|pendGRS) != 0:
		c.rejectIAM(p, ci, isup.CauseCircuitNotAvailable, "circuit reset in progress")
		return
	}
	if c.draining {
		c.rejectIAM(p, ci, isup.CauseTemporaryFailure, "gateway stopping (draining)")
		return
	}
	if h := c.hooks.AdmitIncoming; h != nil && !h(pr.group.DPC) {
		c.stats.Shed++
		c.rejectIAM(p, ci, isup.CauseSwitchingCongestion, "inbound congestion or Code Yellow")
		return
	}
	cl := c.newCall(ci, false, nil)
	c.stats.CallsIn++
	c.observe(Observation{Kind: ObsCallStarted, PC: pr.group.DPC, Call: cl.id})
	cl.iam = m
	if cc := m.NatureOfConnection.ContinuityCheck(); cc == 1 || cc == 2 {
		cl.phase = phWaitCOT
		c.startTimer(ci, tT8)
		return
	}
	c.offer(p, cl)
}

// rejectIAM releases an incoming seizure before any call exists for a host;
// reason is for the operator's log.
func (c *core) rejectIAM(p int, ci int32, cause uint8, reason string) {
	c.refusedIAM(p, ci, cause, reason)
	cc := &c.circuits[ci]
	cc.state = csIncoming
	c.newEpoch(ci)
	c.refresh(ci)
	c.sendREL(p, ci, cause, isup.LocationPublicLocal)
}

func (c *core) offer(p int, cl *call) {
	cc := &c.circuits[cl.circ]
	pr := &c.peers[p]
	iam := cl.iam
	cl.iam = nil
	c.emit(Incoming{Call: cl.id, OPC: pr.group.DPC, Route: pr.group.Name, CIC: cc.cic, IAM: iam})
}

// onCOT ends the wait for a continuity check result.
func (c *core) onCOT(p int, ci int32, m *isup.Continuity) {
	cl := c.circuits[ci].call
	if cl == nil || cl.outgoing || cl.phase != phWaitCOT {
		c.stats.Unexpected++
		return
	}
	c.stopTimer(ci, tT8)
	if m.Indicators.Successful() {
		cl.phase = phSetup
		c.offer(p, cl)
		return
	}
	// Continuity failed: the call is abandoned, the far end releases and may
	// re-test with CCR within T27.
	cl.iam = nil
	c.endCall(cl, Released{Cause: isup.CauseTemporaryFailure, Location: isup.LocationPublicLocal, Remote: true, Reason: "continuity check failed"})
	c.startTimer(ci, tT27)
}

// onBackward handles ACM, CPG, CON and ANM for an outgoing call.
func (c *core) onBackward(p int, ci int32, m isup.Message) {
	cl := c.circuits[ci].call
	if cl == nil || !cl.outgoing {
		c.unexpectedOnIdle(p, ci)
		return
	}
	cl.iam = nil // no repeat attempt after a backward message
	if cl.inSetup {
		cl.inSetup = false
		c.observe(Observation{Kind: ObsBackward, PC: c.peers[p].group.DPC, Call: cl.id, Setup: c.now.Sub(cl.setupFrom), Waited: cl.setupWait})
	}
	switch m.MessageType() {
	case isup.ACM:
		if cl.phase == phSetup {
			c.stopTimer(ci, tT7)
			cl.phase = phAlerting
			c.startTimer(ci, tT9)
		}
		c.emit(CallProgress{Call: cl.id, Owner: cl.owner, Message: m})
	case isup.CPG:
		// Only ACM or CON stop T7 (Q.764 Annex A, Table A.1): a CPG before
		// the ACM leaves the call in set-up, supervised by T7.
		c.emit(CallProgress{Call: cl.id, Owner: cl.owner, Message: m})
	case isup.CON, isup.ANM:
		if cl.phase == phAnswered {
			c.stats.Unexpected++
			return
		}
		c.stopTimer(ci, tT7) // ANM without ACM: answered, nothing left to wait for
		c.stopTimer(ci, tT9)
		cl.phase = phAnswered
		c.emit(Answered{Call: cl.id, Owner: cl.owner, Message: m})
	}
}

// unexpectedOnIdle answers a call message on a circuit with no call: Q.764
// §2.9.5 resets the circuit so both ends agree it is idle.
func (c *core) unexpectedOnIdle(p int, ci int32) {
	c.stats.Unexpected++
	if c.circuits[ci].state == csIdle && c.circuits[ci].pend&pendRSC == 0 {
		c.sendRSC(p, ci, false)
	}
}

// onREL handles a release from the far end.
func (c *core) onREL(p int, ci int32, m *isup.Release) {
	cc := &c.circuits[ci]
	acl := c.receivedACL(p, m)
	c.observe(Observation{Kind: ObsRELReceived, PC: c.peers[p].group.DPC, Variant: c.variant(p), ACL: acl})
	if cl := cc.call; cl != nil {
		c.endCall(cl, Released{Cause: m.Cause.Value, Location: m.Cause.Location, ACL: acl, Remote: true})
	}
	if cc.state == csReleasing && cc.pend&pendRSC == 0 {
		// Collision of REL messages (Q.764 §2.3.1 e), Q.784 test 3.8): theirs is
		// answered with RLC, and the circuit is idle only when the RLC for ours
		// has been received too; T1 and T5 keep running for it.
		c.stats.ReleaseCollisions++
		c.sendRLC(p, cc.cic)
		return
	}
	// Otherwise (a call, our RSC, a held or idle circuit): answer with RLC and
	// the circuit is idle.
	c.endPending(ci, pendRSC)
	c.sendRLC(p, cc.cic)
	c.idle(ci)
}

// sendRLC answers a REL; in ITU it reports the REL's unrecognised parameters
// with cause 99 (see unrecognisedInREL).
func (c *core) sendRLC(p int, cic uint16) {
	m := &isup.ReleaseComplete{Circuit: isup.Circuit{CIC: cic}}
	if len(c.relDiag) > 0 && c.variant(p) == isup.ITU {
		cause := isup.CauseIndicators{Location: isup.LocationPublicLocal, Value: isup.CauseParameterNonExistent, Diagnostics: append([]byte(nil), c.relDiag...)}
		_ = m.Optional.Set(cause)
	}
	c.relDiag = c.relDiag[:0]
	c.send(p, m)
}

// receivedACL is the REL's Automatic Congestion Level if the variant defines
// it: 1-2 in ITU (Q.763, ACL parameter: the other values are spare), 1-3 in
// ANSI (T1.113.3). A spare value is not acted upon, in the spirit of Q.764
// §2.9.5 (what a node does not understand it ignores rather than guesses):
// the REL is handled as if it had no ACL, and counted. Reading a spare value
// as "the highest level" shut all new calls to the point code.
func (c *core) receivedACL(p int, m *isup.Release) isup.AutomaticCongestionLevel {
	if !m.Optional.Has(isup.ParamAutomaticCongestionLevel) {
		return 0
	}
	acl, top := m.ACL(), isup.AutomaticCongestionLevel(2)
	if c.variant(p) == isup.ANSI {
		top = 3
	}
	if acl < 1 || acl > top {
		c.stats.SpareACL++
		return 0
	}
	return acl
}

// onRLC completes a release or a circuit reset.
func (c *core) onRLC(p int, ci int32) {
	cc := &c.circuits[ci]
	switch {
	case c.endPending(ci, pendRSC):
		c.idle(ci)
	case cc.state == csReleasing:
		c.idle(ci)
	case cc.call != nil:
		// RLC without our REL: the far end considers the circuit idle.
		c.stats.RLCWithoutREL++
		c.endCall(cc.call, Released{Cause: isup.CauseNormalUnspecified, Location: isup.LocationPublicLocal, Remote: true, Reason: "RLC without REL"})
		c.idle(ci)
	default:
		c.stats.Unexpected++ // RLC on an idle circuit is discarded
	}
}

// sendREL releases the circuit towards the far end with T1 and T5 running.
func (c *core) sendREL(p int, ci int32, cause, location uint8) {
	c.sendRELWithACL(p, ci, cause, location, 0)
}

func (c *core) sendRELWithACL(p int, ci int32, cause, location uint8, acl isup.AutomaticCongestionLevel) {
	cc := &c.circuits[ci]
	c.stopCallTimers(ci)
	cc.state = csReleasing
	c.refresh(ci)
	rel := c.buildREL(p, cc.cic, cause, location)
	if acl > rel.ACL() {
		if c.variant(p) == isup.ITU && acl > 2 {
			acl = 2
		}
		_ = rel.Optional.Set(acl)
	}
	c.send(p, rel)
	c.startTimer(ci, tT1)
	c.startTimer(ci, tT5)
	// T1 repeats this very REL (Q.764 §2.9.6: "retransmit the release
	// message"): same cause, location, diagnostics and ACL.
	c.sentREL[ci] = rel
}

// buildREL makes a REL, with the Automatic Congestion Level while congestion
// control asks for one (every REL we send, Q.764 §2.11).
func (c *core) buildREL(p int, cic uint16, cause, location uint8) *isup.Release {
	rel := &isup.Release{Circuit: isup.Circuit{CIC: cic}, Cause: isup.NewCause(location, cause)}
	if h := c.hooks.ReleaseACL; h != nil {
		if acl := h(); acl != 0 {
			if c.variant(p) == isup.ITU && acl > 2 {
				acl = 2 // ITU defines levels 1 and 2 only
			}
			_ = rel.Optional.Set(acl)
		}
	}
	return rel
}

// releaseCall ends a call from our side: REL to the network, Released to the host.
func (c *core) releaseCall(cl *call, cause, location uint8, reason string, remote bool) {
	c.releaseCallACL(cl, cause, location, reason, remote, 0)
}

func (c *core) releaseCallACL(cl *call, cause, location uint8, reason string, remote bool, acl isup.AutomaticCongestionLevel) {
	ci := cl.circ
	p := int(c.circuits[ci].peer)
	c.endCall(cl, Released{Cause: cause, Location: location, Remote: remote, Reason: reason})
	c.sendRELWithACL(p, ci, cause, location, acl)
	c.circuits[ci].call = nil
}

func (c *core) callFor(tag uint64, id CallID) (*call, bool) {
	cl, ok := c.calls[id]
	if !ok {
		c.result(tag, id, StatusUnknownCall, "", nil)
	}
	return cl, ok
}

func (c *core) alert(r Alert) {
	cl, ok := c.callFor(r.Tag, r.Call)
	if !ok {
		return
	}
	if cl.outgoing || cl.phase != phSetup {
		c.result(r.Tag, r.Call, StatusInvalidState, "alert needs an incoming call not yet alerted", cl.owner)
		return
	}
	bci := r.BCI
	if bci == 0 {
		bci = isup.NewBackwardCallIndicators(0, 1, 1, true) // subscriber free, ordinary, ISUP all the way
	}
	p := int(c.circuits[cl.circ].peer)
	c.send(p, &isup.AddressComplete{Circuit: isup.Circuit{CIC: c.circuits[cl.circ].cic}, BackwardCall: bci})
	cl.phase, cl.acmSent = phAlerting, true
	c.result(r.Tag, r.Call, StatusOK, "", cl.owner)
}

func (c *core) progress(r Progress) {
	cl, ok := c.callFor(r.Tag, r.Call)
	if !ok {
		return
	}
	if cl.outgoing || cl.phase == phWaitCOT {
		c.result(r.Tag, r.Call, StatusInvalidState, "progress needs an incoming call", cl.owner)
		return
	}
	p := int(c.circuits[cl.circ].peer)
	c.send(p, &isup.CallProgress{Circuit: isup.Circuit{CIC: c.circuits[cl.circ].cic}, Event: r.Event})
	c.result(r.Tag, r.Call, StatusOK, "", cl.owner)
}

func (c *core) answer(r Answer) {
	cl, ok := c.callFor(r.Tag, r.Call)
	if !ok {
		return
	}
	if cl.outgoing || cl.phase == phAnswered || cl.phase == phWaitCOT {
		c.result(r.Tag, r.Call, StatusInvalidState, "answer needs an incoming call not yet answered", cl.owner)
		return
	}
	ci := cl.circ
	p := int(c.circuits[ci].peer)
	cic := isup.Circuit{CIC: c.circuits[ci].cic}
	switch {
	case cl.acmSent:
		c.send(p, &isup.Answer{Circuit: cic})
	case c.variant(p) == isup.ITU:
		c.send(p, &isup.Connect{Circuit: cic, BackwardCall: isup.NewBackwardCallIndicators(0, 1, 1, true)})
	default: // ANSI has no CON: ACM then ANM
		c.send(p, &isup.AddressComplete{Circuit: cic, BackwardCall: isup.NewBackwardCallIndicators(0, 1, 1, true)})
		c.send(p, &isup.Answer{Circuit: cic})
	}
	cl.phase = phAnswered
	c.result(r.Tag, r.Call, StatusOK, "", cl.owner)
}

func (c *core) release(r Release) {
	cl, ok := c.callFor(r.Tag, r.Call)
	if !ok {
		return
	}
	cause := r.Cause
	if cause == 0 {
		cause = isup.CauseNormalClearing
	}
	loc := r.Location
	if loc == 0 {
		loc = isup.LocationPrivateLocal
	}
	owner := cl.owner
	c.result(r.Tag, r.Call, StatusOK, "", owner)
	c.releaseCallACL(cl, cause, loc, "released by host", false, r.ACL)
}

// onSuspendResume supervises SUS/RES on an answered call (T2 user, T6 network).
func (c *core) onSuspendResume(p int, ci int32, m *isup.SuspendResume) {
	cl := c.circuits[ci].call
	if cl == nil || cl.phase != phAnswered {
		c.stats.Unexpected++
		return
	}
	k := tT2
	if m.Indicators.NetworkInitiated() {
		k = tT6
	}
	if m.Kind == isup.SUS {
		c.startTimer(ci, k)
	} else {
		c.stopTimer(ci, tT2)
		c.stopTimer(ci, tT6)
	}
	c.emit(CallProgress{Call: cl.id, Owner: cl.owner, Message: m})
}

// onOLM: the far exchange is overloaded and refuses our call on this circuit.
// The call ends with cause 42 and the circuit is held until T3 (DSI behaviour).
func (c *core) onOLM(p int, ci int32) {
	cc := &c.circuits[ci]
	cl := cc.call
	if cl == nil || !cl.outgoing || cl.phase != phSetup {
		c.stats.Unexpected++
		return
	}
	c.stopCallTimers(ci)
	c.endCall(cl, Released{Cause: isup.CauseSwitchingCongestion, Location: isup.LocationPublicLocal, Remote: true, Reason: "overload (OLM)"})
	cc.state = csHeld
	c.refresh(ci)
	c.startTimer(ci, tT3)
}

// callTimerExpired handles the call timers; false if k is not one.
func (c *core) callTimerExpired(ci int32, k timerKind) bool {
	cc := &c.circuits[ci]
	p := int(cc.peer)
	cl := cc.call
	switch k {
	case tT7: // no backward message for our IAM
		if cl != nil {
			c.observe(Observation{Kind: ObsT7Expired, PC: c.peers[p].group.DPC, Call: cl.id})
			c.releaseCall(cl, isup.CauseNormalUnspecified, isup.LocationPublicLocal, "T7 expired: no backward message", true)
		}
	case tT9: // no answer
		if cl != nil {
			c.releaseCall(cl, isup.CauseNoAnswer, isup.LocationPublicLocal, "T9 expired: no answer", true)
		}
	case tT8: // no COT
		if cl != nil {
			cl.iam = nil
			c.releaseCall(cl, isup.CauseTemporaryFailure, isup.LocationPublicLocal, "T8 expired: no continuity result", true)
		}
	case tT2, tT6: // suspended too long
		if cl != nil {
			c.releaseCall(cl, isup.CauseRecoveryOnTimerExpiry, isup.LocationPublicLocal, k.String()+" expired: suspended too long", true)
		}
	case tT1:
		rel, ok := c.sentREL[ci]
		if !ok { // cannot happen: sendREL stores it and only stopping T1 drops it
			rel = c.buildREL(p, cc.cic, isup.CauseNormalUnspecified, isup.LocationPublicLocal)
		}
		c.send(p, rel)
		c.startTimer(ci, tT1)
		c.sentREL[ci] = rel
	case tT5: // the far end never answered our REL: reset the circuit
		c.stopTimer(ci, tT1)
		cc.state = csIdle
		c.newEpoch(ci)
		c.emit(Alarm{Kind: AlarmCircuitReset, PC: c.peers[p].group.DPC, CIC: cc.cic, Text: "T5 expired: no RLC for REL, circuit reset"})
		c.sendRSC(p, ci, true)
	case tT3: // overload hold over: clear the circuit
		cc.state = csIdle
		c.newEpoch(ci)
		c.sendREL(p, ci, isup.CauseSwitchingCongestion, isup.LocationPublicLocal)
	case tT27: // no re-test after a failed continuity check
		cc.state = csIdle
		c.newEpoch(ci)
		c.sendRSC(p, ci, false)
	default:
		return false
	}
	return true
}
