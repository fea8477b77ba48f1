package stack

import (
	"sync/atomic"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// callState is a circuit's call-processing state (Q.764 §2.9.3.2).
type callState uint8

const (
	csIdle      callState = iota
	csOutgoing            // our call: IAM sent
	csIncoming            // their call: IAM received
	csReleasing           // REL sent, RLC awaited (transient)
	csHeld                // OLM received: held until T3
)

// Blocking bits (maintenance and hardware, local and remote), and the far
// end's word (UCIC) that it has no such circuit.
const (
	blkLocalMaint uint8 = 1 << iota
	blkRemoteMaint
	blkLocalHW
	blkRemoteHW
	blkUnequipped
)

// Acknowledgements a circuit is waiting for (the supervision transients).
const (
	pendBLO uint8 = 1 << iota // BLA awaited
	pendUBL                   // UBA awaited
	pendRSC                   // RLC to our RSC awaited
	pendGRS                   // GRA awaited (this circuit is in a reset range)
)

// Flags.
const (
	flagControl   uint8 = 1 << iota // we control this CIC in a dual seizure
	flagOutgoing                    // the group's direction lets us seize it
	flagInIdle                      // on one of the peer's idle lists
	flagRangeHead                   // first CIC of a pending group message (its timers live here)
)

// circuit is one CIC towards one adjacent exchange. Idle circuits carry no
// pointers but the nil ones, so 100,000 of them stay small.
type circuit struct {
	call       *call
	timers     *timerSeqs
	running    uint32 // bit per timerKind
	prev, next int32  // idle list links
	cic        uint16
	peer       uint16
	state      callState
	block      uint8
	pend       uint8
	flags      uint8
}

// idleList is an intrusive FIFO of circuit indexes: taking from the head and
// returning to the tail gives least-recently-used hunting.
type idleList struct{ head, tail int32 }

// peer is one adjacent exchange and its circuit group.
type peer struct {
	group    Group
	cicIndex []int32 // CIC -> circuit index, -1 when not ours
	first    int32   // index of the group's first circuit
	count    int32
	idleCtl  idleList // idle circuits we control: hunted first
	idleOth  idleList // idle circuits the other side controls
	// available is the MTP view (pause/resume); userPart the ISUP view (DUPU, T4).
	available bool
	userPart  bool
	resetDone bool
	// resetOnResume: a takeover found the destination paused; its group is
	// reset when it resumes.
	resetOnResume bool
	// pausedGRAs are the GRAs sent while the destination was paused, by
	// CIC (one per group reset, so bounded by the group): MTP may have
	// dropped them, and they are sent again at resume (repeatPausedGRAs).
	pausedGRAs map[uint16]*isup.GroupReset
	running    uint32
	timerSeq   [numTimers]uint32
	// edge is what the edge reads without the loop (edgeHunt).
	edge peerEdge
}

// peerEdge mirrors, for the edge's circuit check, what the loop alone may
// read: how many circuits wait on the idle lists, whether the destination
// can be reached, and how many outseizes the edge let through to it that
// still wait in the outbound queue (each will hunt one of those circuits).
type peerEdge struct {
	idle, queued atomic.Int32
	closed       atomic.Bool // MTP paused or the ISUP user part unavailable
}

// published mirrors the peer's reachability for the edge; called after
// every change of available or userPart.
func (pr *peer) published() { pr.edge.closed.Store(!pr.available || !pr.userPart) }

// weControl applies the glare rule to a CIC.
func weControl(g Group, own mtp.PointCode, cic uint16) bool {
	switch g.Glare {
	case GlareOdd:
		return cic%2 == 1
	case GlareEven:
		return cic%2 == 0
	case GlareAll:
		return true
	case GlareNone:
		return false
	}
	return (own > g.DPC) == (cic%2 == 0)
}

// buildCircuits lays out the circuit table from the groups.
func (c *core) buildCircuits() {
	total := 0
	for _, g := range c.cfg.Groups {
		for _, r := range g.CICs {
			total += int(r.Last-r.First) + 1
		}
	}
	c.circuits = make([]circuit, 0, total)
	c.peers = make([]peer, len(c.cfg.Groups))
	for pi, g := range c.cfg.Groups {
		pr := &c.peers[pi]
		pr.group = g
		pr.available, pr.userPart = !c.cfg.AwaitResume, true
		pr.published()
		pr.idleCtl, pr.idleOth = idleList{-1, -1}, idleList{-1, -1}
		pr.cicIndex = make([]int32, int(g.Variant.MaxCIC())+1)
		for i := range pr.cicIndex {
			pr.cicIndex[i] = -1
		}
		pr.first = int32(len(c.circuits))
		for _, r := range g.CICs {
			for cic := int(r.First); cic <= int(r.Last); cic++ {
				if pr.cicIndex[cic] >= 0 {
					continue // overlapping ranges: once is enough
				}
				cc := circuit{cic: uint16(cic), peer: uint16(pi), prev: -1, next: -1}
				if weControl(g, c.cfg.OPC, uint16(cic)) {
					cc.flags |= flagControl
				}
				if g.Direction != IncomingOnly {
					cc.flags |= flagOutgoing
				}
				pr.cicIndex[cic] = int32(len(c.circuits))
				c.circuits = append(c.circuits, cc)
			}
		}
		pr.count = int32(len(c.circuits)) - pr.first
		c.peerByPC[g.DPC] = pi
		if g.Name != "" {
			c.peerByName[g.Name] = pi
		}
	}
	for i := range c.circuits {
		c.refresh(int32(i))
	}
}

// usable reports whether a circuit may be seized for a new outgoing call.
func (cc *circuit) usable() bool {
	return cc.state == csIdle && cc.block == 0 && cc.pend&(pendRSC|pendGRS) == 0 && cc.flags&flagOutgoing != 0
}

// refresh puts the circuit on or takes it off its idle list after any change.
func (c *core) refresh(ci int32) {
	c.stamp(ci)
	cc := &c.circuits[ci]
	in := cc.flags&flagInIdle != 0
	if cc.usable() == in {
		return
	}
	pr := &c.peers[cc.peer]
	l := &pr.idleOth
	if cc.flags&flagControl != 0 {
		l = &pr.idleCtl
	}
	if in {
		c.unlink(l, ci)
		cc.flags &^= flagInIdle
		pr.edge.idle.Add(-1)
		return
	}
	cc.prev, cc.next = l.tail, -1
	if l.tail >= 0 {
		c.circuits[l.tail].next = ci
	} else {
		l.head = ci
	}
	l.tail = ci
	cc.flags |= flagInIdle
	pr.edge.idle.Add(1)
}

func (c *core) unlink(l *idleList, ci int32) {
	cc := &c.circuits[ci]
	if cc.prev >= 0 {
		c.circuits[cc.prev].next = cc.next
	} else {
		l.head = cc.next
	}
	if cc.next >= 0 {
		c.circuits[cc.next].prev = cc.prev
	} else {
		l.tail = cc.prev
	}
	cc.prev, cc.next = -1, -1
}

// hunt picks the least recently used idle circuit, those we control first.
func (c *core) hunt(p int) (int32, bool) {
	pr := &c.peers[p]
	if pr.idleCtl.head >= 0 {
		return pr.idleCtl.head, true
	}
	if pr.idleOth.head >= 0 {
		return pr.idleOth.head, true
	}
	return -1, false
}

// huntOutside is hunt skipping the circuits with CICs lo..hi (none if lo > hi).
// Walking the lists is linear, but it serves only repeat attempts after a reset.
func (c *core) huntOutside(p int, lo, hi uint16) (int32, bool) {
	if lo > hi {
		return c.hunt(p)
	}
	pr := &c.peers[p]
	for _, l := range [2]idleList{pr.idleCtl, pr.idleOth} {
		for ci := l.head; ci >= 0; ci = c.circuits[ci].next {
			if cic := c.circuits[ci].cic; cic < lo || cic > hi {
				return ci, true
			}
		}
	}
	return -1, false
}

// circuitAt finds a peer's circuit by CIC.
func (c *core) circuitAt(p int, cic uint16) (int32, bool) {
	idx := c.peers[p].cicIndex
	if int(cic) >= len(idx) || idx[cic] < 0 {
		return -1, false
	}
	return idx[cic], true
}

func (c *core) variant(p int) isup.Variant { return c.peers[p].group.Variant }
