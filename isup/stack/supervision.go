package stack

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// MaintenanceOp is a circuit supervision action asked for by an operator.
type MaintenanceOp uint8

// Maintenance operations.
const (
	OpBlock   MaintenanceOp = iota + 1 // BLO, or CGB for a range or hardware blocking (32 circuits a CGB)
	OpUnblock                          // UBL, or CGU
	OpReset                            // RSC, or GRS for a range
	OpQuery                            // CQM
)

// Maintenance acts on CIC..CIC+Range of a circuit group. Its Result says whether
// the message went out; the far end's acknowledgement stops the timers, and an
// unacknowledged one raises an alarm.
type Maintenance struct {
	Tag      uint64
	Op       MaintenanceOp
	DPC      mtp.PointCode
	Route    string
	CIC      uint16
	Range    uint8
	Hardware bool // hardware-failure oriented (blocking only)
}

func (Maintenance) request() {}

// groupOp remembers a group message awaiting acknowledgement.
type groupOp struct {
	msg isup.Message
}

// groupKey names a pending group message by the circuit index of its first
// CIC and its kind (CGB, CGU, GRS): each kind has its own timers there.
type groupKey struct {
	head int32
	kind isup.MessageType
}

func (c *core) maintenance(r Maintenance) {
	p, st, detail := c.destination(Outseize{DPC: r.DPC, Route: r.Route})
	if st != StatusOK {
		c.result(r.Tag, 0, st, detail, nil)
		return
	}
	head, ok := c.circuitAt(p, r.CIC)
	if !ok {
		c.result(r.Tag, 0, StatusCircuitUnavailable, fmt.Sprintf("CIC %d is not in the group", r.CIC), nil)
		return
	}
	if int(r.CIC)+int(r.Range) > int(c.variant(p).MaxCIC()) {
		c.result(r.Tag, 0, StatusBadRequest, "range beyond the largest CIC", nil)
		return
	}
	switch r.Op {
	case OpBlock, OpUnblock:
		c.setLocalBlocking(p, head, r.CIC, r.Range, r.Hardware, r.Op == OpBlock)
	case OpReset:
		if r.Range == 0 {
			c.resetCircuitLocally(p, head, "circuit reset by maintenance")
			c.sendRSC(p, head, false)
		} else {
			if r.Range > 31 {
				c.result(r.Tag, 0, StatusBadRequest, "a group reset covers at most 32 circuits", nil)
				return
			}
			c.sendGRS(p, r.CIC, r.Range)
		}
	case OpQuery:
		if r.Range > 31 {
			c.result(r.Tag, 0, StatusBadRequest, "a query covers at most 32 circuits", nil)
			return
		}
		c.send(p, &isup.CircuitQuery{Circuit: isup.Circuit{CIC: r.CIC}, RangeAndStatus: isup.RangeAndStatus{Range: r.Range}})
		c.startTimer(head, tT28)
	default:
		c.result(r.Tag, 0, StatusBadRequest, "unknown maintenance operation", nil)
		return
	}
	c.result(r.Tag, 0, StatusOK, "", nil)
}

// setLocalBlocking blocks or unblocks CIC..CIC+rng locally and tells the far end.
func (c *core) setLocalBlocking(p int, head int32, cic uint16, rng uint8, hw, block bool) {
	bit := blkLocalMaint
	if hw {
		bit = blkLocalHW
	}
	if rng == 0 && !hw {
		cc := &c.circuits[head]
		if block {
			cc.block |= bit
			c.endPending(head, pendUBL)
			c.sendBLO(p, head)
		} else {
			cc.block &^= bit | blkUnequipped
			c.endPending(head, pendBLO)
			c.sendUBL(p, head)
		}
		c.refresh(head)
		c.blockingChanged()
		return
	}
	last := int(rng)
	if rng == 0 {
		last = 0 // hardware blocking of one circuit: a group message for it alone
	}
	var cis []int32
	for i := 0; i <= last; i++ {
		ci, ok := c.circuitAt(p, cic+uint16(i))
		if !ok {
			continue
		}
		cc := &c.circuits[ci]
		if block {
			cc.block |= bit
			if hw && cc.call != nil {
				// Hardware failure: calls on the circuit end without REL (Q.764 §2.8.2).
				c.endCall(cc.call, Released{Cause: isup.CauseTemporaryFailure, Location: isup.LocationPublicLocal, Reason: "hardware blocking"})
				c.idle(ci)
			}
		} else {
			cc.block &^= bit | blkUnequipped
		}
		c.refresh(ci)
		cis = append(cis, ci)
	}
	kind := isup.CGB
	if !block {
		kind = isup.CGU
	}
	c.sendGroupSupervision(p, kind, hw, cis)
	c.blockingChanged()
}

// maxGroupCircuits is the most circuits one CGB or CGU may act on: Q.763
// §3.43 allows a range of up to 255 but at most 32 status bits set to 1.
const maxGroupCircuits = 32

// sendGroupSupervision sends CGB or CGU for the circuits cis of peer p, in
// CIC order, split into messages of at most 32 circuits, each awaiting its
// own acknowledgement (T18/T19, T20/T21) at its first circuit. A group message
// covers at least two circuits: one circuit alone is range 1 with only its
// own status bit set.
func (c *core) sendGroupSupervision(p int, kind isup.MessageType, hw bool, cis []int32) {
	typ := isup.MaintenanceOriented
	if hw {
		typ = isup.HardwareFailureOriented
	}
	t1, t2 := tT18, tT19
	if kind == isup.CGU {
		t1, t2 = tT20, tT21
	}
	cis = slices.Clone(cis)
	slices.SortFunc(cis, func(a, b int32) int { return cmp.Compare(c.circuits[a].cic, c.circuits[b].cic) })
	for len(cis) > 0 {
		head := cis[0]
		first := c.circuits[head].cic
		n := 1
		for n < len(cis) && n < maxGroupCircuits && c.circuits[cis[n]].cic-first <= 255 {
			n++
		}
		rng := uint8(c.circuits[cis[n-1]].cic - first)
		if rng == 0 {
			rng = 1
		}
		rs := isup.NewRangeAndStatus(rng, true)
		for _, ci := range cis[:n] {
			rs.SetBit(int(c.circuits[ci].cic-first), true)
		}
		m := &isup.GroupSupervision{Kind: kind, Circuit: isup.Circuit{CIC: first}, Type: typ, RangeAndStatus: rs}
		c.groupOps[groupKey{head, kind}] = groupOp{msg: m}
		c.send(p, m)
		c.startTimer(head, t1)
		c.startTimer(head, t2)
		cis = cis[n:]
	}
}

// sendBLO runs the blocking procedure on one circuit (Q.764 §2.8.2.1): BLO,
// T12 to repeat it and, from the first BLO until the BLA, T13 to alert.
func (c *core) sendBLO(p int, ci int32) {
	cc := &c.circuits[ci]
	cc.pend |= pendBLO
	c.send(p, &isup.Simple{Kind: isup.BLO, Circuit: isup.Circuit{CIC: cc.cic}})
	c.startTimer(ci, tT12)
	if !c.timerRunning(ci, tT13) {
		c.startTimer(ci, tT13)
	}
}

// sendUBL runs the unblocking procedure on one circuit (Q.764 §2.8.2.1): UBL,
// T14 to repeat it and, from the first UBL until the UBA, T15 to alert.
func (c *core) sendUBL(p int, ci int32) {
	cc := &c.circuits[ci]
	cc.pend |= pendUBL
	c.send(p, &isup.Simple{Kind: isup.UBL, Circuit: isup.Circuit{CIC: cc.cic}})
	c.startTimer(ci, tT14)
	if !c.timerRunning(ci, tT15) {
		c.startTimer(ci, tT15)
	}
}

func (c *core) blockingChanged() {
	if c.persist != nil {
		c.persist()
	}
}

// resetCircuitLocally ends whatever is on a circuit without signaling: the first
// half of RSC, GRS and hardware blocking.
func (c *core) resetCircuitLocally(p int, ci int32, reason string) {
	cc := &c.circuits[ci]
	if cl := cc.call; cl != nil {
		c.endCall(cl, Released{Cause: isup.CauseTemporaryFailure, Location: isup.LocationPublicLocal, Remote: true, Reason: reason})
	}
	c.stopCallTimers(ci) // T3 included
	c.newEpoch(ci)
	cc.state = csIdle
	c.refresh(ci)
}

// sendRSC resets one circuit: T16 and T17, or T17 alone after T5 (Q.764 §2.9.3.1).
func (c *core) sendRSC(p int, ci int32, afterT5 bool) {
	cc := &c.circuits[ci]
	cc.pend |= pendRSC
	c.refresh(ci)
	c.send(p, &isup.Simple{Kind: isup.RSC, Circuit: isup.Circuit{CIC: cc.cic}})
	if !afterT5 {
		c.startTimer(ci, tT16)
	}
	c.startTimer(ci, tT17)
}

// sendGRS resets CIC..CIC+rng (at most 32 circuits); the GRA ends it.
func (c *core) sendGRS(p int, cic uint16, rng uint8) {
	head, ok := c.circuitAt(p, cic)
	if !ok {
		return
	}
	for i := 0; i <= int(rng); i++ {
		if ci, ok := c.circuitAt(p, cic+uint16(i)); ok {
			c.resetCircuitLocally(p, ci, "circuit group reset")
			c.circuits[ci].pend |= pendGRS
			c.refresh(ci)
		}
	}
	// A GRS pending for the same head is replaced: the new one covers its
	// circuits too, so that the one GRA awaited (and T22's repeats) answers
	// every circuit that awaits it.
	if old, ok := c.groupOps[groupKey{head, isup.GRS}]; ok {
		rng = max(rng, old.msg.(*isup.GroupReset).RangeAndStatus.Range)
	}
	m := &isup.GroupReset{Kind: isup.GRS, Circuit: isup.Circuit{CIC: cic}, RangeAndStatus: isup.RangeAndStatus{Range: rng}}
	c.groupOps[groupKey{head, isup.GRS}] = groupOp{msg: m}
	c.send(p, m)
	c.startTimer(head, tT22)
	c.startTimer(head, tT23)
}

// resetGroup sends GRS for every circuit of a peer, in runs of consecutive CICs
// of at most 32.
func (c *core) resetGroup(p int) {
	pr := &c.peers[p]
	pr.resetDone = true
	var runStart, prev uint16
	n := 0
	flush := func() {
		if n > 0 {
			c.sendGRS(p, runStart, uint8(n-1))
		}
	}
	for i := pr.first; i < pr.first+pr.count; i++ {
		cic := c.circuits[i].cic
		if n > 0 && (cic != prev+1 || n == 32) {
			flush()
			n = 0
		}
		if n == 0 {
			runStart = cic
		}
		prev = cic
		n++
	}
	flush()
}

func (c *core) onBLO(p int, ci int32) {
	cc := &c.circuits[ci]
	cc.block |= blkRemoteMaint
	c.send(p, &isup.Simple{Kind: isup.BLA, Circuit: isup.Circuit{CIC: cc.cic}})
	if cl := cc.call; cl != nil && cl.outgoing && cl.phase == phSetup && cl.iam != nil {
		// Blocked under an IAM with no backward message: release it here and repeat
		// the attempt on another circuit (Q.764 §2.8.2.1).
		c.repeatAttempt(p, cl, "circuit blocked, no circuit for a repeat attempt")
		c.sendREL(p, ci, isup.CauseNormalUnspecified, isup.LocationPublicLocal)
	}
	c.refresh(ci)
}

func (c *core) onUBL(p int, ci int32) {
	cc := &c.circuits[ci]
	cc.block &^= blkRemoteMaint
	c.send(p, &isup.Simple{Kind: isup.UBA, Circuit: isup.Circuit{CIC: cc.cic}})
	c.refresh(ci)
}

// iamOnBlocked applies Q.764 §2.8.2.3 xiv) to an IAM that is not a test call
// and seizes an idle circuit: it removes the far end's blocking, maintenance,
// hardware or both, and is processed normally unless the circuit is blocked
// here. Then it is discarded (and counted) and the far end is told again:
// BLO for our maintenance blocking, a hardware failure oriented CGB for our
// hardware blocking (a BLO would block it for maintenance at the far end,
// and our hardware CGU would never lift that). It reports whether the IAM
// was discarded.
func (c *core) iamOnBlocked(p int, ci int32, m *isup.InitialAddress) bool {
	cc := &c.circuits[ci]
	if cc.state != csIdle || m.CallingPartyCategory == isup.CategoryTest {
		return false
	}
	cc.block &^= blkRemoteMaint | blkRemoteHW
	c.refresh(ci)
	if cc.block&(blkLocalMaint|blkLocalHW) == 0 {
		return false
	}
	c.stats.Unexpected++
	c.refusedIAM(p, ci, 0, reasonBlockedLocally)
	c.reannounceBlocking(p, []int32{ci})
	return true
}

// reannounceBlocking tells the far end again of our blocking of the circuits
// cis, each in its own kind: BLO for maintenance blocking,
// hardware failure oriented CGBs for hardware blocking. Both run the normal
// procedure and await their acknowledgement.
func (c *core) reannounceBlocking(p int, cis []int32) {
	var hw []int32
	for _, ci := range cis {
		b := c.circuits[ci].block
		if b&blkLocalMaint != 0 {
			c.sendBLO(p, ci)
		}
		if b&blkLocalHW != 0 {
			hw = append(hw, ci)
		}
	}
	c.sendGroupSupervision(p, isup.CGB, true, hw)
}

// pendingTimers are the two timers (repeat, alert) of each request awaiting an
// acknowledgement.
var pendingTimers = map[uint8][2]timerKind{pendBLO: {tT12, tT13}, pendUBL: {tT14, tT15}, pendRSC: {tT16, tT17}}

// endPending ends a request awaiting acknowledgement (BLO, UBL, RSC) and stops
// its timers; it reports whether the request was pending.
func (c *core) endPending(ci int32, bit uint8) bool {
	cc := &c.circuits[ci]
	if cc.pend&bit == 0 {
		return false
	}
	cc.pend &^= bit
	t := pendingTimers[bit]
	c.stopTimer(ci, t[0])
	c.stopTimer(ci, t[1])
	return true
}

// onBLA ends our blocking procedure. A BLA that answers no BLO of ours is
// counted and, per Q.764 §2.8.2.3, answered with UBL when the circuit is not
// blocked here (the far end believes it is), discarded when it is.
func (c *core) onBLA(p int, ci int32) {
	if c.endPending(ci, pendBLO) {
		return
	}
	c.stats.Unexpected++
	if c.circuits[ci].block&blkLocalMaint == 0 && c.circuits[ci].pend&pendUBL == 0 {
		c.sendUBL(p, ci)
	}
}

// onUBA ends our unblocking procedure. A UBA that answers no UBL of ours is
// counted and, per Q.764 §2.8.2.3, answered with BLO when the circuit is
// blocked here (the far end believes it is not), discarded when it is not.
func (c *core) onUBA(p int, ci int32) {
	if c.endPending(ci, pendUBL) {
		return
	}
	c.stats.Unexpected++
	if c.circuits[ci].block&blkLocalMaint != 0 && c.circuits[ci].pend&pendBLO == 0 {
		c.sendBLO(p, ci)
	}
}

// onRSC: the far end resets one circuit.
func (c *core) onRSC(p int, ci int32) {
	cc := &c.circuits[ci]
	moved := c.takeForRepeat(ci)
	c.resetCircuitLocally(p, ci, "circuit reset by the far end")
	// Q.764 §2.9.3.1 d): the reset lifts the far end's blocking, hardware
	// blocking too (Q.763 RSC: "if remotely blocked, ... removed").
	cc.block &^= blkRemoteMaint | blkRemoteHW
	c.endPending(ci, pendRSC) // both ends reset at once: their RSC completes ours
	// Q.764 §2.9.3.1 c): a locally blocked circuit answers with its blocking
	// message, then RLC; that message is acknowledged, and repeated until it
	// is (T12/T13, or T18/T19 for the hardware CGB).
	c.reannounceBlocking(p, []int32{ci})
	c.send(p, &isup.ReleaseComplete{Circuit: isup.Circuit{CIC: cc.cic}})
	c.refresh(ci)
	c.repeatAfterReset(p, moved, cc.cic, cc.cic)
}

// onCCR: the far end asks for a continuity (re-)check. The loop-back itself is
// in the media path, outside a signaling gateway: acknowledge so the far end
// can run its check. A re-check after a failed COT ends our wait for it: CCR
// stops T27 (Q.764 §2.1.8 and Table A.1); the far end's REL then idles the
// circuit.
func (c *core) onCCR(p int, ci int32) {
	c.stopTimer(ci, tT27)
	c.send(p, &isup.Simple{Kind: isup.LPA, Circuit: isup.Circuit{CIC: c.circuits[ci].cic}})
}

// onUCIC: the far end has no such circuit (Q.764 §2.12). It is taken out of
// service, an attempt on it is repeated elsewhere and the operator alerted.
// It is not blocked as an operator's block would be: that one is kept
// across restarts and announced with BLO after every reset, and a BLO for a
// circuit the far end has not got only earns another UCIC, T12 after T12.
// What the far end says of its own equipment lasts until it shows otherwise:
// any other message on the circuit, or an operator's unblock, brings the
// circuit back. Requests awaiting an answer it cannot give end here.
func (c *core) onUCIC(p int, ci int32) {
	cc := &c.circuits[ci]
	if cl := cc.call; cl != nil && cl.outgoing && cl.phase == phSetup && cl.iam != nil {
		c.repeatAttempt(p, cl, "circuit unequipped at the far end")
	} else if cl != nil {
		c.endCall(cl, Released{Cause: isup.CauseCircuitNotAvailable, Location: isup.LocationPublicLocal, Remote: true, Reason: "circuit unequipped at the far end"})
	}
	c.stopCallTimers(ci)
	cc.state = csIdle
	for _, bit := range []uint8{pendBLO, pendUBL, pendRSC} {
		c.endPending(ci, bit)
	}
	cc.block |= blkUnequipped
	c.refresh(ci)
	c.emit(Alarm{Kind: AlarmUnequippedCircuit, PC: c.peers[p].group.DPC, CIC: cc.cic, Text: "UCIC received: circuit out of service"})
}

// equippedAgain brings back a circuit the far end said it had not got, once
// it signals on it. (The 0x33 alarm is not a lasting one: nothing to clear.)
func (c *core) equippedAgain(ci int32) {
	c.circuits[ci].block &^= blkUnequipped
	c.refresh(ci)
}

// onGroupReset handles GRS (reset our circuits, answer GRA) and GRA (our reset is
// done; learn the far end's blocking and re-announce ours).
func (c *core) onGroupReset(p int, ci int32, m *isup.GroupReset) {
	if r := m.RangeAndStatus.Range; r == 0 || r > 31 {
		// Q.763 §3.43: a group reset covers 2 to 32 circuits (range 1 to 31;
		// range 0 is reserved for them). Anything else is discarded unanswered.
		c.stats.Unexpected++
		return
	}
	if m.Kind == isup.GRS {
		gra := &isup.GroupReset{Kind: isup.GRA, Circuit: m.Circuit, RangeAndStatus: isup.NewRangeAndStatus(m.RangeAndStatus.Range, true)}
		var moved []*call
		var hw []int32
		c.forRange(p, m.CIC, m.RangeAndStatus.Range, func(i int, ci int32) {
			cc := &c.circuits[ci]
			moved = append(moved, c.takeForRepeat(ci)...)
			c.resetCircuitLocally(p, ci, "circuit group reset by the far end")
			cc.block &^= blkRemoteMaint | blkRemoteHW
			c.endPending(ci, pendRSC)
			if cc.block&blkLocalMaint != 0 {
				gra.RangeAndStatus.SetBit(i, true)
			}
			if cc.block&blkLocalHW != 0 {
				hw = append(hw, ci)
			}
			c.refresh(ci)
		})
		c.send(p, gra)
		if pr := &c.peers[p]; !pr.available {
			// A GRS can come in before MTP's resume of its sender reaches
			// us (M3UA: DAVA on stream 0, the GRS on another, handled
			// concurrently): our GRA then goes into a paused MTP. Sent
			// again at resume, else the far end waits T22 with its circuits
			// unusable (Q.764 §2.9.3.1: it repeats the GRS only at T22).
			if pr.pausedGRAs == nil {
				pr.pausedGRAs = map[uint16]*isup.GroupReset{}
			}
			pr.pausedGRAs[m.CIC] = gra
		}
		// The GRA's status says only maintenance blocking (Q.763 §3.43): our
		// hardware blocking follows it as hardware failure oriented CGBs
		// (Q.764 §2.9.3.2, as OpenSS7 does).
		c.sendGroupSupervision(p, isup.CGB, true, hw)
		c.repeatAfterReset(p, moved, m.CIC, m.CIC+uint16(m.RangeAndStatus.Range))
		return
	}
	op, ok := c.groupOps[groupKey{ci, isup.GRS}]
	if !ok {
		c.stats.Unexpected++
		return
	}
	delete(c.groupOps, groupKey{ci, isup.GRS})
	c.stopTimer(ci, tT22)
	c.stopTimer(ci, tT23)
	// The reset is over for every circuit our GRS named, even when the GRA
	// answers an earlier, shorter GRS of the same head (sendGRS widened it):
	// no circuit may keep awaiting a GRA that no GRS is pending for.
	c.forRange(p, m.CIC, op.msg.(*isup.GroupReset).RangeAndStatus.Range, func(_ int, ci int32) {
		c.circuits[ci].pend &^= pendGRS
		c.refresh(ci)
	})
	var ours []int32
	c.forRange(p, m.CIC, m.RangeAndStatus.Range, func(i int, ci int32) {
		cc := &c.circuits[ci]
		cc.pend &^= pendGRS
		if m.RangeAndStatus.Bit(i) {
			cc.block |= blkRemoteMaint
		} else {
			cc.block &^= blkRemoteMaint
		}
		ours = append(ours, ci)
		c.refresh(ci)
	})
	// Q.764 §2.9.3.2: our local blocking is re-announced after the reset.
	c.reannounceBlocking(p, ours)
}

// forRange calls f for each of our circuits in CIC..CIC+rng with its offset.
func (c *core) forRange(p int, cic uint16, rng uint8, f func(i int, ci int32)) {
	for i := 0; i <= int(rng); i++ {
		if ci, ok := c.circuitAt(p, cic+uint16(i)); ok {
			f(i, ci)
		}
	}
}

// onGroupSupervision handles CGB/CGU (act on the circuits whose status bit is
// set, acknowledge with the same bits) and CGBA/CGUA (our request is done).
func (c *core) onGroupSupervision(p int, ci int32, m *isup.GroupSupervision) {
	rs := m.RangeAndStatus
	if rs.Status == nil || rs.Range == 0 || rs.Ones() > maxGroupCircuits {
		// Q.763 §3.43: range 0 is reserved for these messages, and no more
		// than 32 status bits may be set. Discarded without acting on it.
		c.stats.Unexpected++
		return
	}
	hw := m.Type.Kind() == uint8(isup.HardwareFailureOriented)
	bit := blkRemoteMaint
	if hw {
		bit = blkRemoteHW
	}
	switch m.Kind {
	case isup.CGB, isup.CGU:
		ack := &isup.GroupSupervision{Kind: isup.CGBA, Circuit: m.Circuit, Type: m.Type, RangeAndStatus: isup.NewRangeAndStatus(rs.Range, true)}
		if m.Kind == isup.CGU {
			ack.Kind = isup.CGUA
		}
		n := 0
		c.forRange(p, m.CIC, rs.Range, func(i int, ci int32) {
			if !rs.Bit(i) {
				return
			}
			cc := &c.circuits[ci]
			if m.Kind == isup.CGB {
				cc.block |= bit
				if hw && cc.call != nil {
					c.resetCircuitLocally(p, ci, "hardware blocking by the far end")
				} else if cl := cc.call; cl != nil && cl.outgoing && cl.phase == phSetup && cl.iam != nil {
					c.repeatAttempt(p, cl, "circuit blocked, no circuit for a repeat attempt")
					c.sendREL(p, ci, isup.CauseNormalUnspecified, isup.LocationPublicLocal)
				}
			} else {
				cc.block &^= bit
			}
			c.refresh(ci)
			ack.RangeAndStatus.SetBit(i, true)
			n++
		})
		c.send(p, ack)
		if m.Kind == isup.CGB && n > 0 {
			c.emit(Alarm{Kind: AlarmRemoteBlocked, PC: c.peers[p].group.DPC, CIC: m.CIC, Range: rs.Range, Text: fmt.Sprintf("far end blocked %d circuits", n)})
		}
	case isup.CGBA, isup.CGUA:
		c.onGroupAck(p, ci, m, hw)
	}
}

// onGroupAck checks a CGBA or CGUA against the CGB or CGU it answers, circuit
// by circuit (Q.764 §2.8.2.3):
//   - a circuit asked for and not acknowledged stays pending: T18 (T20)
//     repeats the message for those circuits alone, T19 (T21) alerts;
//   - a circuit acknowledged but not asked for, whose local state says
//     otherwise, is corrected: CGU for one not blocked here after a CGBA,
//     CGB for one blocked here after a CGUA. The same holds for an
//     acknowledgement that answers nothing of ours (no request, another
//     range or another type); any other one is discarded.
//
// Each mismatch is counted as unexpected.
func (c *core) onGroupAck(p int, ci int32, m *isup.GroupSupervision, hw bool) {
	block := m.Kind == isup.CGBA
	key := groupKey{ci, isup.CGB}
	t1, t2, opposite := tT18, tT19, isup.CGU
	if !block {
		key.kind, t1, t2, opposite = isup.CGU, tT20, tT21, isup.CGB
	}
	local := blkLocalMaint
	if hw {
		local = blkLocalHW
	}
	rs := m.RangeAndStatus
	var asked isup.RangeAndStatus // empty: the acknowledgement answers no request
	op, ok := c.groupOps[key]
	if ok {
		req := op.msg.(*isup.GroupSupervision)
		if req.Type.Kind() == m.Type.Kind() && req.RangeAndStatus.Range == rs.Range {
			asked = req.RangeAndStatus
		} else {
			ok = false
		}
	}
	if !ok {
		c.stats.Unexpected++
	}
	missing := isup.NewRangeAndStatus(rs.Range, true)
	unacked := 0
	var wrong []int32
	for i := 0; i <= int(rs.Range); i++ {
		switch a, b := asked.Bit(i), rs.Bit(i); {
		case a && !b:
			missing.SetBit(i, true)
			unacked++
		case !a && b:
			// A correction already awaiting its acknowledgement is not sent
			// again: its timer repeats it, and a far end answering it with the
			// wrong acknowledgement cannot start a ping-pong.
			if cj, found := c.circuitAt(p, m.CIC+uint16(i)); found && (c.circuits[cj].block&local != 0) != block && !c.inPendingGroup(cj, opposite) {
				wrong = append(wrong, cj)
			}
		}
	}
	if ok {
		if unacked > 0 || len(wrong) > 0 {
			c.stats.Unexpected++
		}
		if unacked == 0 {
			delete(c.groupOps, key)
			c.stopTimer(ci, t1)
			c.stopTimer(ci, t2)
		} else {
			again := *op.msg.(*isup.GroupSupervision)
			again.RangeAndStatus = missing
			c.groupOps[key] = groupOp{msg: &again}
		}
	}
	c.sendGroupSupervision(p, opposite, hw, wrong)
}

// onCQM answers a circuit group query with each circuit's state.
func (c *core) onCQM(p int, ci int32, m *isup.CircuitQuery) {
	rng := m.RangeAndStatus.Range
	if rng > 31 {
		c.stats.Unexpected++
		return
	}
	states := make(isup.CircuitStateIndicator, int(rng)+1)
	for i := range states {
		states[i] = isup.NewCircuitState(3, 0, 0) // unequipped unless found below
	}
	c.forRange(p, m.CIC, rng, func(i int, ci int32) { states[i] = c.circuitState(ci) })
	c.send(p, &isup.CircuitQueryResponse{Circuit: m.Circuit, RangeAndStatus: isup.RangeAndStatus{Range: rng}, States: states})
}

// circuitState codes a circuit for a CQR (Q.763 §3.14).
func (c *core) circuitState(ci int32) byte {
	cc := &c.circuits[ci]
	both := func(local, remote uint8) uint8 {
		v := uint8(0)
		if cc.block&local != 0 {
			v |= isup.BlockingLocal
		}
		if cc.block&remote != 0 {
			v |= isup.BlockingRemote
		}
		return v
	}
	if c.transient(ci) {
		return isup.NewCircuitState(0, 0, 0)
	}
	maint, hw := both(blkLocalMaint, blkRemoteMaint), both(blkLocalHW, blkRemoteHW)
	var cp uint8
	switch cc.state {
	case csIdle:
		cp = isup.CallStateIdle
	case csIncoming:
		cp = isup.CallStateIncomingBusy
	case csOutgoing:
		cp = isup.CallStateOutgoingBusy
	default:
		return isup.NewCircuitState(0, 0, 0) // transient
	}
	return isup.NewCircuitState(maint, cp, hw)
}

// transient reports whether a circuit waits for the far end in a way Q.764
// §2.9.3.2 calls transient: an IAM sent and no backward message yet (a
// REL sent and no RLC is csReleasing), or a (group) (un)blocking, a reset or
// a group reset sent and not yet acknowledged.
func (c *core) transient(ci int32) bool {
	cc := &c.circuits[ci]
	if cl := cc.call; cl != nil && cl.outgoing && cl.phase == phSetup {
		return true
	}
	return cc.pend != 0 || c.inPendingGroup(ci, isup.CGB) || c.inPendingGroup(ci, isup.CGU)
}

// inPendingGroup reports whether a CGB or CGU (kind) awaiting its
// acknowledgement acts on circuit ci.
func (c *core) inPendingGroup(ci int32, kind isup.MessageType) bool {
	cc := &c.circuits[ci]
	for key, op := range c.groupOps {
		if key.kind != kind || c.circuits[key.head].peer != cc.peer {
			continue
		}
		m := op.msg.(*isup.GroupSupervision)
		if i := int(cc.cic) - int(m.CIC); i >= 0 && i <= int(m.RangeAndStatus.Range) && m.RangeAndStatus.Bit(i) {
			return true
		}
	}
	return false
}

// onCQR reports the far end's view of the circuits we queried.
func (c *core) onCQR(p int, ci int32, m *isup.CircuitQueryResponse) {
	if !c.timerRunning(ci, tT28) {
		c.stats.Unexpected++
		return
	}
	c.stopTimer(ci, tT28)
	c.observe(Observation{Kind: ObsQueryAnswered, PC: c.peers[p].group.DPC})
	var sb strings.Builder
	for i := range m.States {
		fmt.Fprintf(&sb, "%d:%02x ", int(m.CIC)+i, m.States[i])
	}
	c.emit(Alarm{Kind: AlarmQueryResult, PC: c.peers[p].group.DPC, CIC: m.CIC, Range: m.RangeAndStatus.Range, Text: strings.TrimSpace(sb.String())})
}

// supervisionTimerExpired handles T12-T23, T16/T17 and T28.
func (c *core) supervisionTimerExpired(ci int32, k timerKind) {
	cc := &c.circuits[ci]
	p := int(cc.peer)
	pc := c.peers[p].group.DPC
	resend := func(m isup.Message, again, stop timerKind, long bool) {
		if long {
			c.stopTimer(ci, stop)
			c.emit(Alarm{Kind: AlarmBlockingUnanswered, PC: pc, CIC: cc.cic, Text: k.String() + " expired: " + m.MessageType().String() + " unacknowledged"})
		}
		c.send(p, m)
		c.startTimer(ci, again)
	}
	simple := func(t isup.MessageType) isup.Message {
		return &isup.Simple{Kind: t, Circuit: isup.Circuit{CIC: cc.cic}}
	}
	switch k {
	case tT12:
		resend(simple(isup.BLO), tT12, tT12, false)
	case tT13:
		resend(simple(isup.BLO), tT13, tT12, true)
	case tT14:
		resend(simple(isup.UBL), tT14, tT14, false)
	case tT15:
		resend(simple(isup.UBL), tT15, tT14, true)
	case tT16:
		resend(simple(isup.RSC), tT16, tT16, false)
	case tT17:
		c.stopTimer(ci, tT16)
		c.emit(Alarm{Kind: AlarmCircuitReset, PC: pc, CIC: cc.cic, Text: "T17 expired: RSC unacknowledged"})
		c.send(p, simple(isup.RSC))
		c.startTimer(ci, tT17)
	case tT18, tT19, tT20, tT21, tT22, tT23:
		kind := isup.CGB
		if k == tT20 || k == tT21 {
			kind = isup.CGU
		} else if k == tT22 || k == tT23 {
			kind = isup.GRS
		}
		op, ok := c.groupOps[groupKey{ci, kind}]
		if !ok {
			return
		}
		long := k == tT19 || k == tT21 || k == tT23
		short := map[timerKind]timerKind{tT19: tT18, tT21: tT20, tT23: tT22}[k]
		if long {
			c.stopTimer(ci, short)
			alarm := AlarmBlockingUnanswered
			if k == tT23 {
				alarm = AlarmGroupResetUnanswered
			}
			c.emit(Alarm{Kind: alarm, PC: pc, CIC: cc.cic, Text: k.String() + " expired: " + kind.String() + " unacknowledged"})
		}
		c.send(p, op.msg)
		c.startTimer(ci, k)
	case tT28:
		c.observe(Observation{Kind: ObsQueryUnanswered, PC: pc})
		c.emit(Alarm{Kind: AlarmQueryResult, PC: pc, CIC: cc.cic, Text: "T28 expired: no answer to CQM"})
	}
}

// timerExpired dispatches a circuit timer.
func (c *core) timerExpired(ci int32, k timerKind) {
	if !c.callTimerExpired(ci, k) {
		c.supervisionTimerExpired(ci, k)
	}
}
