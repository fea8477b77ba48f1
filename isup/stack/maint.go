package stack

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// StatusNotAcknowledged: a maintenance request went out and the far end did
// not acknowledge it within the first (repeat) timer. The local effect stays
// (a local block is in force, a reset circuit is idle here) and the stack goes
// on repeating the message per Q.764 until the long timer raises its alarm.
const StatusNotAcknowledged Status = 0x010F

func init() {
	statusText[StatusNotAcknowledged] = "not acknowledged by the far end in time"
}

// MaintenanceOutcome is the answer to Stack.Maintain: OK once the far end
// acknowledged (Ack names the acknowledgement), StatusNotAcknowledged when the
// repeat timer expired first, or the refusal of the request itself.
type MaintenanceOutcome struct {
	Status Status
	Detail string
	Sent   isup.MessageType // the message sent: BLO, UBL, CGB, CGU, RSC, GRS or CQM
	Ack    isup.MessageType // BLA, UBA, CGBA, CGUA, RLC, GRA or CQR (0 when none came)
	// States is the far end's answer to a CQM, one per CIC of the range.
	States []QueriedState
	// Waited is how long the stack waited for the acknowledgement (stack clock).
	Waited time.Duration
}

// QueriedState is one circuit's state from a CQR (Q.763 §3.14): the coded
// octet and its meaning.
type QueriedState struct {
	CIC   uint16
	Coded byte
	Text  string
}

// maintTagBase marks the tags Maintain uses ("MT" in the top 16 bits).
const maintTagBase = uint64(0x4d54) << 48

// maintWaiter is a maintenance request awaiting the far end's acknowledgement.
type maintWaiter struct {
	r        Maintenance
	p        int
	head     int32
	sent     isup.MessageType
	deadline time.Time
	timer    timerKind // the repeat timer whose expiry ends the wait
	started  time.Time
	done     func(MaintenanceOutcome)
}

// maintState is the core's bookkeeping for Maintain; nil until the first
// request, so a stack nobody maintains pays one pointer test per step.
type maintState struct {
	waiters []*maintWaiter
	tags    uint64
	// inner is the emit the query interceptor wraps (set once, when the first
	// CQM is sent; the interceptor then stays).
	inner func(Event)
}

// Maintain carries out a maintenance request like Submit(Maintenance) and calls
// done (on the loop goroutine: it must not block) with its outcome: at once if
// the request is refused, otherwise when the far end acknowledges, or when the
// repeat timer (T12, T14, T16, T18, T20, T22 or T28) expires first. It gives up
// queueing when ctx ends.
func (s *Stack) Maintain(ctx context.Context, r Maintenance, done func(MaintenanceOutcome)) error {
	if done == nil {
		return errors.New("stack: Maintain needs a done function")
	}
	it := item{fn: func(c *core) {
		c.advance(s.now()) // the wait is measured from now, not from the loop's last step
		c.maintain(r, done)
	}}
	select {
	case s.outbound <- it:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sentFor names the message a request sends and the timer that bounds its wait
// (the choice made by core.maintenance and setLocalBlocking).
func sentFor(r Maintenance) (isup.MessageType, timerKind) {
	group := r.Range > 0 || r.Hardware
	switch r.Op {
	case OpBlock:
		if group {
			return isup.CGB, tT18
		}
		return isup.BLO, tT12
	case OpUnblock:
		if group {
			return isup.CGU, tT20
		}
		return isup.UBL, tT14
	case OpReset:
		if r.Range > 0 {
			return isup.GRS, tT22
		}
		return isup.RSC, tT16
	case OpQuery:
		return isup.CQM, tT28
	}
	return 0, 0
}

var ackOf = map[isup.MessageType]isup.MessageType{
	isup.BLO: isup.BLA, isup.UBL: isup.UBA, isup.CGB: isup.CGBA, isup.CGU: isup.CGUA,
	isup.RSC: isup.RLC, isup.GRS: isup.GRA, isup.CQM: isup.CQR,
}

// maxMaintWaiters bounds the maintenance requests awaiting acknowledgement:
// each lives up to its repeat timer, and hosts must not pile them up.
const maxMaintWaiters = 1024

func (c *core) maintain(r Maintenance, done func(MaintenanceOutcome)) {
	if c.maint == nil {
		c.maint = &maintState{}
	}
	m := c.maint
	if len(m.waiters) >= maxMaintWaiters {
		done(MaintenanceOutcome{Status: StatusBadRequest, Detail: fmt.Sprintf("%d maintenance requests already await their acknowledgement; try later", maxMaintWaiters)})
		return
	}
	m.tags++
	r.Tag = maintTagBase | m.tags
	sent, timer := sentFor(r)
	// The request's own Result tells refusal from success; catch it so that
	// it does not reach the hosts' sink as a stray result.
	var res *Result
	outer := c.emit
	c.emit = func(e Event) {
		if x, ok := e.(Result); ok && x.Tag == r.Tag {
			res = &x
			return
		}
		outer(e)
	}
	if c.trace != nil {
		c.trace.request(c, r)
	}
	c.maintenance(r)
	c.emit = outer
	if c.trace != nil && res != nil {
		c.trace.event(c, *res)
	}
	if res == nil || res.Status != StatusOK || sent == 0 {
		out := MaintenanceOutcome{Status: StatusBadRequest, Detail: "no result", Sent: sent}
		if res != nil {
			out.Status, out.Detail = res.Status, res.Detail
		}
		done(out)
		return
	}
	p, _, _ := c.destination(Outseize{DPC: r.DPC, Route: r.Route})
	head, _ := c.circuitAt(p, r.CIC)
	w := &maintWaiter{r: r, p: p, head: head, sent: sent, timer: timer, started: c.now,
		deadline: c.now.Add(c.cfg.Timers.duration(timer)), done: done}
	m.waiters = append(m.waiters, w)
	if sent == isup.CQM && m.inner == nil {
		// The CQR and T28 are reported as alarms: watch them go by.
		m.inner = c.emit
		c.emit = c.maintIntercept
	}
}

// maintIntercept passes every event on and completes CQM waiters from the
// query-result alarms (CQR received, or T28 expired).
func (c *core) maintIntercept(e Event) {
	m := c.maint
	inner := m.inner
	if a, ok := e.(Alarm); ok && a.Kind == AlarmQueryResult {
		// Every query waiting on this range ends: a second CQM restarted the
		// one T28, so one answer (or expiry) answers both.
		keep := m.waiters[:0]
		var done []*maintWaiter
		for _, w := range m.waiters {
			if w.sent == isup.CQM && c.peers[w.p].group.DPC == a.PC && w.r.CIC == a.CIC {
				done = append(done, w)
			} else {
				keep = append(keep, w)
			}
		}
		for i := len(keep); i < len(m.waiters); i++ {
			m.waiters[i] = nil
		}
		m.waiters = keep
		for _, w := range done {
			out := MaintenanceOutcome{Status: StatusOK, Sent: isup.CQM, Ack: isup.CQR, Waited: c.now.Sub(w.started)}
			if strings.HasPrefix(a.Text, "T28") {
				out = MaintenanceOutcome{Status: StatusNotAcknowledged, Sent: isup.CQM, Detail: a.Text, Waited: out.Waited}
			} else {
				out.States = parseQueried(a.Text)
			}
			w.done(out)
		}
	}
	inner(e)
}

// parseQueried reads the "cic:hex" list onCQR puts in its alarm text.
func parseQueried(text string) []QueriedState {
	var out []QueriedState
	for _, f := range strings.Fields(text) {
		cic, hx, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		n, err1 := strconv.ParseUint(cic, 10, 16)
		v, err2 := strconv.ParseUint(hx, 16, 8)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, QueriedState{CIC: uint16(n), Coded: byte(v), Text: DescribeCircuitState(byte(v))})
	}
	return out
}

// DescribeCircuitState reads a Circuit State Indicator octet (Q.763 §3.14):
// bits BA maintenance blocking, DC call processing (1 incoming busy, 2
// outgoing busy, 3 idle), FE hardware blocking. With DC = 0, BA = 0 is
// transient and BA = 3 unequipped. "Locally" is the answering exchange's view.
func DescribeCircuitState(b byte) string {
	ba, dc, fe := b&3, (b>>2)&3, (b>>4)&3
	if dc == 0 {
		switch ba {
		case 0:
			return "transient"
		case 3:
			return "unequipped"
		}
		return fmt.Sprintf("spare 0x%02x", b)
	}
	s := map[uint8]string{isup.CallStateIncomingBusy: "incoming busy", isup.CallStateOutgoingBusy: "outgoing busy", isup.CallStateIdle: "idle"}[dc]
	blk := [...]string{"", "locally", "remotely", "locally and remotely"}
	if ba != 0 {
		s += ", maintenance blocked " + blk[ba]
	}
	if fe != 0 {
		s += ", hardware blocked " + blk[fe]
	}
	return s
}

// maintCheck completes the waiters whose acknowledgement came or whose repeat
// timer expired. The core calls it after each step (advance).
func (c *core) maintCheck() {
	m := c.maint
	if m == nil || len(m.waiters) == 0 {
		return
	}
	keep := m.waiters[:0]
	var finished []func()
	for _, w := range m.waiters {
		out, ok := c.maintDone(w)
		if !ok {
			keep = append(keep, w)
			continue
		}
		done := w.done
		finished = append(finished, func() { done(out) })
	}
	for i := len(keep); i < len(m.waiters); i++ {
		m.waiters[i] = nil
	}
	m.waiters = keep
	for _, f := range finished {
		f()
	}
}

// maintDone reports whether w is over and how.
func (c *core) maintDone(w *maintWaiter) (MaintenanceOutcome, bool) {
	out := MaintenanceOutcome{Status: StatusOK, Sent: w.sent, Ack: ackOf[w.sent], Waited: c.now.Sub(w.started)}
	cc := &c.circuits[w.head]
	acked := false
	switch w.sent {
	case isup.BLO, isup.UBL:
		bit := pendBLO
		if w.sent == isup.UBL {
			bit = pendUBL
		}
		if cc.pend&bit != 0 {
			break
		}
		// A UBL sent before the BLA came (or a BLO before the UBA) ends the
		// wait too (Q.764 §2.8.2.1): say so rather than claim an acknowledgement.
		if blocked := cc.block&blkLocalMaint != 0; blocked != (w.sent == isup.BLO) {
			out.Status, out.Ack = StatusInvalidState, 0
			out.Detail = fmt.Sprintf("%s superseded by a later request on CIC %d before the far end acknowledged it", w.sent, cc.cic)
		}
		acked = true
	case isup.RSC:
		acked = cc.pend&pendRSC == 0
	case isup.CGB, isup.CGU, isup.GRS:
		// Done when no group message of the kind awaits its acknowledgement at
		// the range's head; a partial one leaves the rest pending (and repeated).
		_, pending := c.groupOps[groupKey{w.head, w.sent}]
		acked = !pending
	case isup.CQM:
		acked = false // completed by maintIntercept
	}
	if acked {
		return out, true
	}
	if !c.now.Before(w.deadline) {
		out.Status, out.Ack = StatusNotAcknowledged, 0
		out.Detail = fmt.Sprintf("%s expired: no %s for %s; the stack keeps repeating %s and alarms at the long timer",
			w.timer, ackOf[w.sent], w.sent, w.sent)
		return out, true
	}
	return out, false
}

// CircuitInfo is one circuit as an operator sees it.
type CircuitInfo struct {
	Group       string
	DPC         mtp.PointCode
	CIC         uint16
	State       string // idle, outgoing busy, incoming busy, releasing, held
	LocalMaint  bool
	LocalHW     bool
	RemoteMaint bool
	RemoteHW    bool
	// Awaiting lists the acknowledgements the circuit waits for (BLA, UBA,
	// RLC, GRA, CGBA, CGUA, CQR).
	Awaiting []string
	Call     CallID // 0 when none
	Outgoing bool
	Since    time.Time // when the state, blocking or awaiting last changed
}

// Busy reports whether a call holds the circuit.
func (ci CircuitInfo) Busy() bool {
	return ci.State == "outgoing busy" || ci.State == "incoming busy"
}

// Blocked reports any blocking, local or remote.
func (ci CircuitInfo) Blocked() bool {
	return ci.LocalMaint || ci.LocalHW || ci.RemoteMaint || ci.RemoteHW
}

// CircuitFilter selects circuits; zero fields select all.
type CircuitFilter struct {
	Group       string
	DPC         mtp.PointCode
	First, Last uint16 // CIC range (Last 0: First only when First is set)
	// State: idle, busy, outgoing, incoming, releasing, held, blocked,
	// local, remote or awaiting.
	State string
	// Offset and Limit page the rows (Limit 0: all, negative: none): the loop builds only the
	// rows asked for, so listing 100,000 circuits a page at a time stays cheap.
	Offset, Limit int
}

// CircuitList is the answer to Circuits.
type CircuitList struct {
	Rows   []CircuitInfo  // the page of matching circuits
	Total  int            // matching circuits, all pages
	Groups []GroupSummary // every group the filter's Group or DPC selects
}

// CircuitStates are the words CircuitFilter.State accepts.
var CircuitStates = []string{"idle", "busy", "outgoing", "incoming", "releasing", "held", "blocked", "local", "remote", "awaiting"}

// ValidCircuitState reports whether s is a state filter word ("" is).
func ValidCircuitState(s string) bool {
	if s == "" {
		return true
	}
	for _, k := range CircuitStates {
		if k == s {
			return true
		}
	}
	return false
}

func (f CircuitFilter) matchesState(ci CircuitInfo) bool {
	switch f.State {
	case "":
		return true
	case "idle":
		return ci.State == "idle" && !ci.Blocked()
	case "busy":
		return ci.Busy()
	case "outgoing":
		return ci.State == "outgoing busy"
	case "incoming":
		return ci.State == "incoming busy"
	case "blocked":
		return ci.Blocked()
	case "local":
		return ci.LocalMaint || ci.LocalHW
	case "remote":
		return ci.RemoteMaint || ci.RemoteHW
	case "awaiting":
		return len(ci.Awaiting) > 0
	}
	return ci.State == f.State
}

// GroupSummary counts one circuit group's circuits.
type GroupSummary struct {
	Group                                 string
	DPC                                   mtp.PointCode
	Variant                               isup.Variant // how its point codes are written (3-8-3 ITU, 8-8-8 ANSI)
	Total, Idle, Outgoing, Incoming       int
	Releasing, LocallyBlocked, RemBlocked int
	Awaiting                              int
}

// Circuits lists the circuits the filter selects, in group and CIC order, and
// a summary of every group the filter's group or DPC selects. It waits for the
// loop.
func (s *Stack) Circuits(ctx context.Context, f CircuitFilter) (CircuitList, error) {
	ch := make(chan CircuitList, 1)
	select {
	case s.outbound <- item{fn: func(c *core) { ch <- c.circuitList(f) }}:
	case <-ctx.Done():
		return CircuitList{}, ctx.Err()
	}
	select {
	case l := <-ch:
		return l, nil
	case <-ctx.Done():
		return CircuitList{}, ctx.Err()
	}
}

// listCircuits is circuitList's rows and groups.
func (c *core) listCircuits(f CircuitFilter) ([]CircuitInfo, []GroupSummary) {
	l := c.circuitList(f)
	return l.Rows, l.Groups
}

func (c *core) circuitList(f CircuitFilter) CircuitList {
	last := f.Last
	if last == 0 {
		last = f.First
	}
	var out CircuitList
	for p := range c.peers {
		pr := &c.peers[p]
		g := pr.group
		if f.Group != "" && g.Name != f.Group || f.DPC != 0 && g.DPC != f.DPC {
			continue
		}
		for ci := pr.first; ci < pr.first+pr.count; ci++ {
			cic := c.circuits[ci].cic
			if f.First != 0 && (cic < f.First || cic > last) {
				continue
			}
			info := c.circuitInfo(ci)
			if !f.matchesState(info) {
				continue
			}
			if out.Total >= f.Offset && (f.Limit == 0 || f.Limit > 0 && len(out.Rows) < f.Limit) {
				out.Rows = append(out.Rows, info)
			}
			out.Total++
		}
		out.Groups = append(out.Groups, c.groupSummary(p))
	}
	return out
}

func (c *core) circuitInfo(ci int32) CircuitInfo {
	cc := &c.circuits[ci]
	pr := &c.peers[cc.peer]
	info := CircuitInfo{
		Group: pr.group.Name, DPC: pr.group.DPC, CIC: cc.cic,
		State:       [...]string{"idle", "outgoing busy", "incoming busy", "releasing", "held"}[cc.state],
		LocalMaint:  cc.block&blkLocalMaint != 0,
		LocalHW:     cc.block&blkLocalHW != 0,
		RemoteMaint: cc.block&blkRemoteMaint != 0,
		RemoteHW:    cc.block&blkRemoteHW != 0,
		Since:       c.stampOf(ci),
	}
	if cl := cc.call; cl != nil {
		info.Call, info.Outgoing = cl.id, cl.outgoing
	}
	for _, pb := range [...]struct {
		bit  uint8
		name string
	}{{pendBLO, "BLA"}, {pendUBL, "UBA"}, {pendRSC, "RLC"}, {pendGRS, "GRA"}} {
		if cc.pend&pb.bit != 0 {
			info.Awaiting = append(info.Awaiting, pb.name)
		}
	}
	for _, k := range [...]isup.MessageType{isup.CGB, isup.CGU} {
		if _, ok := c.groupOps[groupKey{ci, k}]; ok {
			info.Awaiting = append(info.Awaiting, ackOf[k].String())
		}
	}
	if c.timerRunning(ci, tT28) {
		info.Awaiting = append(info.Awaiting, "CQR")
	}
	return info
}

// stamps remember when each circuit's state last changed, for "time in
// state": a key of state, blocking and awaiting bits and the time it took it.
type stamps struct {
	key []uint32
	at  []int64
}

// stamp notes a circuit's state after a change (refresh calls it).
func (c *core) stamp(ci int32) {
	if c.stamps.key == nil {
		c.stamps.key = make([]uint32, len(c.circuits))
		c.stamps.at = make([]int64, len(c.circuits))
		start := c.now.UnixNano()
		for i := range c.stamps.at {
			c.stamps.at[i] = start
		}
	}
	cc := &c.circuits[ci]
	k := uint32(cc.state) | uint32(cc.block)<<8 | uint32(cc.pend)<<16
	if c.stamps.key[ci] != k {
		c.stamps.key[ci] = k
		c.stamps.at[ci] = c.now.UnixNano()
	}
}

func (c *core) stampOf(ci int32) time.Time {
	if c.stamps.at == nil {
		return c.now
	}
	return time.Unix(0, c.stamps.at[ci])
}

// groupSummaries counts every group's circuits (for the published snapshot:
// per-group metrics that never wait for the loop).
func (c *core) groupSummaries() []GroupSummary {
	out := make([]GroupSummary, len(c.peers))
	for p := range c.peers {
		out[p] = c.groupSummary(p)
	}
	return out
}

// groupSummary counts one group's circuits.
func (c *core) groupSummary(p int) GroupSummary {
	pr := &c.peers[p]
	sum := GroupSummary{Group: pr.group.Name, DPC: pr.group.DPC, Variant: pr.group.Variant, Total: int(pr.count)}
	for ci := pr.first; ci < pr.first+pr.count; ci++ {
		cc := &c.circuits[ci]
		switch {
		case cc.state == csOutgoing:
			sum.Outgoing++
		case cc.state == csIncoming:
			sum.Incoming++
		case cc.state == csReleasing:
			sum.Releasing++
		case cc.state == csIdle && cc.block == 0:
			sum.Idle++
		}
		if cc.block&(blkLocalMaint|blkLocalHW) != 0 {
			sum.LocallyBlocked++
		}
		if cc.block&(blkRemoteMaint|blkRemoteHW) != 0 {
			sum.RemBlocked++
		}
		if cc.pend != 0 || c.groupPending(ci) {
			sum.Awaiting++
		}
	}
	return sum
}

// Groups returns every circuit group's summary as the loop published it last
// (at most a second old), without waiting for the loop.
func (s *Stack) Groups() []GroupSummary { return s.Stats().Groups }

// groupPending reports a CGB or CGU awaiting its acknowledgement at circuit ci.
func (c *core) groupPending(ci int32) bool {
	if len(c.groupOps) == 0 {
		return false
	}
	_, b := c.groupOps[groupKey{ci, isup.CGB}]
	_, u := c.groupOps[groupKey{ci, isup.CGU}]
	return b || u
}
