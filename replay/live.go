package replay

import (
	"bufio"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

// LiveConfig says how to replay a capture against a gateway.
type LiveConfig struct {
	Addr netip.AddrPort // the gateway's M3UA address
	// As is the point code whose messages are sent; Peer the gateway's point
	// code (0: the point code As talks to in the capture).
	As, Peer  uint32
	Role      m3ua.Role      // RoleIPSP (default) or RoleASP
	Transport transport.Kind // transport.KindUDP by default (userspace SCTP over UDP)
	// RoutingContext, if HasRC, is sent in ASP Active and DATA.
	RoutingContext uint32
	HasRC          bool
	// Speed scales the capture's timing: 1 original, 10 ten times faster, 0
	// as fast as per-CIC causality allows.
	Speed float64
	// Wait bounds how long an answer the capture shows is awaited before the
	// CIC's script goes on without it (default 10 s); Connect bounds the
	// association set-up (default 10 s).
	Wait, Connect time.Duration
	// Settle is how long, once the association is active, the replay waits
	// for the gateway's start-up circuit resets before it begins (default
	// 1 s; it begins sooner once every CIC of the capture was reset). A
	// gateway that starts resets every circuit (GRS, Q.764 2.9.3.1) and
	// refuses an IAM on a circuit still awaiting its GRA; a negative value
	// does not wait.
	Settle  time.Duration
	Variant isup.Variant
	// NI overrides the network indicator of the capture when HasNI.
	NI    uint8
	HasNI bool
	// Log receives progress lines (association up, unsolicited messages);
	// nil discards them.
	Log io.Writer
	// M3UAOptions are passed to the endpoint (e.g. m3ua.WithCapture).
	M3UAOptions []m3ua.Option
}

// CICResult compares one CIC's exchange with the capture.
type CICResult struct {
	CIC      uint16
	Sent     []isup.MessageType // what we sent (the As side of the capture)
	Expected []isup.MessageType // what the other side sent in the capture
	Got      []isup.MessageType // what the gateway sent
	Notes    []string           // timeouts, abandoned script, ...
	// ExpectedCauses and GotCauses are the cause values of the RELs in
	// Expected and Got, by position (-1 where none).
	ExpectedCauses, GotCauses []int
}

// Match reports whether the gateway sent exactly the capture's message types.
func (r *CICResult) Match() bool { return slices.Equal(r.Expected, r.Got) }

// LiveResult is the outcome of a live replay.
type LiveResult struct {
	As, Peer       uint32
	CICs           []CICResult // in CIC order
	Sent, Received int
	// Unsolicited lists gateway requests the capture does not show (e.g. a
	// start-up GRS), each answered automatically.
	Unsolicited []string
	// StartupResets counts the CICs the gateway reset (GRS, RSC) before the
	// replay began, answered first.
	StartupResets int
	Ignored       int // messages from the gateway that are not ISUP for us
	// Queries counts the CQMs sent at the end to make sure the gateway
	// processed our last messages before the association closes (see flush).
	Queries  int
	Duration time.Duration
}

// Differ counts the CICs whose answers differ from the capture.
func (r *LiveResult) Differ() int {
	n := 0
	for i := range r.CICs {
		if !r.CICs[i].Match() {
			n++
		}
	}
	return n
}

type sendStep struct {
	msg      *Msg
	needRecv int           // answers from the gateway that must have arrived first
	at       time.Duration // offset from the start, scaled
}

type cicRun struct {
	cic      uint16
	sends    []sendStep
	next     int
	credit   int // answers waived after a timeout
	got      []isup.MessageType
	gotCause []int
	expected []isup.MessageType
	expCause []int
	sent     []isup.MessageType
	notes    []string
	queued   bool // in the ready heap
	version  int  // bumped on every activity; stale deadlines are ignored
	done     bool
}

func (c *cicRun) answered() int { return len(c.got) + c.credit }

// ready: the next send's answers are in (or waived).
func (c *cicRun) ready() bool {
	return !c.done && c.next < len(c.sends) && c.answered() >= c.sends[c.next].needRecv
}

// waiting: answers are outstanding that something depends on, or that end the script.
func (c *cicRun) waiting() bool {
	if c.done {
		return false
	}
	if c.next < len(c.sends) {
		return c.answered() < c.sends[c.next].needRecv
	}
	return c.answered() < len(c.expected)
}

func (c *cicRun) finished() bool {
	return c.done || (c.next >= len(c.sends) && c.answered() >= len(c.expected))
}

// Script splits the capture's messages between As and the other side; peer
// 0 takes the point code As sends its first message to.
func script(msgs []Msg, as, peer uint32, speed float64) (map[uint16]*cicRun, uint32, error) {
	if peer == 0 {
		for i := range msgs {
			if msgs[i].OPC == as {
				peer = msgs[i].DPC
				break
			}
		}
		if peer == 0 {
			return nil, 0, fmt.Errorf("point code %d sends no ISUP message in the capture", as)
		}
	}
	runs := map[uint16]*cicRun{}
	var t0 time.Time
	sends := 0
	for i := range msgs {
		m := &msgs[i]
		out := m.OPC == as && m.DPC == peer
		in := m.OPC == peer && m.DPC == as
		if !out && !in {
			continue
		}
		if t0.IsZero() {
			t0 = m.Time
		}
		r := runs[m.CIC]
		if r == nil {
			r = &cicRun{cic: m.CIC}
			runs[m.CIC] = r
		}
		if in {
			r.expected = append(r.expected, m.Type)
			r.expCause = append(r.expCause, causeOf(m.Msg))
			continue
		}
		var at time.Duration
		if speed > 0 {
			at = time.Duration(float64(m.Time.Sub(t0)) / speed)
		}
		r.sends = append(r.sends, sendStep{msg: m, needRecv: len(r.expected), at: max(at, 0)})
		sends++
	}
	if sends == 0 {
		return nil, 0, fmt.Errorf("point code %d sends no ISUP message to %d in the capture", as, peer)
	}
	return runs, peer, nil
}

// readyHeap orders CICs by the time of their next send, then capture order.
type readyHeap []*cicRun

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	a, b := h[i].sends[h[i].next], h[j].sends[h[j].next]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.msg.Index < b.msg.Index
}
func (h readyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)   { *h = append(*h, x.(*cicRun)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type deadline struct {
	at      time.Time
	run     *cicRun
	version int
}

type deadlineHeap []deadline

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// inbox is an unbounded queue between the endpoint and the replay loop, so
// that reading indications never waits for the loop (which may itself be
// waiting for the association to take a message).
type inbox struct {
	mu     sync.Mutex
	q      []mtp.Message
	notify chan struct{}
}

func (b *inbox) put(m mtp.Message) {
	b.mu.Lock()
	b.q = append(b.q, m)
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

func (b *inbox) take() []mtp.Message {
	b.mu.Lock()
	q := b.q
	b.q = nil
	b.mu.Unlock()
	return q
}

// Live replays the As side of msgs against the gateway at cfg.Addr and
// compares the gateway's answers per CIC with the capture.
func Live(ctx context.Context, cfg LiveConfig, msgs []Msg) (*LiveResult, error) {
	if cfg.Speed < 0 {
		return nil, errors.New("replay: negative speed")
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 10 * time.Second
	}
	if cfg.Connect <= 0 {
		cfg.Connect = 10 * time.Second
	}
	if cfg.Role == 0 {
		cfg.Role = m3ua.RoleIPSP
	}
	if cfg.Transport == transport.KindAuto {
		cfg.Transport = transport.KindUDP
	}
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	runs, peer, err := script(msgs, cfg.As, cfg.Peer, cfg.Speed)
	if err != nil {
		return nil, err
	}
	ni := uint8(2)
	for i := range msgs {
		if msgs[i].OPC == cfg.As {
			ni = msgs[i].NI
			break
		}
	}
	if cfg.HasNI {
		ni = cfg.NI
	}

	p := m3ua.Peer{Name: "gateway", Dial: cfg.Addr, DPCs: []mtp.PointCode{mtp.PointCode(peer)}}
	if cfg.HasRC {
		p.RoutingContexts = []uint32{cfg.RoutingContext}
	}
	ep, err := m3ua.New(m3ua.Config{Role: cfg.Role, Transport: cfg.Transport, Peers: []m3ua.Peer{p}}, cfg.M3UAOptions...)
	if err != nil {
		return nil, err
	}
	epCtx, stop := context.WithCancel(ctx)
	if err := ep.Start(epCtx); err != nil {
		stop()
		return nil, err
	}
	box := &inbox{notify: make(chan struct{}, 1)}
	down := make(chan string, 1)
	active := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-epCtx.Done():
				return
			case m := <-ep.Indications():
				box.put(m)
			}
		}
	}()
	go func() {
		defer wg.Done()
		up := false
		for {
			select {
			case <-epCtx.Done():
				return
			case ev := <-ep.Events():
				ps, ok := ev.(*mtp.PeerState)
				if !ok {
					if v, ok2 := ev.(mtp.PeerState); ok2 {
						ps, ok = &v, true
					}
				}
				if !ok {
					continue
				}
				switch {
				case ps.State == "active" && !up:
					up = true
					close(active)
				case ps.State != "active" && up:
					select {
					case down <- fmt.Sprintf("association %s: %s", ps.State, ps.Reason):
					default:
					}
				}
			}
		}
	}()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = ep.Close(closeCtx)
		cancel()
		stop()
		wg.Wait()
	}()

	connect := time.NewTimer(cfg.Connect)
	select {
	case <-active:
		connect.Stop()
	case <-connect.C:
		return nil, fmt.Errorf("replay: no active M3UA association with %s within %v", cfg.Addr, cfg.Connect)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	fmt.Fprintf(logw, "association with %s active (%s over %s); replaying as point code %d towards %d\n",
		cfg.Addr, cfg.Role, cfg.Transport, cfg.As, peer)

	lr := &LiveResult{As: cfg.As, Peer: peer}
	l := &liveLoop{cfg: cfg, ep: ep, peer: peer, ni: ni, runs: runs, res: lr, log: logw,
		sent: map[uint8][2]int{}, recv: map[uint16]int{}}
	early, err := l.settle(ctx, box, down)
	if err == nil {
		err = l.run(ctx, box, down, early)
	}
	lr.Duration = time.Since(l.start)
	cics := make([]uint16, 0, len(runs))
	for c := range runs {
		cics = append(cics, c)
	}
	slices.Sort(cics)
	for _, c := range cics {
		r := runs[c]
		lr.CICs = append(lr.CICs, CICResult{CIC: c, Sent: r.sent, Expected: r.expected, Got: r.got, Notes: r.notes,
			ExpectedCauses: r.expCause, GotCauses: r.gotCause})
	}
	return lr, err
}

type liveLoop struct {
	cfg   LiveConfig
	ep    *m3ua.Endpoint
	peer  uint32
	ni    uint8
	runs  map[uint16]*cicRun
	res   *LiveResult
	log   io.Writer
	start time.Time
	seq   int              // messages sent or received so far
	sent  map[uint8][2]int // per SLS: CIC and seq of our last message on it
	recv  map[uint16]int   // per CIC: seq of the gateway's last message on it
	flush map[uint16]bool  // CQMs awaiting their CQR
	ready readyHeap
	dl    deadlineHeap
	open  int // CICs not finished
}

// settle answers the gateway's start-up resets before the replay begins: it
// returns once every CIC of the capture was reset, or when no reset came for
// cfg.Settle. Other messages that arrive meanwhile are returned for the
// replay to take in order.
func (l *liveLoop) settle(ctx context.Context, box *inbox, down <-chan string) ([]mtp.Message, error) {
	quiet := l.cfg.Settle
	if quiet == 0 {
		quiet = time.Second
	}
	if quiet < 0 {
		return nil, nil
	}
	pending := map[uint16]bool{}
	for cic := range l.runs {
		pending[cic] = true
	}
	var early []mtp.Message
	answered := map[uint8]uint16{} // per SLS, the CIC of our last GRA or RLC on it
	timer := time.NewTimer(quiet)
	defer timer.Stop()
wait:
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case why := <-down:
			return nil, fmt.Errorf("replay: %s", why)
		case <-timer.C:
			break wait
		case <-box.notify:
			for _, m := range box.take() {
				first, last, ok := l.resetRange(&m)
				if !ok {
					early = append(early, m)
					continue
				}
				cic, t, _ := isup.Peek(m.Payload, l.cfg.Variant)
				l.seq++
				l.recv[cic] = l.seq
				l.res.Received++
				if err := l.autoAnswer(cic, t, &m); err != nil {
					return nil, err
				}
				answered[m.SLS] = cic
				for c := int(first); c <= int(last); c++ {
					delete(pending, uint16(c))
				}
				l.res.StartupResets += int(last) - int(first) + 1
				timer.Reset(quiet)
			}
		}
	}
	return l.confirm(ctx, box, down, answered, early)
}

// confirm makes sure the gateway took our answers to its resets before the
// first IAM: the endpoint reads each SCTP stream on its own goroutine, so an
// IAM on another SLS could overtake the GRA and meet a circuit still awaiting
// it (released with cause 44). A CQM after the last answer on each SLS, on
// the same stream, comes back as CQR only once everything before it was
// processed (the check flushAll makes at the end).
func (l *liveLoop) confirm(ctx context.Context, box *inbox, down <-chan string, answered map[uint8]uint16, early []mtp.Message) ([]mtp.Message, error) {
	waiting := map[uint16]bool{}
	for sls, cic := range answered {
		b, err := isup.Marshal(&isup.CircuitQuery{Circuit: isup.Circuit{CIC: cic}}, l.cfg.Variant)
		if err != nil {
			return nil, err
		}
		if err := l.transfer(sls, b); err != nil {
			return nil, fmt.Errorf("replay: CQM after the start-up resets on cic=%d: %w", cic, err)
		}
		waiting[cic] = true
		l.res.Queries++
	}
	timer := time.NewTimer(l.cfg.Wait)
	defer timer.Stop()
	for len(waiting) > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case why := <-down:
			return nil, fmt.Errorf("replay: %s", why)
		case <-timer.C:
			fmt.Fprintf(l.log, "no CQR within %v for the CQM after the start-up resets on %d CICs; replaying anyway\n", l.cfg.Wait, len(waiting))
			return early, nil
		case <-box.notify:
			for _, m := range box.take() {
				if cic, t, err := isup.Peek(m.Payload, l.cfg.Variant); err == nil && waiting[cic] && (t == isup.CQR || t == isup.UCIC) &&
					m.SI == mtp.SIISUP && uint32(m.OPC) == l.peer {
					delete(waiting, cic)
					l.seq++
					l.recv[cic] = l.seq
					continue
				}
				early = append(early, m)
			}
		}
	}
	return early, nil
}

// resetRange is the CICs a GRS or RSC from the gateway resets.
func (l *liveLoop) resetRange(m *mtp.Message) (first, last uint16, ok bool) {
	if m.SI != mtp.SIISUP || uint32(m.OPC) != l.peer || uint32(m.DPC) != l.cfg.As {
		return 0, 0, false
	}
	msg, err := isup.Decode(m.Payload, l.cfg.Variant)
	if err != nil {
		return 0, 0, false
	}
	switch x := msg.(type) {
	case *isup.GroupReset:
		if x.Kind == isup.GRS {
			return x.CIC, x.CIC + uint16(x.RangeAndStatus.Range), true
		}
	case *isup.Simple:
		if x.Kind == isup.RSC {
			return x.CIC, x.CIC, true
		}
	}
	return 0, 0, false
}

func (l *liveLoop) run(ctx context.Context, box *inbox, down <-chan string, early []mtp.Message) error {
	l.start = time.Now()
	for _, r := range l.runs {
		if r.finished() {
			continue
		}
		l.open++
		l.update(r)
	}
	for _, m := range early {
		if err := l.receive(&m); err != nil {
			return err
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for l.open > 0 {
		now := time.Since(l.start)
		// Send everything that is due.
		for l.ready.Len() > 0 && l.ready[0].sends[l.ready[0].next].at <= now {
			r := heap.Pop(&l.ready).(*cicRun)
			r.queued = false
			if r.done {
				continue
			}
			if err := l.send(r); err != nil {
				return err
			}
			l.update(r)
		}
		// Expire waits.
		for l.dl.Len() > 0 && !l.dl[0].at.After(time.Now()) {
			d := heap.Pop(&l.dl).(deadline)
			r := d.run
			if d.version != r.version || !r.waiting() {
				continue
			}
			need := len(r.expected)
			if r.next < len(r.sends) {
				need = r.sends[r.next].needRecv
			}
			what := "at the end"
			if r.next < len(r.sends) {
				what = "before " + r.sends[r.next].msg.Type.String()
			}
			r.notes = append(r.notes, fmt.Sprintf("after %v only %d of the %d answers the capture shows %s; went on", l.cfg.Wait, r.answered(), need, what))
			r.credit = need - len(r.got)
			l.update(r)
		}
		if l.open == 0 {
			break
		}
		// Sleep until the next send, deadline or message.
		wake := time.Hour
		if l.ready.Len() > 0 {
			wake = min(wake, l.ready[0].sends[l.ready[0].next].at-time.Since(l.start))
		}
		if l.dl.Len() > 0 {
			wake = min(wake, time.Until(l.dl[0].at))
		}
		if wake <= 0 {
			continue
		}
		timer.Reset(wake)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case why := <-down:
			return fmt.Errorf("replay: %s", why)
		case <-box.notify:
			for _, m := range box.take() {
				if err := l.receive(&m); err != nil {
					return err
				}
			}
		case <-timer.C:
		}
	}
	// Whatever has already arrived still counts.
	for _, m := range box.take() {
		if err := l.receive(&m); err != nil {
			return err
		}
	}
	return l.flushAll(ctx, box, down)
}

// flushAll makes sure the gateway has processed our last messages before
// the association closes. The M3UA endpoint reads each SCTP stream on its
// own goroutine, so the ASP Inactive that closing sends on stream 0 can
// overtake DATA still queued on another stream, which the gateway would then
// drop. Where our last message on an SLS (hence stream) got no answer, a CQM
// on the same CIC follows it; its CQR (or UCIC) proves everything before it
// on that stream was taken.
func (l *liveLoop) flushAll(ctx context.Context, box *inbox, down <-chan string) error {
	l.flush = map[uint16]bool{}
	for sls, last := range l.sent {
		cic, seq := uint16(last[0]), last[1]
		if l.recv[cic] > seq || l.flush[cic] {
			continue
		}
		b, err := isup.Marshal(&isup.CircuitQuery{Circuit: isup.Circuit{CIC: cic}}, l.cfg.Variant)
		if err != nil {
			return err
		}
		if err := l.transfer(sls, b); err != nil {
			return fmt.Errorf("replay: final CQM on cic=%d: %w", cic, err)
		}
		l.flush[cic] = true
		l.res.Queries++
	}
	timer := time.NewTimer(l.cfg.Wait)
	defer timer.Stop()
	for len(l.flush) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case why := <-down:
			return fmt.Errorf("replay: %s", why)
		case <-timer.C:
			fmt.Fprintf(l.log, "no CQR within %v for the final CQM on %d CICs\n", l.cfg.Wait, len(l.flush))
			return nil
		case <-box.notify:
			for _, m := range box.take() {
				if err := l.receive(&m); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// update files a CIC after something happened on it.
func (l *liveLoop) update(r *cicRun) {
	r.version++
	if r.finished() {
		if !r.done {
			r.done = true
			l.open--
		}
		return
	}
	if r.ready() && !r.queued {
		r.queued = true
		heap.Push(&l.ready, r)
	}
	if r.waiting() {
		heap.Push(&l.dl, deadline{at: time.Now().Add(l.cfg.Wait), run: r, version: r.version})
	}
}

func (l *liveLoop) send(r *cicRun) error {
	st := r.sends[r.next]
	r.next++
	m := st.msg
	if err := l.transfer(m.SLS, m.Raw); err != nil {
		return fmt.Errorf("replay: sending %s: %w", m, err)
	}
	r.sent = append(r.sent, m.Type)
	l.res.Sent++
	return nil
}

func (l *liveLoop) transfer(sls uint8, payload []byte) error {
	l.seq++
	if cic, _, err := isup.Peek(payload, l.cfg.Variant); err == nil {
		l.sent[sls] = [2]int{int(cic), l.seq}
	}
	return l.ep.Transfer(&mtp.Message{Label: mtp.Label{OPC: mtp.PointCode(l.cfg.As), DPC: mtp.PointCode(l.peer),
		SI: mtp.SIISUP, NI: l.ni, SLS: sls}, Payload: payload})
}

// requests the replayer answers by itself when the capture does not show them.
var autoAnswered = map[isup.MessageType]bool{isup.GRS: true, isup.RSC: true, isup.BLO: true, isup.UBL: true,
	isup.CGB: true, isup.CGU: true}

func (l *liveLoop) receive(m *mtp.Message) error {
	if m.SI != mtp.SIISUP || uint32(m.OPC) != l.peer || uint32(m.DPC) != l.cfg.As {
		l.res.Ignored++
		return nil
	}
	cic, t, err := isup.Peek(m.Payload, l.cfg.Variant)
	if err != nil {
		l.res.Ignored++
		return nil
	}
	l.seq++
	l.recv[cic] = l.seq
	if l.flush[cic] && (t == isup.CQR || t == isup.UCIC) {
		delete(l.flush, cic)
		return nil
	}
	l.res.Received++
	r := l.runs[cic]
	var next isup.MessageType
	if r != nil && len(r.got) < len(r.expected) {
		next = r.expected[len(r.got)]
	}
	if t != next && autoAnswered[t] {
		return l.autoAnswer(cic, t, m)
	}
	if r == nil {
		l.res.Unsolicited = append(l.res.Unsolicited, fmt.Sprintf("%s on cic=%d, which the capture does not use", t, cic))
		if t == isup.REL {
			return l.answerRLC(cic, m.SLS)
		}
		return nil
	}
	r.got = append(r.got, t)
	cause := -1
	if t == isup.REL {
		if msg, err := isup.Decode(m.Payload, l.cfg.Variant); err == nil {
			cause = causeOf(msg)
		}
	}
	r.gotCause = append(r.gotCause, cause)
	if t == isup.REL && next != isup.REL {
		// The gateway ended the call where the capture did not: clear the
		// circuit and stop this CIC's script.
		r.notes = append(r.notes, fmt.Sprintf("gateway sent REL where the capture has %s; answered RLC and stopped this CIC", nameOr(next)))
		if err := l.answerRLC(cic, m.SLS); err != nil {
			return err
		}
		if !r.done {
			r.done = true
			l.open--
		}
		return nil
	}
	l.update(r)
	return nil
}

// causeOf is a REL's cause value, -1 for other messages.
func causeOf(m isup.Message) int {
	if rel, ok := m.(*isup.Release); ok {
		return int(rel.Cause.Value)
	}
	return -1
}

// withCauses names the message types, a REL with its cause:
// "REL(44 requested circuit not available)".
func withCauses(ts []isup.MessageType, causes []int) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
		if i < len(causes) && causes[i] >= 0 {
			s[i] += fmt.Sprintf("(%d %s)", causes[i], CauseName(uint8(causes[i])))
		}
	}
	return strings.Join(s, " ")
}

func nameOr(t isup.MessageType) string {
	if t == 0 {
		return "nothing more"
	}
	return t.String()
}

func (l *liveLoop) answerRLC(cic uint16, sls uint8) error {
	b, err := isup.Marshal(&isup.ReleaseComplete{Circuit: isup.Circuit{CIC: cic}}, l.cfg.Variant)
	if err != nil {
		return err
	}
	return l.transfer(sls, b)
}

// autoAnswer acknowledges a supervision request the capture does not show.
func (l *liveLoop) autoAnswer(cic uint16, t isup.MessageType, m *mtp.Message) error {
	req, err := isup.Decode(m.Payload, l.cfg.Variant)
	if err != nil {
		l.res.Unsolicited = append(l.res.Unsolicited, fmt.Sprintf("%s on cic=%d, undecodable: %v", t, cic, err))
		return nil
	}
	var ans isup.Message
	switch x := req.(type) {
	case *isup.GroupReset:
		ans = &isup.GroupReset{Circuit: x.Circuit, Kind: isup.GRA, RangeAndStatus: isup.NewRangeAndStatus(x.RangeAndStatus.Range, true)}
	case *isup.GroupSupervision:
		kind := isup.CGBA
		if x.Kind == isup.CGU {
			kind = isup.CGUA
		}
		ans = &isup.GroupSupervision{Circuit: x.Circuit, Kind: kind, Type: x.Type, RangeAndStatus: x.RangeAndStatus}
	case *isup.Simple:
		kinds := map[isup.MessageType]isup.MessageType{isup.BLO: isup.BLA, isup.UBL: isup.UBA}
		if k, ok := kinds[x.Kind]; ok {
			ans = &isup.Simple{Circuit: x.Circuit, Kind: k}
		} else if x.Kind == isup.RSC {
			ans = &isup.ReleaseComplete{Circuit: x.Circuit}
		}
	}
	if ans == nil {
		return nil
	}
	b, err := isup.Marshal(ans, l.cfg.Variant)
	if err != nil {
		return err
	}
	desc := isup.DescribeString(req)
	if desc != "" {
		desc = " " + desc
	}
	line := fmt.Sprintf("%s on cic=%d%s, answered %s", t, cic, desc, ans.MessageType())
	l.res.Unsolicited = append(l.res.Unsolicited, line)
	fmt.Fprintf(l.log, "unsolicited %s\n", line)
	return l.transfer(m.SLS, b)
}

func typeNames(ts []isup.MessageType) []string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return s
}

// WriteLive prints one line per CIC (match or difference) and the totals.
func WriteLive(w io.Writer, r *LiveResult) error {
	bw := bufio.NewWriter(w)
	for i := range r.CICs {
		c := &r.CICs[i]
		verdict := "match"
		if !c.Match() {
			verdict = "DIFFER"
		}
		fmt.Fprintf(bw, "cic=%-5d %-6s sent %s; capture %s; gateway %s", c.CIC, verdict,
			orNone(strings.Join(typeNames(c.Sent), " ")), orNone(withCauses(c.Expected, c.ExpectedCauses)),
			orNone(withCauses(c.Got, c.GotCauses)))
		for _, n := range c.Notes {
			fmt.Fprintf(bw, "; %s", n)
		}
		bw.WriteByte('\n')
	}
	for _, u := range r.Unsolicited {
		fmt.Fprintf(bw, "unsolicited: %s\n", u)
	}
	if r.StartupResets > 0 {
		fmt.Fprintf(bw, "answered the gateway's start-up resets of %d CICs before replaying\n", r.StartupResets)
	}
	if causes := differingCauses(r); causes != "" {
		fmt.Fprintf(bw, "differing CICs released by the gateway with cause %s\n", causes)
	}
	fmt.Fprintf(bw, "replayed as point code %d against %d: %d CICs, %d match, %d differ; sent %d, received %d messages in %.3f s",
		r.As, r.Peer, len(r.CICs), len(r.CICs)-r.Differ(), r.Differ(), r.Sent, r.Received, r.Duration.Seconds())
	if r.Queries > 0 {
		fmt.Fprintf(bw, " (and %d CQM/CQR to confirm delivery)", r.Queries)
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// differingCauses tallies the gateway's REL causes on the CICs that differ:
// "44 requested circuit not available: 94".
func differingCauses(r *LiveResult) string {
	n := map[int]int{}
	for i := range r.CICs {
		c := &r.CICs[i]
		if c.Match() {
			continue
		}
		for _, v := range c.GotCauses {
			if v >= 0 {
				n[v]++
			}
		}
	}
	values := make([]int, 0, len(n))
	for v := range n {
		values = append(values, v)
	}
	slices.Sort(values)
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprintf("%d %s: %d", v, CauseName(uint8(v)), n[v])
	}
	return strings.Join(parts, ", ")
}
