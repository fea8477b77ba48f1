package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
)

// Options configure the calling side.
type Options struct {
	Network string // "tcp" or "unix" (default: unix for a path with a "/", else tcp)
	Address string // the gateway's host API, default 127.0.0.1:7700
	// Addresses are several gateways' host APIs instead of Address: the two
	// of an active/standby pair, or N gateways by point code. Each call goes
	// to one that is available for its destination, as host/client.Multi
	// chooses (client.Gateways: connected, not standby, serving the DPC, the
	// least loaded), and stays there: its events come from that connection.
	// A nak 0x0120 standby marks that gateway standby and the call is sent to
	// another (Redirected); with none, it is refused "standby".
	Addresses []string
	Token     string
	App       string // hello's app (default "isupgw-load")
	// Conns is how many host connections share the calls (default 2), to
	// each gateway.
	Conns    int
	Schedule Schedule
	// Hold is how long an answered call is held before we release it.
	Hold time.Duration
	// Concurrency caps the calls placed and not yet released (0: no cap);
	// calls due beyond it are skipped and counted.
	Concurrency int
	// Cooperative backs off on congestion refusals (0x0C, Code Yellow's
	// high traffic), as the CSP asks hosts to: calls it does not place are
	// skipped and counted (see backoff).
	Cooperative bool
	// Destinations: point codes or route names, used in turn.
	DPCs   []uint32
	Routes []string
	// Called and Calling number patterns (Called is required).
	Called, Calling Pattern
	// ReleaseCause is the cause of our releases (default 16, normal clearing).
	ReleaseCause uint8
	// Drain bounds the wait for calls to end after the schedule (default
	// Hold + 10 s).
	Drain time.Duration
	// LagLimit: a larger lag means the generator did not keep up (default 100 ms).
	LagLimit time.Duration
	Out      io.Writer // reports (default os.Stdout)
	JSON     bool      // JSON lines instead of text
	Quiet    bool      // only the final report
	// Clock and tick (tests): default time.Now and 1 ms.
	Now  func() time.Time
	Tick time.Duration
}

func (o *Options) defaults() error {
	if o.Address == "" {
		o.Address = "127.0.0.1:7700"
	}
	if len(o.Addresses) == 0 {
		o.Addresses = []string{o.Address}
	}
	if len(o.Addresses) > 64 {
		return errors.New("load: at most 64 gateway addresses")
	}
	if o.App == "" {
		o.App = "isupgw-load"
	}
	if o.Conns <= 0 {
		o.Conns = 2
	}
	if o.ReleaseCause == 0 {
		o.ReleaseCause = 16
	}
	if o.Drain <= 0 {
		o.Drain = o.Hold + 10*time.Second
	}
	if o.LagLimit <= 0 {
		o.LagLimit = 100 * time.Millisecond
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick <= 0 {
		o.Tick = time.Millisecond
	}
	if len(o.Schedule) == 0 {
		return errors.New("load: no schedule (give a rate or a ramp)")
	}
	if o.Called.Empty() {
		return errors.New("load: no called number pattern")
	}
	if len(o.DPCs) == 0 && len(o.Routes) == 0 {
		return errors.New("load: no destination (give a point code or a route)")
	}
	return nil
}

// call is one placed call, known by the gateway's handle once acked; events
// may come before the ack is seen here, so either side creates it.
type call struct {
	gw         int
	phase      int
	sent       time.Time
	conn       *hconn
	acked      bool
	answeredAt time.Time
	answered   bool
	released   *event
}

// stats is the generator's shared state, under mu.
type stats struct {
	mu     sync.Mutex
	now    func() time.Time
	start  time.Time
	cur    *bucket
	phases []*bucket
	total  *bucket
	calls  map[callKey]*call
	active atomic.Int64
	cause  uint8 // our releases' cause: released with it after an answer is "completed"
	perGW  []GatewayReport
}

// callKey names a call: handles are the gateway's, so two gateways may use
// the same one.
type callKey struct {
	gw int
	h  uint64
}

func newStats(now func() time.Time, phases int, cause uint8, addrs []string) *stats {
	s := &stats{now: now, cur: newBucket(), total: newBucket(), calls: map[callKey]*call{}, cause: cause}
	for _, a := range addrs {
		s.perGW = append(s.perGW, GatewayReport{Address: a})
	}
	for range phases {
		s.phases = append(s.phases, newBucket())
	}
	return s
}

// each applies f to the interval, the phase and the total buckets (mu held).
func (s *stats) each(phase int, f func(b *bucket)) {
	f(s.cur)
	f(s.phases[phase])
	f(s.total)
}

func (s *stats) skipped(phase int) {
	s.mu.Lock()
	s.each(phase, func(b *bucket) { b.c.Skipped++ })
	s.mu.Unlock()
}

func (s *stats) offered(phase int, lag time.Duration) {
	s.mu.Lock()
	s.each(phase, func(b *bucket) {
		b.c.Offered++
		b.maxLag = max(b.maxLag, lag)
	})
	s.mu.Unlock()
}

func (s *stats) refused(phase int, name string, at time.Time) {
	s.mu.Lock()
	s.each(phase, func(b *bucket) {
		b.c.Refused[name]++
		if b.firstRefusal.IsZero() {
			b.firstRefusal = at
		}
	})
	s.mu.Unlock()
	s.active.Add(-1)
}

func (s *stats) failed(phase int) {
	s.mu.Lock()
	s.each(phase, func(b *bucket) { b.c.Errors++ })
	s.mu.Unlock()
	s.active.Add(-1)
}

// acked records an admitted call; it returns the call for the release
// scheduling (mu held by the caller of the returned actions).
func (s *stats) acked(h callKey, phase int, sent time.Time, conn *hconn) (answer, release *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[h]
	if c == nil {
		c = &call{}
		s.calls[h] = c
	}
	c.gw, c.phase, c.sent, c.conn, c.acked = h.gw, phase, sent, conn, true
	s.each(phase, func(b *bucket) { b.c.Admitted++ })
	s.perGW[h.gw].Admitted++
	if c.answered {
		s.answeredLocked(c)
		answer = c
	}
	if c.released != nil {
		s.releasedLocked(h, c)
		release = c
	}
	return answer, release
}

// answered records an answer; it returns the call if it is now to be held
// and released by us.
func (s *stats) answered(h callKey, at time.Time) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[h]
	if c == nil {
		c = &call{}
		s.calls[h] = c
	}
	c.answered, c.answeredAt = true, at
	if !c.acked {
		return nil
	}
	s.answeredLocked(c)
	return c
}

func (s *stats) answeredLocked(c *call) {
	d := c.answeredAt.Sub(c.sent)
	s.each(c.phase, func(b *bucket) {
		b.c.Answered++
		b.setup = append(b.setup, d)
	})
}

func (s *stats) released(h callKey, r event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[h]
	if c == nil {
		c = &call{}
		s.calls[h] = c
	}
	c.released = &r
	if c.acked {
		s.releasedLocked(h, c)
	}
}

func (s *stats) releasedLocked(h callKey, c *call) {
	delete(s.calls, h)
	r := c.released
	ok := c.answered && !r.remote && r.cause == s.cause
	if ok {
		s.perGW[h.gw].Completed++
	}
	s.each(c.phase, func(b *bucket) {
		b.c.Causes[causeName(r.cause)]++
		if r.acl > 0 {
			b.c.ACL++
			b.c.MaxACL = max(b.c.MaxACL, r.acl)
		}
		if ok {
			b.c.Completed++
		} else {
			b.c.Failed++
		}
	})
	s.active.Add(-1)
}

// standbyNak counts a nak 0x0120 of gateway gw, and whether the outseize
// was sent on to another gateway.
func (s *stats) standbyNak(phase, gw int, redirected bool) {
	s.mu.Lock()
	if redirected {
		s.each(phase, func(b *bucket) { b.c.Redirected++ })
	}
	s.perGW[gw].StandbyNaks++
	s.mu.Unlock()
}

// reconnected counts a gateway dialled again after its connections ended.
func (s *stats) reconnected(gw int) {
	s.mu.Lock()
	s.perGW[gw].Reconnects++
	s.mu.Unlock()
}

// connLost ends the admitted calls of a connection that ended before their
// released: they are lost with their gateway (Failed and Lost).
func (s *stats) connLost(conn *hconn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, c := range s.calls {
		if c.conn != conn || !c.acked {
			continue
		}
		delete(s.calls, h)
		s.perGW[h.gw].Lost++
		s.each(c.phase, func(b *bucket) {
			b.c.Failed++
			b.c.Lost++
		})
		s.active.Add(-1)
	}
}

// second closes the current interval.
func (s *stats) second(now time.Time, asked float64) Second {
	s.mu.Lock()
	b := s.cur
	s.cur = newBucket()
	s.mu.Unlock()
	sec := Second{Type: "second", T: now.Sub(s.start).Seconds(), Asked: asked, Counts: b.counts(),
		Active: int(s.active.Load()), LagMS: ms(b.maxLag)}
	if !b.firstRefusal.IsZero() {
		t := b.firstRefusal.Sub(s.start).Seconds()
		sec.FirstRefusal = &t
	}
	return sec
}

var causeNames [128]string

func init() {
	for i := range causeNames {
		causeNames[i] = strconv.Itoa(i)
	}
}

func causeName(c uint8) string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return strconv.Itoa(int(c))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Run places calls on the schedule until it ends (or ctx does), waits for the
// calls to end, and returns the final report (also written to o.Out).
func Run(ctx context.Context, o Options) (*Final, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	g := &generator{o: o, st: newStats(o.Now, len(o.Schedule), o.ReleaseCause, o.Addresses), held: newDelayQueue(o.Now),
		pick: client.NewGateways(len(o.Addresses)), gws: make([]gatewayConns, len(o.Addresses)), stop: make(chan struct{})}
	if o.Cooperative {
		g.coop = newBackoff(o.Now)
	}
	if len(o.Routes) > 0 {
		for _, r := range o.Routes {
			q, _ := json.Marshal(r)
			g.routes = append(g.routes, q)
		}
	}
	defer g.closeAll()
	var errs []error
	var missing []int
	for gw := range o.Addresses {
		cs, err := g.dialGateway(ctx, gw)
		if err != nil {
			errs = append(errs, err)
		}
		if len(cs) == 0 {
			g.pick.SetDown(gw, true)
			missing = append(missing, gw)
		}
	}
	// One gateway is enough to run (the other of a pair may be down); with
	// a single address every connection must open, as before.
	if len(errs) > 0 && (len(o.Addresses) == 1 || len(missing) == len(o.Addresses)) {
		return nil, errors.Join(errs...)
	}
	for _, err := range errs {
		fmt.Fprintf(o.Out, "%v (going on without it)\n", err)
	}
	for _, gw := range missing {
		g.startRedial(gw)
	}
	return g.run(ctx)
}

// gatewayConns are one gateway's connections, replaced when it is dialled
// again; redialing says a redial loop runs for it.
type gatewayConns struct {
	conns     atomic.Pointer[[]*hconn]
	redialing atomic.Bool
}

func (g *generator) conns(gw int) []*hconn {
	if p := g.gws[gw].conns.Load(); p != nil {
		return *p
	}
	return nil
}

// dialGateway opens Conns connections to gateway gw and makes them its
// own; it returns those it opened and the first error.
func (g *generator) dialGateway(ctx context.Context, gw int) ([]*hconn, error) {
	o := g.o
	addr := o.Addresses[gw]
	var cs []*hconn
	var err error
	for i := range o.Conns {
		var c *hconn
		if c, err = dialConn(ctx, gw, networkOf(o.Network, addr), addr, o.Token, o.App, false, g.onReply, g.onEvent); err != nil {
			err = fmt.Errorf("load: connection %d to %s: %w", i+1, addr, err)
			break
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, err
	}
	g.rmu.Lock()
	select {
	case <-g.stop:
		g.rmu.Unlock()
		for _, c := range cs {
			c.close()
		}
		return nil, errClosed
	default:
	}
	g.gws[gw].conns.Store(&cs)
	g.rmu.Unlock()
	for _, c := range cs {
		c.setOnClose(g.connClosed)
	}
	return cs, err
}

// Redial bounds: a gateway whose connections all ended is dialled again,
// 100 ms to 5 s apart, until the run ends (a restarted instance of a pair
// comes back as the standby and takes calls at the next takeover).
const (
	redialMin = 100 * time.Millisecond
	redialMax = 5 * time.Second
)

// startRedial dials gateway gw again until it answers or the run ends.
func (g *generator) startRedial(gw int) {
	select {
	case <-g.stop:
		return // the run is over
	default:
	}
	if !g.gws[gw].redialing.CompareAndSwap(false, true) {
		return
	}
	g.rwg.Add(1)
	go func() {
		defer g.rwg.Done()
		defer g.gws[gw].redialing.Store(false)
		for wait := redialMin; ; wait = min(2*wait, redialMax) {
			t := time.NewTimer(wait)
			select {
			case <-g.stop:
				t.Stop()
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), redialMax)
			go func() { // the end of the run cancels a dial under way
				select {
				case <-g.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			cs, _ := g.dialGateway(ctx, gw)
			cancel()
			if len(cs) > 0 {
				g.pick.SetStandby(gw, false) // until its hello's alarm says otherwise
				g.pick.SetDown(gw, false)
				g.st.reconnected(gw)
				return
			}
		}
	}()
}

// closeAll stops the redial loops and closes every connection.
func (g *generator) closeAll() {
	g.rmu.Lock()
	close(g.stop)
	g.rmu.Unlock()
	g.rwg.Wait()
	for gw := range g.gws {
		for _, c := range g.conns(gw) {
			c.close()
		}
	}
}

// networkOf is the network of a host API address: unix for a path.
func networkOf(network, addr string) string {
	switch {
	case network != "":
		return network
	case strings.Contains(addr, "/"):
		return "unix"
	}
	return "tcp"
}

type generator struct {
	o    Options
	gws  []gatewayConns // each gateway's connections
	pick *client.Gateways
	// stop ends the redial loops (rwg) at the end of the run; rmu orders a
	// redialled gateway's connections against it.
	stop   chan struct{}
	rmu    sync.Mutex
	rwg    sync.WaitGroup
	routes [][]byte // quoted route names
	st     *stats
	out    sync.Mutex
	// Answered calls waiting out their hold.
	held *delayQueue
	// coop is the cooperative host's throttle (nil: flood).
	coop *backoff
}

func (g *generator) emit(v any, text string) {
	g.out.Lock()
	defer g.out.Unlock()
	if g.o.JSON {
		b, _ := json.Marshal(v)
		g.o.Out.Write(append(b, '\n'))
		return
	}
	fmt.Fprintln(g.o.Out, text)
}

func (g *generator) run(ctx context.Context) (*Final, error) {
	o, st := g.o, g.st
	holdCtx, stopHold := context.WithCancel(context.Background())
	defer stopHold()
	go g.held.run(holdCtx, g.release)
	st.start = o.Now()
	p := newPacer(o.Schedule)
	nextReport := st.start.Add(time.Second)
	for !p.done() && ctx.Err() == nil {
		now := o.Now()
		first, last := p.next(now.Sub(st.start))
		for k := first; k <= last; k++ {
			at, _ := o.Schedule.TimeOf(float64(k))
			phase := o.Schedule.Phase(at)
			if o.Concurrency > 0 && st.active.Load() >= int64(o.Concurrency) || g.coop != nil && !g.coop.allow() {
				st.skipped(phase)
				continue
			}
			g.place(k, phase, st.start.Add(at))
		}
		if now = o.Now(); !now.Before(nextReport) {
			g.report(nextReport, o.Schedule.RateAt(nextReport.Sub(st.start)-time.Millisecond))
			nextReport = nextReport.Add(time.Second)
		}
		g.sleep(ctx, o.Tick)
	}
	// The schedule is over: wait for the calls to end, still reporting.
	deadline := o.Now().Add(o.Drain)
	for st.active.Load() > 0 && o.Now().Before(deadline) && ctx.Err() == nil {
		if now := o.Now(); !now.Before(nextReport) {
			g.report(nextReport, 0)
			nextReport = nextReport.Add(time.Second)
		}
		g.sleep(ctx, 10*time.Millisecond)
	}
	if now := o.Now(); now.Sub(nextReport.Add(-time.Second)) > 100*time.Millisecond {
		g.report(now, 0) // the last part of a second
	}
	fin := g.final(p)
	g.emit(fin, fin.Text())
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fin, ctx.Err()
	}
	return fin, nil
}

func (g *generator) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (g *generator) report(at time.Time, asked float64) {
	s := g.st.second(at, asked)
	if !g.o.Quiet {
		g.emit(s, s.Text())
	}
}

func (g *generator) final(p *pacer) *Final {
	st, o := g.st, g.o
	st.mu.Lock()
	defer st.mu.Unlock()
	d := o.Schedule.Duration()
	f := &Final{Type: "final", StartUnixNano: st.start.UnixNano(), DurationS: d.Seconds(), Asked: p.total,
		Counts: st.total.counts(), Unfinished: int(st.active.Load()), MaxLagMS: ms(st.total.maxLag)}
	if len(st.perGW) > 1 {
		f.Gateways = slices.Clone(st.perGW)
	}
	f.OfferedRate = float64(f.Offered) / d.Seconds()
	f.AdmittedRate = float64(f.Admitted) / d.Seconds()
	f.CompletedRate = float64(f.Completed) / d.Seconds()
	f.KeptUp = st.total.maxLag <= o.LagLimit && f.Offered+f.Skipped >= f.Asked
	var at time.Duration
	for i, seg := range o.Schedule {
		b := st.phases[i]
		ph := Phase{Index: i, From: seg.From, To: seg.To, StartS: at.Seconds(), Duration: seg.Dur.Seconds(), Counts: b.counts(), MaxLagMS: ms(b.maxLag)}
		ph.OfferedRate = float64(ph.Offered) / seg.Dur.Seconds()
		ph.AdmittedRate = float64(ph.Admitted) / seg.Dur.Seconds()
		ph.CompletedRate = float64(ph.Completed) / seg.Dur.Seconds()
		if !b.firstRefusal.IsZero() {
			t := b.firstRefusal.Sub(st.start).Seconds()
			ph.FirstRefusal = &t
		}
		f.Phases = append(f.Phases, ph)
		at += seg.Dur
	}
	return f
}

// destination is call k's point code (0 with routes) and quoted route.
func (g *generator) destination(k uint64) (uint32, []byte) {
	if n := len(g.routes); n > 0 {
		return 0, g.routes[int(k)%n]
	}
	return g.o.DPCs[int(k)%len(g.o.DPCs)], nil
}

// place sends call k's outseize; its answer comes to onReply.
func (g *generator) place(k uint64, phase int, due time.Time) {
	o, st := g.o, g.st
	st.active.Add(1)
	r := g.send(pend{kind: reqOutseize, phase: int32(phase), sent: o.Now(), k: k})
	// The lag counts the wait for room in the connection's buffer too.
	st.offered(phase, max(0, o.Now().Sub(due)))
	if r == notSent {
		st.failed(phase)
	}
}

// What send did with an outseize.
const (
	sentOn         = iota
	refusedStandby // no gateway available and one is standby: counted refused
	notSent        // every connection closed
)

// send sends an outseize to a gateway available for its destination and
// not in p.tried, on one of its open connections. With none: refused
// "standby" when a gateway is connected but standby, else an error.
func (g *generator) send(p pend) int {
	dpc, route := g.destination(p.k)
	skip := p.tried
	for range len(g.gws) {
		gw := g.pick.Pick(dpc, skip)
		if gw < 0 {
			break
		}
		cs := g.conns(gw)
		for j := range cs {
			c := cs[(int(p.k)+j)%len(cs)]
			if c.send(p, func(b []byte, seq uint64) []byte {
				return appendOutseize(b, seq, dpc, route, g.o.Called, g.o.Calling, p.k)
			}) {
				return sentOn
			}
		}
		skip |= 1 << gw // every connection closed: connClosed marks it down
	}
	if p.tried != 0 || g.anyStandby() {
		g.st.refused(int(p.phase), wire.StatusStandby.Name(), g.o.Now())
		return refusedStandby
	}
	return notSent
}

// anyStandby says whether some connected gateway is standby.
func (g *generator) anyStandby() bool {
	for gw := range g.gws {
		if !g.pick.Available(gw, 0) && g.alive(gw) {
			return true
		}
	}
	return false
}

func (g *generator) alive(gw int) bool {
	for _, c := range g.conns(gw) {
		select {
		case <-c.done:
		default:
			return true
		}
	}
	return false
}

// connClosed runs once when a connection ends: its unanswered outseizes are
// errors, its calls lost; a gateway with no connection left takes no calls.
func (g *generator) connClosed(c *hconn, unanswered []pend) {
	if !g.alive(c.gw) {
		g.pick.SetDown(c.gw, true)
		if len(g.o.Addresses) > 1 {
			g.startRedial(c.gw)
		}
	}
	for _, p := range unanswered {
		g.st.failed(int(p.phase))
	}
	g.st.connLost(c)
}

// onReply takes the answer to an outseize (on the connection's reader).
func (g *generator) onReply(c *hconn, p pend, r reply) {
	if p.kind != reqOutseize {
		return
	}
	st := g.st
	phase := int(p.phase)
	if !r.ok && r.status == wire.StatusStandby {
		// Docs/deployment.md: the standby of a pair sends no IAM; the call
		// goes to the active one, if it is known.
		g.pick.SetStandby(c.gw, true)
		p.tried |= 1 << c.gw
		switch g.send(p) {
		case sentOn:
			st.standbyNak(phase, c.gw, true)
		case refusedStandby:
			st.standbyNak(phase, c.gw, false)
		default:
			st.standbyNak(phase, c.gw, false)
			st.failed(phase)
		}
		return
	}
	if !r.ok {
		st.refused(phase, r.status.Name(), g.o.Now())
		if g.coop != nil {
			g.coop.refusal(r.status)
		}
		return
	}
	g.pick.CallStarted(c.gw)
	ans, rel := st.acked(callKey{c.gw, r.call}, phase, p.sent, c)
	if ans != nil && rel == nil {
		g.hold(r.call, c)
	}
}

// onEvent takes an event (on the connection's reader).
func (g *generator) onEvent(c *hconn, e event) {
	switch e.typ {
	case "answered":
		if cl := g.st.answered(callKey{c.gw, e.call}, g.o.Now()); cl != nil && cl.released == nil {
			g.hold(e.call, c)
		}
	case "released":
		g.pick.CallEnded(c.gw)
		g.st.released(callKey{c.gw, e.call}, e)
	case wire.TypeAlarm, wire.TypeAlarmCleared:
		g.pick.Alarm(c.gw, e.number, e.typ == wire.TypeAlarmCleared, e.dpc, e.hasDPC)
	}
}

// hold releases an answered call after the hold time.
func (g *generator) hold(call uint64, c *hconn) {
	if g.o.Hold <= 0 {
		g.release(call, c)
		return
	}
	g.held.add(g.o.Hold, call, c)
}

func (g *generator) release(call uint64, c *hconn) {
	c.send(pend{}, func(b []byte, seq uint64) []byte {
		return appendCallRequest(b, "release", seq, call, g.o.ReleaseCause)
	})
}
