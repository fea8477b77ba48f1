package stack

import (
	"container/heap"
	"time"
)

// timerKind names an ISUP timer.
type timerKind uint8

const (
	tT1 timerKind = iota
	tT2
	tT3
	tT4 // per destination, not per circuit
	tT5
	tT6
	tT7
	tT8
	tT9
	tT12
	tT13
	tT14
	tT15
	tT16
	tT17
	tT18
	tT19
	tT20
	tT21
	tT22
	tT23
	tT27
	tT28
	tT33
	numTimers
)

var timerNames = [numTimers]string{"T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T12", "T13", "T14",
	"T15", "T16", "T17", "T18", "T19", "T20", "T21", "T22", "T23", "T27", "T28", "T33"}

func (k timerKind) String() string { return timerNames[k] }

func (t *Timers) duration(k timerKind) time.Duration {
	return [numTimers]time.Duration{t.T1, t.T2, t.T3, t.T4, t.T5, t.T6, t.T7, t.T8, t.T9, t.T12, t.T13, t.T14,
		t.T15, t.T16, t.T17, t.T18, t.T19, t.T20, t.T21, t.T22, t.T23, t.T27, t.T28, t.T33}[k]
}

// timerSeqs holds one generation number per timer kind of a circuit; it is
// allocated the first time a circuit runs a timer, so idle circuits carry none.
type timerSeqs [numTimers]uint32

// timerEntry is a pending expiry. It is stale (ignored on expiry) when its
// circuit's generation for the kind has moved on: stopping a timer is O(1).
type timerEntry struct {
	at   int64  // UnixNano
	ord  uint64 // insertion order: equal deadlines fire first-started first
	circ int32  // circuit index, or -1-peer for per-destination timers
	kind timerKind
	seq  uint32
}

type timerHeap []timerEntry

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].ord < h[j].ord
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// startTimer (re)starts a circuit timer.
func (c *core) startTimer(ci int32, k timerKind) {
	cc := &c.circuits[ci]
	if cc.timers == nil {
		cc.timers = new(timerSeqs)
	}
	cc.timers[k]++
	cc.running |= 1 << k
	c.timerOrd++
	heap.Push(&c.timerq, timerEntry{at: c.now.Add(c.cfg.Timers.duration(k)).UnixNano(), ord: c.timerOrd, circ: ci, kind: k, seq: cc.timers[k]})
}

// stopTimer stops a circuit timer; a stopped timer's entry expires as a no-op.
func (c *core) stopTimer(ci int32, k timerKind) {
	cc := &c.circuits[ci]
	if cc.running&(1<<k) == 0 {
		return
	}
	cc.running &^= 1 << k
	cc.timers[k]++
}

func (c *core) timerRunning(ci int32, k timerKind) bool {
	return c.circuits[ci].running&(1<<k) != 0
}

// stopCallTimers stops the timers that belong to a call on the circuit.
func (c *core) stopCallTimers(ci int32) {
	for _, k := range []timerKind{tT1, tT2, tT5, tT6, tT7, tT8, tT9, tT27, tT33} {
		c.stopTimer(ci, k)
	}
}

// startPeerTimer and stopPeerTimer handle per-destination timers (T4).
func (c *core) startPeerTimer(p int, k timerKind) {
	pr := &c.peers[p]
	pr.timerSeq[k]++
	pr.running |= 1 << k
	c.timerOrd++
	heap.Push(&c.timerq, timerEntry{at: c.now.Add(c.cfg.Timers.duration(k)).UnixNano(), ord: c.timerOrd, circ: int32(-1 - p), kind: k, seq: pr.timerSeq[k]})
}

func (c *core) stopPeerTimer(p int, k timerKind) {
	pr := &c.peers[p]
	if pr.running&(1<<k) != 0 {
		pr.running &^= 1 << k
		pr.timerSeq[k]++
	}
}

// nextDeadline returns when the earliest pending timer fires (ok false if none).
func (c *core) nextDeadline() (time.Time, bool) {
	if len(c.timerq) == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, c.timerq[0].at), true
}

// advance moves the core's clock to now and fires every timer due by then, in
// deadline order.
func (c *core) advance(now time.Time) {
	limit := now.UnixNano()
	for len(c.timerq) > 0 && c.timerq[0].at <= limit {
		e := heap.Pop(&c.timerq).(timerEntry)
		// A timer restarted on expiry counts from its own deadline, not from
		// whenever the loop got round to it.
		if at := time.Unix(0, e.at); at.After(c.now) {
			c.now = at
		}
		if e.circ < 0 {
			p := int(-1 - e.circ)
			pr := &c.peers[p]
			if pr.running&(1<<e.kind) == 0 || pr.timerSeq[e.kind] != e.seq {
				continue
			}
			pr.running &^= 1 << e.kind
			c.peerTimerExpired(p, e.kind)
			continue
		}
		cc := &c.circuits[e.circ]
		if cc.running&(1<<e.kind) == 0 || cc.timers[e.kind] != e.seq {
			continue
		}
		cc.running &^= 1 << e.kind
		c.stats.TimerExpiries[e.kind]++
		c.timerExpired(e.circ, e.kind)
	}
	if now.After(c.now) {
		c.now = now
	}
}

// pendingTimers counts running timers (for tests and the randomised scenario).
func (c *core) pendingTimers() int {
	n := 0
	for i := range c.circuits {
		for k := timerKind(0); k < numTimers; k++ {
			if c.circuits[i].running&(1<<k) != 0 {
				n++
			}
		}
	}
	for i := range c.peers {
		if c.peers[i].running != 0 {
			n++
		}
	}
	return n
}

// TimerName names timer kind i for metrics ("T1", "T5", ...).
func TimerName(i int) string {
	if i < 0 || i >= int(numTimers) {
		return "T?"
	}
	return timerKind(i).String()
}
