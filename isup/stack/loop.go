package stack

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp"
)

// Queue names one of the stack's two queues.
type Queue uint8

// Queues.
const (
	Inbound  Queue = iota // messages and indications from the MTP
	Outbound              // requests from hosts
)

func (d Queue) String() string {
	if d == Inbound {
		return "inbound"
	}
	return "outbound"
}

// Transfer sends one MTP-TRANSFER request. It must not keep m.Payload after it
// returns (the stack reuses the buffer).
type Transfer func(m *mtp.Message) error

// Stack runs the core in one goroutine fed by two bounded queues.
type Stack struct {
	core     *core
	transfer Transfer
	sink     func(Event)
	inbound  chan item
	outbound chan item
	now      func() time.Time
	// slow, when set, runs before every item: a test hook that makes the loop
	// slower than its input, to drive congestion.
	slow        func()
	transferErr uint64
	started     chan struct{}
	// published is the latest snapshot, refreshed by the loop every second so
	// that metrics never wait behind a congested queue.
	published atomic.Pointer[Snapshot]
	// edgeAdmit decides on outseizes before they are queued; edgeRefused
	// counts its refusals by status (they never reach the loop's stats).
	edgeAdmit EdgeAdmission
	// The usual statuses (below edgeCounted) are counted without a lock:
	// under overload, a refusal is what the edge does most.
	edgeCount   [edgeCounted]atomic.Uint64
	edgeMu      sync.Mutex
	edgeRefused map[Status]uint64
	// outWait is how long the last host request or probe taken from the
	// outbound queue waited in it (nanoseconds), for OutboundWait.
	outWait atomic.Int64
	epoch   time.Time
	// idle is set while the loop waits with both queues empty.
	idle atomic.Bool
}

type item struct {
	msg   mtp.Message
	ev    mtp.Event
	req   Request
	probe *probe
	fn    func(*core)
	at    time.Duration // when a host request was queued (since epoch)
}

type probe struct {
	dir  Queue
	sent time.Time
	done func(time.Duration)
}

// Option configures a Stack.
type Option func(*Stack)

// WithQueueSize sets the capacity of each queue (default 65536). A full queue
// blocks its writer, which is the back-pressure the MTP and hosts feel.
func WithQueueSize(n int) Option {
	return func(s *Stack) {
		s.inbound, s.outbound = make(chan item, n), make(chan item, n)
	}
}

// WithIAMRefused makes f hear every incoming IAM refused, and why (for the
// operator's log). f runs on the stack's loop: it must not block.
func WithIAMRefused(f func(RefusedIAM)) Option { return func(s *Stack) { s.core.iamRefused = f } }

// WithHooks lets congestion control admit calls and set the REL's ACL.
func WithHooks(h Hooks) Option { return func(s *Stack) { s.core.hooks = h } }

// EdgeAdmission decides on an Outseize before it is queued, on the goroutine
// that submits it: decided false leaves the decision to the loop (the
// AdmitOutgoing hook, after the destination checks); StatusOK admits it (the
// loop does not ask AdmitOutgoing again); any other status refuses it at once:
// its Result goes to the sink from the submitting goroutine, and it never
// waits in the outbound queue nor costs the loop anything. It must be cheap
// and safe for concurrent use.
//
// This is what makes refusing under overload cheap: at outbound congestion the
// queue is long, and a refusal that waited in it would come late and keep the
// loop from the calls it admitted.
//
// An outseize it lets through may carry a Queued (q, nil for none): the stack
// tells it when the request leaves the outbound queue, so the edge can count
// per destination what waits there instead of the whole shared queue.
type EdgeAdmission func(dpc mtp.PointCode, route string) (st Status, decided bool, q Queued)

// Queued is told, once, that an outseize the edge let through has left the
// outbound queue: the loop took it, or SubmitContext gave up on it.
type Queued interface{ Dequeued() }

// edgeCounted bounds the statuses the edge counts in an array (every status
// the congestion control gives, 0x000C and 0x01xx, is below it).
const edgeCounted = 0x120

// WithEdgeAdmission installs an edge admission (see EdgeAdmission).
func WithEdgeAdmission(f EdgeAdmission) Option { return func(s *Stack) { s.edgeAdmit = f } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(s *Stack) { s.now = now } }

// WithSlowdown runs f before each queued item (tests and the demo use it to make
// the loop slower than its input).
func WithSlowdown(f func()) Option { return func(s *Stack) { s.slow = f } }

// New builds a stack. Events go to sink from the loop goroutine (and edge
// refusals from the goroutine that submitted the outseize, see
// WithEdgeAdmission): sink must not block. Messages go out through transfer.
func New(cfg Config, transfer Transfer, sink func(Event), opts ...Option) (*Stack, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if transfer == nil || sink == nil {
		return nil, errors.New("stack: transfer and sink are required")
	}
	s := &Stack{transfer: transfer, sink: sink, now: time.Now, started: make(chan struct{}), edgeRefused: map[Status]uint64{}}
	s.core = newCore(cfg, time.Now(), s.out, sink)
	WithQueueSize(65536)(s)
	for _, o := range opts {
		o(s)
	}
	s.core.now = s.now()
	s.epoch = s.core.now
	if cfg.StateFile != "" {
		st, err := loadState(cfg.StateFile)
		if err != nil {
			return nil, err
		}
		if err := s.core.applyState(st); err != nil {
			return nil, err
		}
		path := cfg.StateFile
		s.core.persist = func() {
			if err := saveState(path, s.core.currentState()); err != nil {
				s.sink(Alarm{Kind: AlarmBlockingUnanswered, Text: "cannot save the blocking state: " + err.Error()})
			}
		}
	}
	return s, nil
}

func (s *Stack) out(lbl mtp.Label, payload []byte) {
	m := mtp.Message{Label: lbl, Payload: payload}
	if err := s.transfer(&m); err != nil {
		s.transferErr++
	}
}

// inboundWeight is how many inbound items the loop takes for each waiting
// outbound one. Messages from the network finish calls already admitted; host
// requests are mostly new work. Serving the network first keeps goodput under
// overload and makes the outbound queue, where new calls wait, the one that
// congests, so new calls are refused (0x0C) rather than old ones lost.
const inboundWeight = 4

// Run processes the queues and timers until ctx ends.
func (s *Stack) Run(ctx context.Context) error {
	c := s.core
	c.advance(s.now())
	c.start()
	close(s.started)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	publish := time.NewTicker(time.Second)
	defer publish.Stop()
	s.publish()
	var armed time.Time
	burst, n := 0, 0
	for {
		if at, ok := c.nextDeadline(); ok && !at.Equal(armed) {
			armed = at
			timer.Reset(time.Until(at))
		}
		// While items keep coming the blocking select below is not reached:
		// look at the context and the publish ticker every so often.
		if n++; n%256 == 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-publish.C:
				s.publish()
			default:
			}
		}
		if burst >= inboundWeight {
			burst = 0
			select {
			case it := <-s.outbound:
				c.advance(s.handle(it))
				continue
			default:
				s.outboundEmpty()
			}
		}
		select {
		case it := <-s.inbound:
			burst++
			c.advance(s.handle(it))
			continue
		default:
		}
		select {
		case it := <-s.outbound:
			burst = 0
			c.advance(s.handle(it))
			continue
		default:
			s.outboundEmpty()
		}
		// Both queues are empty: the loop is idle until something comes.
		s.idle.Store(true)
		select {
		case <-ctx.Done():
			s.idle.Store(false)
			return ctx.Err()
		case it := <-s.inbound:
			s.idle.Store(false)
			burst++
			s.handle(it)
		case it := <-s.outbound:
			s.idle.Store(false)
			burst = 0
			s.handle(it)
		case <-timer.C:
			s.idle.Store(false)
			armed = time.Time{}
		case <-publish.C:
			s.idle.Store(false)
			s.publish()
		}
		c.advance(s.now())
	}
}

// handle processes one item and returns the time it read, so the loop
// advances the timers on that reading instead of asking the clock again: a
// clock read per item is measurable on the path every call takes.
func (s *Stack) handle(it item) time.Time {
	if s.slow != nil {
		s.slow()
	}
	c := s.core
	switch {
	case it.probe != nil:
		now := s.now()
		d := now.Sub(it.probe.sent)
		if it.probe.dir == Outbound {
			s.outWait.Store(int64(d))
		}
		it.probe.done(d)
		return now
	case it.fn != nil:
		it.fn(c)
	case it.req != nil:
		if o, ok := it.req.(Outseize); ok {
			o.leftQueue()
		}
		now := s.now()
		c.reqWait = now.Sub(s.epoch) - it.at
		s.outWait.Store(int64(c.reqWait))
		c.advance(now)
		c.request(it.req)
		c.reqWait = 0
		return now
	case it.ev != nil:
		c.mtpEvent(it.ev)
	default:
		now := s.now()
		c.advance(now)
		c.receive(it.msg.Label, it.msg.Payload)
		return now
	}
	return s.now()
}

// Deliver queues an MTP-TRANSFER indication. The stack keeps m.Payload.
func (s *Stack) Deliver(m mtp.Message) { s.inbound <- item{msg: m} }

// MTPEvent queues an MTP status indication.
func (s *Stack) MTPEvent(e mtp.Event) { s.inbound <- item{ev: e} }

// Submit queues a host request; its Result comes through the sink. It blocks
// while the outbound queue is full.
func (s *Stack) Submit(r Request) {
	if r, refused := s.edge(r); !refused { // a blocking send always lands: the loop dequeues it
		s.outbound <- item{req: r, at: s.now().Sub(s.epoch)}
	}
}

// SubmitContext is Submit that gives up when ctx ends (a stopped or stuck
// loop must not hold a host connection's reader forever).
func (s *Stack) SubmitContext(ctx context.Context, r Request) error {
	r, refused := s.edge(r)
	if refused {
		return nil
	}
	select {
	case s.outbound <- item{req: r, at: s.now().Sub(s.epoch)}:
		return nil
	case <-ctx.Done():
		if o, ok := r.(Outseize); ok {
			o.leftQueue()
		}
		return ctx.Err()
	}
}

// edge applies the edge's checks (Screen) to an outseize: refused reports
// that its Result was sent already.
func (s *Stack) edge(r Request) (_ Request, refused bool) {
	o, ok := r.(Outseize)
	if !ok || o.screened {
		return r, false
	}
	o, st := s.Screen(o)
	if st != StatusOK {
		s.sink(Result{Tag: o.Tag, Status: st, Owner: o.Owner})
		return nil, true
	}
	return o, false
}

// Screen applies the edge's checks to an outseize before it is submitted:
// the edge admission (if any), then the circuits (edgeHunt). It serves a
// caller that answers a refusal itself: the host API, for which a
// refused outseize, the work the gateway does most under overload, then
// costs no bookkeeping of a pending request and no Result through the sink.
// A refusal is counted as the edge counts it and its status returned (no
// Result is sent); what passes (StatusOK) carries the edge's decision and
// is to be submitted as returned, which does not apply the edge again.
func (s *Stack) Screen(o Outseize) (Outseize, Status) {
	if o.screened {
		return o, StatusOK
	}
	if s.edgeAdmit != nil {
		st, decided, q := s.edgeAdmit(o.DPC, o.Route)
		switch {
		case !decided:
			o.queued = q // nil when the edge leaves it to the loop untouched
		case st == StatusOK:
			o.admitted = true
		default:
			return o, s.refusedAtEdge(st)
		}
	}
	// After the admission, as in the loop (outseize): a call the admission
	// refuses is refused for that, whatever the circuits.
	if pe, ok := s.core.edgeHunt(o); !ok {
		o.leftQueue() // the admission counted it as queued
		return o, s.refusedAtEdge(StatusNoCircuit)
	} else if pe != nil {
		o.hunting = pe
	}
	o.screened = true
	return o, StatusOK
}

// refusedAtEdge counts a refusal the edge gives and returns its status.
func (s *Stack) refusedAtEdge(st Status) Status {
	if st < edgeCounted {
		s.edgeCount[st].Add(1)
		return st
	}
	s.edgeMu.Lock()
	s.edgeRefused[st]++
	s.edgeMu.Unlock()
	return st
}

// edgeHunt is the loop's hunt (outseize) checked at the edge, without the
// loop: under a flood most outseizes find every circuit busy, and refusing
// them here (0x0101) spares each a trip through the outbound queue and the
// loop, which the calls that hold the circuits need. It refuses (ok false)
// only an outseize the loop would refuse for want of a circuit: one that
// hunts (no CIC asked), passes the loop's earlier checks (a destination
// configured and reachable, not draining, called digits, no continuity
// check), and finds no idle circuit that the outseizes let through before
// it, still queued, will not take. What it lets hunt is counted in the
// peer's queued (pe) until it leaves the queue; anything else (pe nil) the
// loop decides. Circuits freed meanwhile serve the next outseize: under a
// flood one follows within microseconds, and without one nothing is lost.
func (c *core) edgeHunt(o Outseize) (pe *peerEdge, ok bool) {
	if o.HasCIC || o.Called.Digits.Len() == 0 || o.asksContinuity() || c.drainingEdge.Load() {
		return nil, true
	}
	pe = c.edgePeer(o.DPC, o.Route)
	if pe == nil || pe.closed.Load() {
		return nil, true
	}
	if pe.idle.Load() <= pe.queued.Load() {
		return nil, false
	}
	pe.queued.Add(1) // checked, then counted: a few may pass over, which the loop refuses exactly
	return pe, true
}

// edgePeer is the edge's view of the circuit group an outseize to dpc (or
// to the named route) goes to, nil when none is configured.
func (c *core) edgePeer(dpc mtp.PointCode, route string) *peerEdge {
	p, found := c.peerByPC[dpc] // both maps are built once, before the loop runs
	if route != "" {
		p, found = c.peerByName[route]
	}
	if !found {
		return nil
	}
	return &c.peers[p].edge
}

// Closed reports, without the loop and safe for concurrent use, whether the
// loop refuses calls to dpc (or to the named route) as unavailable (0x0102):
// MTP paused it or its ISUP user part is unavailable. The loop checks that
// before it asks the admission (outseize), so an edge admission must not
// answer such a call with a congestion refusal: the host would back off
// and retry a destination it should route around, and the admission would
// count a refusal that says nothing about its load.
func (s *Stack) Closed(dpc mtp.PointCode, route string) bool {
	pe := s.core.edgePeer(dpc, route)
	return pe != nil && pe.closed.Load()
}

// Probe sends a marker through a queue; done gets the time it waited, from the
// loop goroutine. This is the queue delay a new message would see.
func (s *Stack) Probe(d Queue, done func(time.Duration)) {
	it := item{probe: &probe{dir: d, sent: s.now(), done: done}}
	if d == Inbound {
		s.inbound <- it
	} else {
		s.outbound <- it
	}
}

// OutboundWait estimates the wait a host request queued now would see: zero
// while the loop is idle with nothing queued, else the wait of the last
// request or probe the loop took from the outbound queue (reset when the loop
// finds that queue empty: then a new request waits only behind a few inbound
// items). An empty outbound queue alone does not mean no wait: the loop may
// be working through an inbound backlog, or not yet awake to requests just
// queued. It is cheap and safe for concurrent use (the level-1 throttle asks
// it for every outseize).
func (s *Stack) OutboundWait() time.Duration {
	if s.idle.Load() && len(s.outbound) == 0 {
		return 0
	}
	return time.Duration(s.outWait.Load())
}

// outboundEmpty forgets the last outbound wait once the loop has found the
// outbound queue empty, so that a wait from an old backlog does not outlive it.
func (s *Stack) outboundEmpty() {
	if s.outWait.Load() != 0 {
		s.outWait.Store(0)
	}
}

// QueueLen reports how many items wait in a queue.
func (s *Stack) QueueLen(d Queue) int {
	if d == Inbound {
		return len(s.inbound)
	}
	return len(s.outbound)
}

// Snapshot is a consistent view of the stack, taken in the loop.
type Snapshot struct {
	Stats           Stats
	Calls           int
	PendingTimers   int
	CircuitsByState map[string]int
	TransferErrors  uint64
	// Groups counts each circuit group's circuits (maint.go).
	Groups []GroupSummary
}

func (s *Stack) publish() {
	snap := s.snapshot()
	s.published.Store(&snap)
}

// Stats returns the snapshot the loop published last (at most a second old),
// without waiting for the loop.
func (s *Stack) Stats() Snapshot {
	if p := s.published.Load(); p != nil {
		return *p
	}
	return Snapshot{}
}

// Inspect returns a Snapshot, waiting for the loop to produce it.
func (s *Stack) Inspect(ctx context.Context) (Snapshot, error) {
	ch := make(chan Snapshot, 1)
	select {
	case s.outbound <- item{fn: func(c *core) { ch <- s.snapshot() }}:
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	}
	select {
	case snap := <-ch:
		return snap, nil
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	}
}

func (s *Stack) snapshot() Snapshot {
	c := s.core
	st := c.stats
	st.Refused = make(map[Status]uint64, len(c.stats.Refused))
	for k, v := range c.stats.Refused {
		st.Refused[k] = v
	}
	for k := range s.edgeCount {
		if v := s.edgeCount[k].Load(); v != 0 {
			st.Refused[Status(k)] += v
		}
	}
	s.edgeMu.Lock()
	for k, v := range s.edgeRefused {
		st.Refused[k] += v
	}
	s.edgeMu.Unlock()
	return Snapshot{Stats: st, Calls: len(c.calls), PendingTimers: c.pendingTimers(), CircuitsByState: c.circuitCounts(), TransferErrors: s.transferErr, Groups: c.groupSummaries()}
}

// circuitCounts counts circuits by a readable state name.
func (c *core) circuitCounts() map[string]int {
	out := map[string]int{}
	for i := range c.circuits {
		out[c.circuits[i].describe()]++
	}
	return out
}

func (cc *circuit) describe() string {
	s := [...]string{"idle", "outgoing busy", "incoming busy", "releasing", "held"}[cc.state]
	if cc.block&(blkLocalMaint|blkLocalHW) != 0 {
		s += ", locally blocked"
	}
	if cc.block&(blkRemoteMaint|blkRemoteHW) != 0 {
		s += ", remotely blocked"
	}
	for _, p := range [...]struct {
		bit  uint8
		name string
	}{{pendBLO, "BLA"}, {pendUBL, "UBA"}, {pendRSC, "RLC to RSC"}, {pendGRS, "GRA"}} {
		if cc.pend&p.bit != 0 {
			s += ", awaiting " + p.name
		}
	}
	return s
}
