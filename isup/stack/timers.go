package stack

import "time"

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

// timerSeqs holds one generation number per timer kind of a circuit, and the
// circuit's epoch; it is allocated the first time a circuit runs a timer, so
// idle circuits carry none.
type timerSeqs struct {
	seq [numTimers]uint32
	// epoch moves on each time the circuit is seized or returns to idle. A call
	// timer remembers the epoch it started in and is dead in any other, so a
	// timer nobody stopped can never act on a later call (issue: T3 outlived
	// its call and released the next one).
	epoch uint32
}

// callTimers are the timers that belong to one call or one release of a
// circuit (Q.764 Annex A: T1-T3, T5-T9, T27, T33); stopCallTimers stops them
// and the epoch guards them. The supervision timers (BLO, RSC, GRS, CGB, CQM)
// outlive calls and are not in it.
const callTimers uint32 = 1<<tT1 | 1<<tT2 | 1<<tT3 | 1<<tT5 | 1<<tT6 | 1<<tT7 | 1<<tT8 | 1<<tT9 | 1<<tT27 | 1<<tT33

// timerEntry is a pending expiry. It is stale (ignored on expiry) when its
// circuit's generation for the kind has moved on: stopping a timer is O(1).
type timerEntry struct {
	at    int64  // UnixNano
	ord   uint64 // insertion order: equal deadlines fire first-started first
	circ  int32  // circuit index, or -1-peer for per-destination timers
	kind  timerKind
	seq   uint32
	epoch uint32 // the circuit's epoch when a call timer started
}

// timerHeap is a min-heap of expiries by deadline, then start order. It is
// typed rather than container/heap, which boxes every entry it is given.
type timerHeap []timerEntry

func (h timerHeap) less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].ord < h[j].ord
}

func (h *timerHeap) push(e timerEntry) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *timerHeap) pop() timerEntry {
	q := *h
	e := q[0]
	n := len(q) - 1
	q[0] = q[n]
	*h = q[:n]
	h.down(0)
	return e
}

func (h timerHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h timerHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// startTimer (re)starts a circuit timer.
func (c *core) startTimer(ci int32, k timerKind) {
	cc := &c.circuits[ci]
	if cc.timers == nil {
		cc.timers = new(timerSeqs)
	}
	cc.timers.seq[k]++
	cc.running |= 1 << k
	c.pushTimer(timerEntry{at: c.now.Add(c.cfg.Timers.duration(k)).UnixNano(), circ: ci, kind: k, seq: cc.timers.seq[k], epoch: cc.timers.epoch})
}

// pushTimer queues an expiry. Stopped timers leave stale entries behind, and
// long timers (T7, T9) stay queued for tens of seconds: at thousands of calls
// a second the queue would hold millions of dead entries, and each doubling
// of it stalled the loop. So once it doubles since the last sweep, the stale
// entries go (amortised O(1) per timer; the queue stays within twice the
// running timers, plus a floor).
func (c *core) pushTimer(e timerEntry) {
	if len(c.timerq) >= c.timerqMax {
		c.sweepTimers()
	}
	c.timerOrd++
	e.ord = c.timerOrd
	c.timerq.push(e)
}

// timerFloor is the queue length below which no sweep is worth it.
const timerFloor = 4096

func (c *core) sweepTimers() {
	live := c.timerq[:0]
	for _, e := range c.timerq {
		if c.timerLive(e) {
			live = append(live, e)
		}
	}
	c.timerq = live
	c.timerq.init()
	c.timerqMax = 2*len(live) + timerFloor
}

// timerLive reports whether an entry is still its timer's current run. A call
// timer from an earlier epoch of its circuit is dead, and is marked stopped.
func (c *core) timerLive(e timerEntry) bool {
	if e.circ < 0 {
		pr := &c.peers[-1-e.circ]
		return pr.running&(1<<e.kind) != 0 && pr.timerSeq[e.kind] == e.seq
	}
	cc := &c.circuits[e.circ]
	if cc.running&(1<<e.kind) == 0 || cc.timers.seq[e.kind] != e.seq {
		return false
	}
	if callTimers&(1<<e.kind) != 0 && cc.timers.epoch != e.epoch {
		c.stats.StaleTimers++
		c.stopTimer(e.circ, e.kind)
		return false
	}
	return true
}

// newEpoch marks a circuit's seizure or return to idle: call timers started
// before it are dead from now on, whether or not they were stopped.
func (c *core) newEpoch(ci int32) {
	cc := &c.circuits[ci]
	if cc.timers != nil {
		cc.timers.epoch++
	}
}

// stopTimer stops a circuit timer; a stopped timer's entry expires as a no-op.
func (c *core) stopTimer(ci int32, k timerKind) {
	cc := &c.circuits[ci]
	if cc.running&(1<<k) == 0 {
		return
	}
	cc.running &^= 1 << k
	cc.timers.seq[k]++
	if k == tT1 {
		delete(c.sentREL, ci) // the REL T1 would repeat
	}
}

func (c *core) timerRunning(ci int32, k timerKind) bool {
	return c.circuits[ci].running&(1<<k) != 0
}

// stopCallTimers stops every timer that belongs to a call or a release on the
// circuit, T3 (the overload hold) included.
func (c *core) stopCallTimers(ci int32) {
	cc := &c.circuits[ci]
	for k := timerKind(0); k < numTimers; k++ {
		if callTimers&(1<<k) != 0 && cc.running&(1<<k) != 0 {
			c.stopTimer(ci, k)
		}
	}
}

// startPeerTimer and stopPeerTimer handle per-destination timers (T4).
func (c *core) startPeerTimer(p int, k timerKind) {
	pr := &c.peers[p]
	pr.timerSeq[k]++
	pr.running |= 1 << k
	c.pushTimer(timerEntry{at: c.now.Add(c.cfg.Timers.duration(k)).UnixNano(), circ: int32(-1 - p), kind: k, seq: pr.timerSeq[k]})
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
		e := c.timerq.pop()
		// A timer restarted on expiry counts from its own deadline, not from
		// whenever the loop got round to it.
		if at := time.Unix(0, e.at); at.After(c.now) {
			c.now = at
		}
		if !c.timerLive(e) {
			continue
		}
		if e.circ < 0 {
			p := int(-1 - e.circ)
			c.peers[p].running &^= 1 << e.kind
			c.peerTimerExpired(p, e.kind)
			continue
		}
		c.circuits[e.circ].running &^= 1 << e.kind
		c.stats.TimerExpiries[e.kind]++
		c.timerExpired(e.circ, e.kind)
	}
	if now.After(c.now) {
		c.now = now
	}
	c.maintCheck()
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
