package mtp3

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Timers of the node (Q.704 §16.8, Q.707 §5.8). Zero fields take the
// defaults.
type Timers struct {
	T2  time.Duration // waiting for changeover acknowledgement (Q.704 T2, 0.7-2 s)
	T4  time.Duration // waiting for changeback acknowledgement, first attempt (Q.704 T4, 0.5-1.2 s)
	T5  time.Duration // waiting for changeback acknowledgement, second attempt (Q.704 T5, 0.5-1.2 s)
	T17 time.Duration // delay before a failed link is started again (Q.704 T17, 0.8-1.5 s)
	// SLTT1 supervises the SLTA (Q.707 T1, 4-12 s); SLTT2 is the interval of
	// the periodic test (Q.707 T2, 30-90 s).
	SLTT1, SLTT2 time.Duration
	// Restart is how long a linkset that has just come up waits for the
	// adjacent point's TRA before it carries traffic anyway (Q.704 §9: the
	// restart ends with TRA; T22/T23 of §9.2 bound the wait).
	Restart time.Duration
}

// DefaultTimers returns the defaults.
func DefaultTimers() Timers {
	return Timers{T2: 2 * time.Second, T4: time.Second, T5: time.Second, T17: time.Second,
		SLTT1: 4 * time.Second, SLTT2: 30 * time.Second, Restart: 3 * time.Second}
}

func (t *Timers) fill() {
	d := DefaultTimers()
	for _, p := range []struct{ v, def *time.Duration }{{&t.T2, &d.T2}, {&t.T4, &d.T4}, {&t.T5, &d.T5},
		{&t.T17, &d.T17}, {&t.SLTT1, &d.SLTT1}, {&t.SLTT2, &d.SLTT2}, {&t.Restart, &d.Restart}} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
}

// LinkConfig is one signalling link of a linkset.
type LinkConfig struct {
	SLC  uint8 // signalling link code, 0..15
	Link l2.Link
}

// LinksetConfig is a linkset to an adjacent signalling point.
type LinksetConfig struct {
	Name     string
	Adjacent mtp.PointCode
	Links    []LinkConfig
}

// Route sends traffic for DPC over a linkset; among a DPC's routes the
// lowest Priority that is available wins (Q.704 §4.2: normal and
// alternative routes). Every adjacent point has an implicit route over its
// own linkset with priority 0.
type Route struct {
	DPC      mtp.PointCode
	Linkset  string
	Priority int
}

// Config is an MTP3 node.
type Config struct {
	Variant Variant
	OPC     mtp.PointCode // our point code
	NI      uint8         // network indicator of what we send (2 national, 0 international)
	// SLS8 selects 8-bit SLS for ANSI (else 5-bit).
	SLS8     bool
	Linksets []LinksetConfig
	Routes   []Route
	Timers   Timers
	Clock    l2.Clock
	// Queue sizes of Indications and Events (default 4096 and 256).
	IndicationQueue, EventQueue int
	// UserParts are the service indicators the user serves (empty: every
	// one). An MSU for another user part is answered with UPU, cause
	// unequipped (Q.704 §11.2.7) and not delivered.
	UserParts []uint8
	// CongestionOnset are the outstanding MSUs on a link (sent and not
	// acknowledged, or queued) at which its congestion level becomes 1, 2
	// and 3; each abates below half its onset (Q.704 §3.8.2, T1.111.4
	// §3.8.2.2). Default 256, 1024, 2048.
	CongestionOnset [3]int
	// OnLinkset, when set, hears of a linkset lost (no link left) and
	// restored (traffic restarted): for alarms. It runs outside the node's
	// lock, like the link starts and stops.
	OnLinkset func(name string, adjacent mtp.PointCode, available bool)
	// InlineControl runs link starts and stops on the goroutine that decided
	// them, after the node's lock is released, instead of on the node's
	// control goroutine: for tests with links that never call back
	// synchronously.
	InlineControl bool
}

// Errors.
var (
	ErrConfig = errors.New("mtp3: invalid configuration")
	ErrClosed = errors.New("mtp3: node closed")
	// ErrCongested: an ANSI message whose priority is below the congestion
	// level of its link is discarded (T1.111.4 §3.8.2.2).
	ErrCongested = errors.New("mtp3: signalling link congested: message priority below the congestion level")
)

// MaxHeld bounds the MSUs a linkset holds during changeovers and changebacks.
const MaxHeld = 1 << 16

// Link states inside the node.
type linkState int

const (
	lsDown      linkState = iota // failed or not started
	lsAligning                   // level 2 started
	lsTesting                    // level 2 in service, SLTM sent, waiting for SLTA
	lsAvailable                  // carries traffic
)

var linkStateNames = [...]string{"down", "aligning", "testing", "available"}

func (s linkState) String() string { return linkStateNames[s] }

type link struct {
	ls    *linkset
	slc   uint8
	l2    l2.Link
	state linkState
	// co: a changeover of this link is in progress (COO/ECO sent, waiting
	// for COA/ECA or T2).
	co      bool
	coSLS   []uint8 // the SLSs held for it
	coTimer l2.Timer
	// restartDue: start again once the changeover is over.
	restartDue bool
	slt        struct {
		pattern  []byte
		waiting  bool
		failures int
		t1, t2   l2.Timer
		seq      uint8
	}
	congLevel uint8  // 0..3
	busy      bool   // level 2 reports the peer busy
	epoch     uint64 // bumps on each start and failure: stale timers are ignored
	// session bumps on each start: indications from an earlier start are
	// ignored (but an MSU level 2 accepted before we failed the link is
	// still delivered: its BSNT counted it).
	session     uint64
	lastFailure string
	stats       LinkStats
}

// LinkStats are a link's counters.
type LinkStats struct {
	MSUsOut, MSUsIn   atomic.Uint64
	SLTPassed, SLTBad atomic.Uint64
	Changeovers       atomic.Uint64 // of traffic away from this link
	Changebacks       atomic.Uint64 // of traffic back onto it
	Retrieved         atomic.Uint64 // MSUs retrieved from it and resent elsewhere
	Failures          atomic.Uint64
}

type linkset struct {
	name  string
	adj   mtp.PointCode
	links []*link // by SLC
	bySLC map[uint8]*link
	// cur[sls] is the link carrying the SLS now (nil: none).
	cur [256]*link
	// hold[sls] > 0 holds new traffic of the SLS (changeover or changeback
	// in progress); held keeps it, in order.
	hold      [256]int
	held      [256][][]byte
	nheld     int
	cbs       map[uint8]*changeback
	cbSeq     uint8
	traTx     bool // TRA sent since the linkset came up
	traRx     bool // TRA received
	allowed   bool // traffic restart done: carries traffic
	lost      bool // went down after carrying traffic (an alarm is up)
	rsTimer   l2.Timer
	epoch     uint64
	congLevel uint8 // the highest of its links'
	congPoll  bool
	congEvent time.Time // last ITU congestion indication
	// prohibited/restricted destinations through this linkset (TFP, TFR).
	prohibited map[mtp.PointCode]bool
	restricted map[mtp.PointCode]bool
}

type changeback struct {
	code   uint8
	to     *link
	from   []*link // alternative links a CBD went on
	acked  map[*link]bool
	sls    []uint8
	tries  int
	timer  l2.Timer
	active bool
}

type destination struct {
	pc        mtp.PointCode
	routes    []routeEntry
	reachable bool
	restrict  bool
}

type routeEntry struct {
	ls       *linkset
	priority int
}

// Node is an MTP3 signalling point.
type Node struct {
	cfg     Config
	mask    uint8 // SLS mask
	clock   l2.Clock
	tm      Timers
	mu      sync.Mutex
	sets    []*linkset
	byName  map[string]*linkset
	dests   map[mtp.PointCode]*destination
	order   []mtp.PointCode
	started bool
	closed  bool

	ind  *fifo[mtp.Message]
	ev   *fifo[mtp.Event]
	ctl  []func() // link starts and stops decided under mu, run after it
	ctlQ chan func()
	done chan struct{}

	stats Stats
}

// Stats are the node's counters.
type Stats struct {
	NoRoute, Unavailable atomic.Uint64 // Transfer refused
	CongestionDiscards   atomic.Uint64 // ANSI messages below the congestion level
	Held, HeldDropped    atomic.Uint64 // held during changeover/changeback; dropped when the hold overflowed or no link remained
	Discarded            atomic.Uint64 // received MSUs not for us or malformed
	SNMIn, SNMOut        atomic.Uint64
}

// New checks cfg and builds the node; Start brings the links up.
func New(cfg Config) (*Node, error) {
	n := &Node{cfg: cfg, clock: cfg.Clock, tm: cfg.Timers, byName: map[string]*linkset{},
		dests: map[mtp.PointCode]*destination{}, done: make(chan struct{})}
	if n.clock == nil {
		n.clock = l2.RealClock{}
	}
	n.tm.fill()
	n.mask = 0x0F
	if cfg.Variant == ANSI {
		n.mask = 0x1F
		if cfg.SLS8 {
			n.mask = 0xFF
		}
	}
	if cfg.CongestionOnset == [3]int{} {
		cfg.CongestionOnset = [3]int{256, 1024, 2048}
	}
	n.cfg.CongestionOnset = cfg.CongestionOnset
	if cfg.IndicationQueue <= 0 {
		cfg.IndicationQueue = 4096
	}
	if cfg.EventQueue <= 0 {
		cfg.EventQueue = 256
	}
	maxPC := mtp.PointCode(0x3FFF)
	if cfg.Variant == ANSI {
		maxPC = 0xFFFFFF
	}
	if cfg.OPC > maxPC {
		return nil, fmt.Errorf("%w: OPC %d beyond %d bits", ErrConfig, cfg.OPC, map[Variant]int{ITU: 14, ANSI: 24}[cfg.Variant])
	}
	for _, lc := range cfg.Linksets {
		if lc.Name == "" || n.byName[lc.Name] != nil {
			return nil, fmt.Errorf("%w: linkset name %q empty or repeated", ErrConfig, lc.Name)
		}
		if lc.Adjacent > maxPC || lc.Adjacent == cfg.OPC {
			return nil, fmt.Errorf("%w: linkset %s: adjacent point code %d", ErrConfig, lc.Name, lc.Adjacent)
		}
		if len(lc.Links) == 0 || len(lc.Links) > 16 {
			return nil, fmt.Errorf("%w: linkset %s has %d links (1..16)", ErrConfig, lc.Name, len(lc.Links))
		}
		ls := &linkset{name: lc.Name, adj: lc.Adjacent, bySLC: map[uint8]*link{}, cbs: map[uint8]*changeback{},
			prohibited: map[mtp.PointCode]bool{}, restricted: map[mtp.PointCode]bool{}}
		for _, k := range lc.Links {
			if k.SLC > 15 || ls.bySLC[k.SLC] != nil || k.Link == nil {
				return nil, fmt.Errorf("%w: linkset %s: SLC %d repeated, beyond 15 or without a link", ErrConfig, lc.Name, k.SLC)
			}
			l := &link{ls: ls, slc: k.SLC, l2: k.Link}
			ls.links = append(ls.links, l)
			ls.bySLC[k.SLC] = l
		}
		sort.Slice(ls.links, func(i, j int) bool { return ls.links[i].slc < ls.links[j].slc })
		n.sets = append(n.sets, ls)
		n.byName[ls.name] = ls
		n.addRoute(ls.adj, ls, 0)
	}
	for _, r := range cfg.Routes {
		ls := n.byName[r.Linkset]
		if ls == nil {
			return nil, fmt.Errorf("%w: route to %d: no linkset %q", ErrConfig, r.DPC, r.Linkset)
		}
		if r.DPC > maxPC || r.DPC == cfg.OPC {
			return nil, fmt.Errorf("%w: route DPC %d", ErrConfig, r.DPC)
		}
		n.addRoute(r.DPC, ls, r.Priority)
	}
	n.ind = newFifo[mtp.Message](cfg.IndicationQueue)
	n.ev = newFifo[mtp.Event](cfg.EventQueue)
	if !cfg.InlineControl {
		n.ctlQ = make(chan func(), 1024)
		go n.controlLoop()
	}
	return n, nil
}

func (n *Node) addRoute(dpc mtp.PointCode, ls *linkset, prio int) {
	d := n.dests[dpc]
	if d == nil {
		d = &destination{pc: dpc}
		n.dests[dpc] = d
		n.order = append(n.order, dpc)
	}
	for i, r := range d.routes {
		if r.ls == ls {
			d.routes[i].priority = min(r.priority, prio)
			return
		}
	}
	d.routes = append(d.routes, routeEntry{ls: ls, priority: prio})
	sort.SliceStable(d.routes, func(i, j int) bool { return d.routes[i].priority < d.routes[j].priority })
}

// Indications delivers received MTP-TRANSFER indications, in order.
func (n *Node) Indications() <-chan mtp.Message { return n.ind.out }

// Events delivers status indications.
func (n *Node) Events() <-chan mtp.Event { return n.ev.out }

// Stats returns the node's counters.
func (n *Node) Stats() *Stats { return &n.stats }

// Start activates every link (Q.704 §12.2). All destinations start
// unavailable: a Resume says when each can be reached.
func (n *Node) Start() {
	n.mu.Lock()
	if n.started || n.closed {
		n.mu.Unlock()
		return
	}
	n.started = true
	for _, ls := range n.sets {
		for _, l := range ls.links {
			n.startLinkLocked(l)
		}
	}
	n.unlock()
}

// Close stops the links and the node's goroutines.
func (n *Node) Close() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	var links []l2.Link
	for _, ls := range n.sets {
		for _, l := range ls.links {
			l.epoch++
			stopTimer(l.coTimer)
			stopTimer(l.slt.t1)
			stopTimer(l.slt.t2)
			links = append(links, l.l2)
		}
		stopTimer(ls.rsTimer)
		for _, cb := range ls.cbs {
			stopTimer(cb.timer)
		}
	}
	n.mu.Unlock()
	// The queues close first: a link reader waiting for room in them must
	// not keep its link's Stop waiting.
	close(n.done)
	n.ind.close()
	n.ev.close()
	for _, l := range links {
		l.Stop()
	}
}

func stopTimer(t l2.Timer) {
	if t != nil {
		t.Stop()
	}
}

// unlock releases mu, then runs the control actions decided under it (on
// the control goroutine unless InlineControl).
func (n *Node) unlock() {
	ctl := n.ctl
	n.ctl = nil
	n.mu.Unlock()
	for _, f := range ctl {
		if n.ctlQ == nil {
			f()
			continue
		}
		select {
		case n.ctlQ <- f:
		case <-n.done:
			return
		}
	}
}

func (n *Node) controlLoop() {
	for {
		select {
		case f := <-n.ctlQ:
			f()
		case <-n.done:
			return
		}
	}
}

// after arms a timer whose callback runs under mu, unless epoch moved.
func (n *Node) after(d time.Duration, epoch *uint64, f func()) l2.Timer {
	e := *epoch
	return n.clock.AfterFunc(d, func() {
		n.mu.Lock()
		if n.closed || *epoch != e {
			n.mu.Unlock()
			return
		}
		f()
		n.unlock()
	})
}

func (n *Node) emit(e mtp.Event) { n.ev.push(e) }

// --- links ---

func (n *Node) startLinkLocked(l *link) {
	l.epoch++
	l.session++
	l.state = lsAligning
	l.restartDue = false
	u := &linkUser{n: n, l: l, session: l.session}
	k := l.l2
	n.ctl = append(n.ctl, func() { k.Start(u) })
}

// linkUser receives one start's indications from level 2.
type linkUser struct {
	n       *Node
	l       *link
	session uint64
}

func (u *linkUser) lock() bool {
	u.n.mu.Lock()
	if u.n.closed || u.l.session != u.session {
		u.n.mu.Unlock()
		return false
	}
	return true
}

func (u *linkUser) InService() {
	if !u.lock() {
		return
	}
	u.n.linkInService(u.l)
	u.n.unlock()
}

func (u *linkUser) OutOfService(reason string) {
	if !u.lock() {
		return
	}
	u.n.linkFailed(u.l, reason)
	u.n.unlock()
}

func (u *linkUser) Received(msu []byte) {
	if !u.lock() {
		return
	}
	u.n.received(u.l, msu)
	u.n.unlock()
	u.n.ind.wait() // back-pressure on the link when the user lags
}

func (u *linkUser) RemoteProcessorOutage(on bool) {}

// Congested: the peer's level 2 is busy (SIB, M2PA Busy): the link is
// congested at least at level 1 until it ends.
func (u *linkUser) Congested(on bool) {
	if !u.lock() {
		return
	}
	u.l.busy = on
	u.n.linkCongestion(u.l)
	u.n.linksetCongestion(u.l.ls)
	u.n.unlock()
}

// linkInService: level 2 is up; test the link before it carries traffic
// (Q.707 §2: the test is part of activation and restoration).
func (n *Node) linkInService(l *link) {
	if l.state != lsAligning {
		return
	}
	l.state = lsTesting
	l.slt.failures = 0
	n.sendSLTM(l)
}

func (n *Node) sendSLTM(l *link) {
	l.slt.seq++
	p := make([]byte, 4)
	for i := range p {
		p[i] = l.slt.seq + byte(i)*0x11 + l.slc
	}
	l.slt.pattern = p
	l.slt.waiting = true
	// ANSI sends the test as a special maintenance message, SI 2 (T1.111.7;
	// libss7 does the same); ITU as SI 1 (Q.707 §5.3).
	si := uint8(SISLT)
	if n.cfg.Variant == ANSI {
		si = SISLTANSI
	}
	lbl := mtp.Label{OPC: n.cfg.OPC, DPC: l.ls.adj, SI: si, NI: n.cfg.NI, SLS: l.slc}
	b := SLT{H0H1: SLTM, SLC: l.slc, Pattern: p}.Append(n.cfg.Variant, AppendMSU(n.cfg.Variant, nil, lbl, nil))
	_ = l.l2.Send(0, b)
	stopTimer(l.slt.t1)
	l.slt.t1 = n.after(n.tm.SLTT1, &l.epoch, func() { n.sltTimeout(l) })
}

// sltTimeout: no SLTA within Q.707 T1. The test is repeated once; a second
// failure takes the link out of service and restarts it (Q.707 §5.5).
func (n *Node) sltTimeout(l *link) {
	if !l.slt.waiting {
		return
	}
	l.stats.SLTBad.Add(1)
	l.slt.failures++
	if l.slt.failures < 2 {
		n.sendSLTM(l)
		return
	}
	k := l.l2
	n.ctl = append(n.ctl, k.Stop)
	n.linkFailed(l, "signalling link test failed twice")
}

func (n *Node) sltPassed(l *link) {
	l.slt.waiting = false
	l.slt.failures = 0
	l.stats.SLTPassed.Add(1)
	stopTimer(l.slt.t1)
	stopTimer(l.slt.t2)
	l.slt.t2 = n.after(n.tm.SLTT2, &l.epoch, func() {
		if l.state == lsAvailable || l.state == lsTesting {
			n.sendSLTM(l)
		}
	})
	if l.state == lsTesting {
		n.linkAvailable(l)
	}
}

// linkAvailable puts a tested link into traffic: the linkset's first link
// starts the traffic restart (TRA, Q.704 §9); a later one takes back its
// SLSs by changeback (Q.704 §6).
func (n *Node) linkAvailable(l *link) {
	l.state = lsAvailable
	ls := l.ls
	if !ls.traTx {
		ls.traTx = true
		n.sendSNM(ls, l, SNM{H0H1: TRA}, l.slc)
		if !ls.traRx {
			stopTimer(ls.rsTimer)
			ls.rsTimer = n.after(n.tm.Restart, &ls.epoch, func() { n.restartDone(ls) })
		}
	}
	if !ls.allowed {
		if ls.traRx {
			n.restartDone(ls)
		} else {
			n.assign(ls) // the mapping is ready when the restart ends
		}
		return
	}
	n.assign(ls)
}

func (n *Node) restartDone(ls *linkset) {
	if ls.allowed || !ls.traTx {
		return
	}
	stopTimer(ls.rsTimer)
	ls.allowed = true
	n.assign(ls)
	n.reachability()
	if ls.lost {
		ls.lost = false
		n.linksetEvent(ls, true)
	}
}

func (n *Node) linksetEvent(ls *linkset, up bool) {
	if f := n.cfg.OnLinkset; f != nil {
		name, adj := ls.name, ls.adj
		n.ctl = append(n.ctl, func() { f(name, adj, up) })
	}
}

// linkFailed: level 2 lost the link, or its test failed, or the peer ordered
// a changeover. Its SLSs move to the other links by changeover (Q.704 §5).
func (n *Node) linkFailed(l *link, reason string) {
	if l.state == lsDown {
		return
	}
	was := l.state
	l.state = lsDown
	l.epoch++
	l.stats.Failures.Add(1)
	stopTimer(l.slt.t1)
	stopTimer(l.slt.t2)
	l.slt.waiting = false
	l.busy, l.congLevel = false, 0
	ls := l.ls
	// Changebacks towards this link are void: their SLSs stay where they are.
	for code, cb := range ls.cbs {
		if cb.to == l {
			n.endChangeback(ls, code, false)
		}
	}
	moved := n.slsOf(ls, l)
	alt := n.available(ls)
	l.lastFailure = reason
	if was != lsAvailable || len(moved) == 0 && !anyCarries(ls, l) {
		// It carried nothing: no changeover, just restart it.
		_ = l.l2.Retrieve(0, false)
		if len(alt) == 0 {
			n.linksetDown(ls)
		}
		n.scheduleRestart(l)
		return
	}
	l.stats.Changeovers.Add(1)
	if len(alt) == 0 || !ls.allowed {
		// No alternative: what the link holds cannot go anywhere (Q.704
		// §5.1: the destinations become inaccessible).
		lost := l.l2.Retrieve(0, false)
		n.stats.HeldDropped.Add(uint64(len(lost)))
		n.linksetDown(ls)
		n.scheduleRestart(l)
		return
	}
	// Hold the failed link's SLSs until the changeover ends.
	for _, s := range moved {
		ls.hold[s]++
	}
	l.co, l.coSLS = true, moved
	bsnt, ok := l.l2.BSNT()
	if ok {
		h := uint8(COO)
		if l.l2.SeqMask() > 0x7F {
			h = XCO
		}
		n.sendSNM(ls, alt[0], SNM{H0H1: h, FSN: bsnt, SLC: l.slc}, l.slc)
	} else {
		n.sendSNM(ls, alt[0], SNM{H0H1: ECO, SLC: l.slc}, l.slc)
	}
	stopTimer(l.coTimer)
	coEpoch := l.epoch
	l.coTimer = n.after(n.tm.T2, &l.epoch, func() { n.endChangeover(l, coEpoch, 0, false) })
	n.scheduleRestart(l)
}

func anyCarries(ls *linkset, l *link) bool {
	for s := range ls.cur {
		if ls.cur[s] == l {
			return true
		}
	}
	return false
}

// endChangeover completes the changeover of l: its unacknowledged MSUs
// beyond fsnc (the peer's BSNT from COA/XCA) are retrieved and sent on the
// SLSs' new links, before the traffic held meanwhile (Q.704 §5.4).
func (n *Node) endChangeover(l *link, epoch uint64, fsnc uint32, ok bool) {
	if !l.co || l.epoch != epoch {
		return
	}
	l.co = false
	stopTimer(l.coTimer)
	ls := l.ls
	moved := n.slsOf(ls, l)
	n.assign(ls)
	// Retrieved MSUs go ahead of those held during the changeover: they were
	// sent first. Management and test messages concerned the failed link
	// only and are not resent.
	retrieved := l.l2.Retrieve(fsnc, ok)
	pre := map[uint8][][]byte{}
	for _, b := range retrieved {
		lbl, _, err := DecodeMSU(n.cfg.Variant, b)
		if err != nil || lbl.SI == SISNM || lbl.SI == SISLT || n.cfg.Variant == ANSI && lbl.SI == SISLTANSI {
			continue
		}
		l.stats.Retrieved.Add(1)
		s := lbl.SLS & n.mask
		if ls.hold[s] > 0 {
			pre[s] = append(pre[s], b)
			continue
		}
		n.sendOn(ls, s, b, lbl.MP)
	}
	for s, q := range pre {
		ls.held[s] = append(q, ls.held[s]...)
		ls.nheld += len(q)
	}
	for _, s := range moved {
		ls.hold[s]--
		n.release(ls, s)
	}
	if l.restartDue {
		n.startLinkLocked(l)
	}
}

func (n *Node) scheduleRestart(l *link) {
	l.restartDue = true
	e := l.epoch
	n.after(n.tm.T17, &l.epoch, func() {
		if l.state == lsDown && !l.co && l.epoch == e {
			n.startLinkLocked(l)
		}
	})
}

// linksetDown: no link of the linkset is available. The restart starts
// afresh when one returns.
func (n *Node) linksetDown(ls *linkset) {
	for _, l := range ls.links {
		if l.co { // no link left to take its traffic: end it now
			n.endChangeover(l, l.epoch, 0, false)
		}
	}
	ls.epoch++
	stopTimer(ls.rsTimer)
	if ls.allowed {
		ls.lost = true
		n.linksetEvent(ls, false)
	}
	ls.traTx, ls.traRx, ls.allowed = false, false, false
	ls.congLevel, ls.congPoll = 0, false
	clear(ls.prohibited)
	clear(ls.restricted)
	for s := range ls.cur {
		ls.cur[s] = nil
		if ls.hold[s] == 0 && len(ls.held[s]) > 0 {
			n.stats.HeldDropped.Add(uint64(len(ls.held[s])))
			ls.nheld -= len(ls.held[s])
			ls.held[s] = nil
		}
	}
	n.reachability()
}

func (n *Node) available(ls *linkset) []*link {
	var out []*link
	for _, l := range ls.links {
		if l.state == lsAvailable {
			out = append(out, l)
		}
	}
	return out
}

// slsOf lists the SLSs the link carries now.
func (n *Node) slsOf(ls *linkset, l *link) []uint8 {
	var out []uint8
	for s := 0; s <= int(n.mask); s++ {
		if ls.cur[s] == l {
			out = append(out, uint8(s))
		}
	}
	return out
}

// home is the link an SLS belongs to when all links are available; an SLS
// whose home is down shares the others (Q.704 §4.2.1: load sharing by SLS;
// a link's failure moves only its own SLSs, and its return takes back only
// those).
func (n *Node) pick(ls *linkset, s uint8, avail []*link) *link {
	if len(avail) == 0 {
		return nil
	}
	h := ls.links[int(s)%len(ls.links)]
	if h.state == lsAvailable {
		return h
	}
	return avail[int(s)%len(avail)]
}

// assign recomputes the SLS mapping. SLSs that would move from a link that
// is still available onto another (a link just back) go there by
// changeback; others (from nothing, or from failed links whose changeover
// is over) are simply set.
func (n *Node) assign(ls *linkset) {
	avail := n.available(ls)
	type move struct{ from, to *link }
	var back map[move][]uint8
	for s := 0; s <= int(n.mask); s++ {
		want := n.pick(ls, uint8(s), avail)
		have := ls.cur[s]
		if want == have {
			continue
		}
		if have != nil && have.state == lsAvailable && want != nil && ls.allowed {
			if back == nil {
				back = map[move][]uint8{}
			}
			back[move{have, want}] = append(back[move{have, want}], uint8(s))
			continue
		}
		if have != nil && have.co {
			continue // its changeover decides
		}
		ls.cur[s] = want
	}
	if len(back) == 0 {
		return
	}
	// One changeback per pair of alternative and restored link: a CBD on the
	// alternative after the last MSU it carried for those SLSs; the CBA
	// says the peer has them all (Q.704 §6.2, §6.3).
	for mv, ss := range back {
		target := mv.to
		ls.cbSeq++
		code := ls.cbSeq
		cb := &changeback{code: code, to: target, from: []*link{mv.from}, acked: map[*link]bool{}, sls: ss, active: true}
		ls.cbs[code] = cb
		for _, s := range ss {
			ls.hold[s]++
		}
		target.stats.Changebacks.Add(1)
		n.sendCBD(ls, cb)
	}
}

func (n *Node) sendCBD(ls *linkset, cb *changeback) {
	cb.tries++
	for _, f := range cb.from {
		n.sendSNM(ls, f, SNM{H0H1: CBD, CBC: cb.code, SLC: cb.to.slc}, cb.to.slc)
	}
	d := n.tm.T4
	if cb.tries > 1 {
		d = n.tm.T5
	}
	stopTimer(cb.timer)
	code := cb.code
	cb.timer = n.after(d, &ls.epoch, func() {
		c := ls.cbs[code]
		if c != cb {
			return
		}
		if cb.tries < 2 {
			n.sendCBD(ls, cb) // Q.704 §6.5: repeat once after T4
			return
		}
		n.endChangeback(ls, code, true) // after T5 traffic restarts anyway
	})
}

// endChangeback releases the changeback's SLSs onto the restored link (ok)
// or leaves them where they were.
func (n *Node) endChangeback(ls *linkset, code uint8, ok bool) {
	cb := ls.cbs[code]
	if cb == nil {
		return
	}
	delete(ls.cbs, code)
	stopTimer(cb.timer)
	for _, s := range cb.sls {
		ls.hold[s]--
		if ok && cb.to.state == lsAvailable {
			ls.cur[s] = cb.to
		}
		n.release(ls, s)
	}
}

// release sends an SLS's held traffic when nothing holds it any longer.
func (n *Node) release(ls *linkset, s uint8) {
	if ls.hold[s] > 0 {
		return
	}
	q := ls.held[s]
	ls.held[s] = nil
	ls.nheld -= len(q)
	for _, b := range q {
		n.sendOn(ls, s, b, mpOf(n.cfg.Variant, b))
	}
}

func mpOf(v Variant, b []byte) uint8 {
	if v == ANSI && len(b) > 0 {
		return (b[0] >> 4) & 3
	}
	return 0
}

// sendOn sends an encoded MSU of SLS s on the linkset: held if the SLS is
// held, else on its link. A link that refuses (it has just failed and its
// indication has not reached us) is failed here, and the MSU held for the
// changeover.
func (n *Node) sendOn(ls *linkset, s uint8, b []byte, mp uint8) bool {
	for range 3 {
		if ls.hold[s] > 0 {
			if ls.nheld >= MaxHeld {
				n.stats.HeldDropped.Add(1)
				return false
			}
			ls.held[s] = append(ls.held[s], b)
			ls.nheld++
			n.stats.Held.Add(1)
			return true
		}
		l := ls.cur[s]
		if l == nil {
			n.stats.HeldDropped.Add(1)
			return false
		}
		if err := l.l2.Send(mp, b); err == nil {
			l.stats.MSUsOut.Add(1)
			return true
		}
		n.linkFailed(l, "level 2 refused an MSU")
	}
	n.stats.HeldDropped.Add(1)
	return false
}

// sendSNM sends a management message to the adjacent point on link via
// (any available link when via is nil) with the label's SLS set to slc
// (Q.704 §15.2: SNM concerning a link carries its SLC).
func (n *Node) sendSNM(ls *linkset, via *link, s SNM, slc uint8) {
	if via == nil || via.state != lsAvailable && via.state != lsTesting {
		alt := n.available(ls)
		if len(alt) == 0 {
			return
		}
		via = alt[0]
	}
	lbl := mtp.Label{OPC: n.cfg.OPC, DPC: ls.adj, SI: SISNM, NI: n.cfg.NI, SLS: slc}
	b := s.Append(n.cfg.Variant, AppendMSU(n.cfg.Variant, nil, lbl, nil))
	if via.l2.Send(0, b) == nil {
		n.stats.SNMOut.Add(1)
	}
}

// --- received MSUs ---

func (n *Node) received(l *link, msu []byte) {
	v := n.cfg.Variant
	lbl, sif, err := DecodeMSU(v, msu)
	if err != nil || lbl.DPC != n.cfg.OPC {
		n.stats.Discarded.Add(1) // an end node: nothing to relay (Q.704 §2.3)
		return
	}
	l.stats.MSUsIn.Add(1)
	switch {
	case lbl.SI == SISNM:
		n.snm(l, lbl, sif)
	case lbl.SI == SISLT || v == ANSI && lbl.SI == SISLTANSI:
		n.slt(l, lbl, sif)
	case len(n.cfg.UserParts) > 0 && !slices.Contains(n.cfg.UserParts, lbl.SI):
		n.stats.Discarded.Add(1)
		n.sendUPU(l.ls, lbl)
	default:
		n.ind.push(mtp.Message{Label: lbl, Payload: append([]byte(nil), sif...), Peer: l.ls.name})
	}
}

// sendUPU tells the originating point that the user part is not here. UPU
// goes to the message's OPC over the linkset the message came on.
func (n *Node) sendUPU(ls *linkset, got mtp.Label) {
	alt := n.available(ls)
	if len(alt) == 0 {
		return
	}
	lbl := mtp.Label{OPC: n.cfg.OPC, DPC: got.OPC, SI: SISNM, NI: n.cfg.NI, SLS: got.SLS & n.mask}
	b := SNM{H0H1: UPU, Dest: n.cfg.OPC, UserPart: got.SI, Cause: uint8(mtp.UPUUnequippedRemote)}.Append(n.cfg.Variant, AppendMSU(n.cfg.Variant, nil, lbl, nil))
	if alt[int(lbl.SLS)%len(alt)].l2.Send(0, b) == nil {
		n.stats.SNMOut.Add(1)
	}
}

// slt answers SLTM and checks SLTA (Q.707 §5.3, §5.4): both must come from
// the adjacent point with the link's SLC.
func (n *Node) slt(l *link, lbl mtp.Label, sif []byte) {
	v := n.cfg.Variant
	t, err := DecodeSLT(v, sif)
	if err != nil {
		n.stats.Discarded.Add(1)
		return
	}
	slc := lbl.SLS & 0x0F
	if v == ANSI {
		slc = t.SLC
	}
	if lbl.OPC != l.ls.adj || slc != l.slc {
		n.stats.Discarded.Add(1)
		return
	}
	switch t.H0H1 {
	case SLTM:
		a := mtp.Label{OPC: n.cfg.OPC, DPC: lbl.OPC, SI: lbl.SI, NI: n.cfg.NI, SLS: lbl.SLS}
		b := SLT{H0H1: SLTA, SLC: l.slc, Pattern: t.Pattern}.Append(v, AppendMSU(v, nil, a, nil))
		_ = l.l2.Send(0, b)
	case SLTA:
		if l.slt.waiting && string(t.Pattern) == string(l.slt.pattern) {
			n.sltPassed(l)
		}
	}
}

func (n *Node) snm(l *link, lbl mtp.Label, sif []byte) {
	s, err := DecodeSNM(n.cfg.Variant, sif)
	if err != nil || lbl.OPC != l.ls.adj {
		n.stats.Discarded.Add(1)
		return
	}
	n.stats.SNMIn.Add(1)
	ls := l.ls
	slc := lbl.SLS & 0x0F
	if n.cfg.Variant == ANSI {
		switch s.H0H1 {
		case COO, COA, XCO, XCA, CBD, CBA, ECO, ECA:
			slc = s.SLC
		}
	}
	switch s.H0H1 {
	case COO, XCO, ECO:
		n.changeoverOrder(ls, slc, s)
	case COA, XCA, ECA:
		if t := ls.bySLC[slc]; t != nil {
			n.endChangeover(t, t.epoch, s.FSN, s.H0H1 != ECA)
		}
	case CBD:
		// Answer on the link it came on (Q.704 §6.3).
		n.sendSNM(ls, l, SNM{H0H1: CBA, CBC: s.CBC, SLC: slc}, lbl.SLS)
	case CBA:
		if cb := ls.cbs[s.CBC]; cb != nil {
			cb.acked[l] = true
			if len(cb.acked) >= len(cb.from) {
				n.endChangeback(ls, s.CBC, true)
			}
		}
	case TRA:
		ls.traRx = true
		if len(n.available(ls)) > 0 {
			n.restartDone(ls)
		}
	case TFP:
		if !ls.prohibited[s.Dest] {
			ls.prohibited[s.Dest] = true
			n.reachability()
		}
	case TFA:
		if ls.prohibited[s.Dest] || ls.restricted[s.Dest] {
			delete(ls.prohibited, s.Dest)
			delete(ls.restricted, s.Dest)
			n.reachability()
		}
	case TFR:
		if !ls.restricted[s.Dest] {
			ls.restricted[s.Dest] = true
			delete(ls.prohibited, s.Dest)
			n.reachability()
		}
	case TFC:
		n.emit(mtp.Congestion{Peer: ls.name, PC: s.Dest, Level: max(s.Status, 1), LevelGiven: n.cfg.Variant == ANSI})
	case UPU:
		n.emit(mtp.UserPartUnavailable{Peer: ls.name, PC: s.Dest, User: s.UserPart, Cause: mtp.UPUCause(s.Cause)})
	}
}

// changeoverOrder: the peer changes over from one of our links. We answer
// with our BSNT (Q.704 §5.3.2); if we had not noticed the failure yet we
// take the link down now; if we had sent our own order, the peer's stands
// for the acknowledgement (Q.704 §5.3.3).
func (n *Node) changeoverOrder(ls *linkset, slc uint8, s SNM) {
	t := ls.bySLC[slc]
	if t == nil {
		return
	}
	if t.state != lsDown {
		k := t.l2
		n.ctl = append(n.ctl, k.Stop)
		n.linkFailed(t, "changeover ordered by the adjacent point")
	}
	bsnt, ok := t.l2.BSNT()
	switch {
	case s.H0H1 == ECO || !ok:
		n.sendSNM(ls, nil, SNM{H0H1: ECA, SLC: slc}, slc)
	case s.H0H1 == XCO:
		n.sendSNM(ls, nil, SNM{H0H1: XCA, FSN: bsnt, SLC: slc}, slc)
	default:
		n.sendSNM(ls, nil, SNM{H0H1: COA, FSN: bsnt & 0x7F, SLC: slc}, slc)
	}
	n.endChangeover(t, t.epoch, s.FSN, s.H0H1 != ECO)
}

// reachability recomputes each destination's state and reports changes.
func (n *Node) reachability() {
	for _, pc := range n.order {
		d := n.dests[pc]
		reach, restrict := false, false
		for _, r := range d.routes {
			if r.ls.allowed && !r.ls.prohibited[pc] {
				reach = true
				restrict = r.ls.restricted[pc]
				break
			}
		}
		if reach != d.reachable {
			d.reachable = reach
			if reach {
				n.emit(mtp.Resume{Peer: n.routeName(d), PC: pc})
			} else {
				n.emit(mtp.Pause{Peer: n.routeName(d), PC: pc})
			}
		}
		if reach && restrict && !d.restrict {
			n.emit(mtp.Restricted{Peer: n.routeName(d), PC: pc})
		}
		d.restrict = reach && restrict
	}
}

func (n *Node) routeName(d *destination) string {
	for _, r := range d.routes {
		if r.ls.allowed && !r.ls.prohibited[d.pc] {
			return r.ls.name
		}
	}
	return d.routes[0].ls.name
}

// --- MTP-TRANSFER ---

// Transfer is MTP-TRANSFER request: the DPC's route picks the linkset, the
// SLS the link. Safe from many goroutines; m.Payload is not kept.
func (n *Node) Transfer(m *mtp.Message) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	d := n.dests[m.DPC]
	if d == nil {
		n.mu.Unlock()
		n.stats.NoRoute.Add(1)
		return mtp.ErrNoRoute
	}
	var ls *linkset
	for _, r := range d.routes {
		if r.ls.allowed && !r.ls.prohibited[m.DPC] {
			ls = r.ls
			break
		}
	}
	if ls == nil {
		n.mu.Unlock()
		n.stats.Unavailable.Add(1)
		return mtp.ErrUnavailable
	}
	lbl := m.Label
	lbl.OPC, lbl.NI = n.cfg.OPC, n.cfg.NI
	lbl.SLS &= n.mask
	if n.cfg.Variant != ANSI {
		lbl.MP = 0
	}
	if l := ls.cur[lbl.SLS]; l != nil {
		n.linkCongestion(l)
		n.linksetCongestion(ls)
	}
	if ls.congLevel > 0 {
		if n.cfg.Variant == ANSI && lbl.MP < ls.congLevel {
			n.unlock()
			n.stats.CongestionDiscards.Add(1)
			return ErrCongested
		}
		// ITU has one level and no abatement indication: the user is told
		// again while the congestion lasts (Q.704 §3.8.3, at most once a
		// second here), and its T29/T30 pace its reaction (Q.764 §2.10.2).
		if now := n.clock.Now(); n.cfg.Variant != ANSI && now.Sub(ls.congEvent) >= time.Second {
			ls.congEvent = now
			n.congestionEvents(ls)
		}
	}
	b := AppendMSU(n.cfg.Variant, make([]byte, 0, 8+len(m.Payload)), lbl, m.Payload)
	ok := n.sendOn(ls, lbl.SLS, b, lbl.MP)
	n.unlock()
	if !ok {
		return mtp.ErrUnavailable
	}
	return nil
}

// --- congestion ---

// linkCongestion updates a link's level from what waits in it.
func (n *Node) linkCongestion(l *link) {
	o := l.l2.Outstanding()
	lvl := l.congLevel
	on := n.cfg.CongestionOnset
	for k := uint8(3); k > lvl; k-- {
		if o >= on[k-1] {
			lvl = k
			break
		}
	}
	for lvl > 0 && o < on[lvl-1]/2 {
		lvl--
	}
	if l.busy && lvl == 0 {
		lvl = 1
	}
	l.congLevel = lvl
}

// linksetCongestion recomputes the linkset's level; a change is told to the
// user for every destination routed over it, and while congested the level
// is polled so that its end is seen without traffic.
func (n *Node) linksetCongestion(ls *linkset) {
	var lvl uint8
	for _, l := range ls.links {
		if l.state == lsAvailable {
			lvl = max(lvl, l.congLevel)
		}
	}
	if lvl == ls.congLevel {
		return
	}
	ls.congLevel = lvl
	if lvl > 0 || n.cfg.Variant == ANSI {
		ls.congEvent = n.clock.Now()
		n.congestionEvents(ls)
	}
	if lvl > 0 && !ls.congPoll {
		ls.congPoll = true
		n.pollCongestion(ls)
	}
}

func (n *Node) pollCongestion(ls *linkset) {
	n.after(100*time.Millisecond, &ls.epoch, func() {
		for _, l := range ls.links {
			if l.state == lsAvailable {
				n.linkCongestion(l)
			}
		}
		n.linksetCongestion(ls)
		if ls.congLevel > 0 {
			n.pollCongestion(ls)
			return
		}
		ls.congPoll = false
	})
}

func (n *Node) congestionEvents(ls *linkset) {
	for _, pc := range n.order {
		d := n.dests[pc]
		if !d.reachable || n.routeName(d) != ls.name {
			continue
		}
		if n.cfg.Variant == ANSI {
			n.emit(mtp.Congestion{Peer: ls.name, PC: pc, Level: ls.congLevel, LevelGiven: true})
		} else {
			n.emit(mtp.Congestion{Peer: ls.name, PC: pc, Level: 1})
		}
	}
}

// --- status ---

// LinkStatus is one link's state for status output.
type LinkStatus struct {
	Linkset, Link string
	SLC           uint8
	State         string
	SLS           int // SLSs it carries
	MSUsOut       uint64
	MSUsIn        uint64
	SLTPassed     uint64
	SLTFailed     uint64
	Changeovers   uint64
	Changebacks   uint64
	Retrieved     uint64
	Failures      uint64
	LastFailure   string
}

// LinksetStatus is one linkset's state.
type LinksetStatus struct {
	Name      string
	Adjacent  mtp.PointCode
	Available bool // traffic restart done, a link available
	Links     []LinkStatus
}

// Status reports every linkset and link.
func (n *Node) Status() []LinksetStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []LinksetStatus
	for _, ls := range n.sets {
		st := LinksetStatus{Name: ls.name, Adjacent: ls.adj, Available: ls.allowed}
		for _, l := range ls.links {
			st.Links = append(st.Links, LinkStatus{Linkset: ls.name, Link: l.l2.Name(), SLC: l.slc, State: l.state.String(),
				SLS: len(n.slsOf(ls, l)), MSUsOut: l.stats.MSUsOut.Load(), MSUsIn: l.stats.MSUsIn.Load(),
				SLTPassed: l.stats.SLTPassed.Load(), SLTFailed: l.stats.SLTBad.Load(),
				Changeovers: l.stats.Changeovers.Load(), Changebacks: l.stats.Changebacks.Load(),
				Retrieved: l.stats.Retrieved.Load(), Failures: l.stats.Failures.Load(), LastFailure: l.lastFailure})
		}
		out = append(out, st)
	}
	return out
}

// Reachable reports whether dpc can be reached now.
func (n *Node) Reachable(dpc mtp.PointCode) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.dests[dpc]
	return d != nil && d.reachable
}

// Routes reports whether dpc has a route here (an adjacent point or a
// configured route), reachable or not: a gateway with M3UA beside this node
// sends the rest there.
func (n *Node) Routes(dpc mtp.PointCode) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dests[dpc] != nil
}
