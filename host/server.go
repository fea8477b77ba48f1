// Package host is the host socket API: the server through which applications
// (softswitches, IVRs, test tools) place and receive calls and hear alarms.
//
// It speaks newline-delimited JSON over TCP (loopback by default) and a Unix
// socket; docs/host-api.md is the protocol reference and package host/wire its
// types. The server sits between host connections and an ISUP stack: requests
// become stack.Requests, and the stack's events (given to Sink on the stack's
// loop goroutine) become lines queued to the host that owns the call. Sink never
// blocks: a host whose bounded send queue is full is disconnected, and every
// call it owned is released towards the network.
//
// Wiring:
//
//	srv, err := host.New(host.Config{Token: "secret"})
//	g, err := gateway.New(cfg, srv.Sink)
//	srv.Attach(g.Stack)
//	g.Start(ctx); srv.Start(ctx)
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/ratelog"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// Config is the server's configuration.
type Config struct {
	// PointCodes is how point codes are read from text in requests and
	// written in the log (the configuration's format; zero: numbers, a
	// dashed code read as ITU 3-8-3).
	PointCodes mtp.PointCodeFormat
	// Destinations are the circuit groups' point codes and variants: in a
	// gateway with ITU and ANSI groups a dashed point code is read with the
	// variant of the group it names.
	Destinations []Destination
	// TCP is the TCP listen address; "" means wire.DefaultTCP (127.0.0.1:7700)
	// and "none" no TCP listener.
	TCP string
	// Unix is the Unix socket path ("" none). The socket is created with mode
	// 0660; a stale socket file left by a dead process is replaced.
	Unix string
	// Token is the shared secret every hello must carry. It is required unless
	// NoAuth is set.
	Token  string
	NoAuth bool
	// QueueSize is each host's send queue in lines (default 1024). A host whose
	// queue is full is disconnected.
	QueueSize int
	// MaxHosts limits the hosts connected at once (default 64): a hello
	// beyond it is refused with 0x011A and the connection closed.
	MaxHosts int
	// MaxPreHello limits the connections that have not completed their hello
	// (default 64), apart from MaxHosts. A connection beyond it closes the one
	// that has waited longest for its hello ("pre-hello limit"), so idle
	// unauthenticated connections can hold neither a host's place nor
	// memory, and a host that says hello promptly always gets in.
	MaxPreHello int
	// MaxPending is each host's share of the stack's outbound queue: how many
	// of its requests may wait in the gateway (submitted, answer not yet
	// written to it) at once (default 256). An outseize beyond it is refused
	// at once with 0x0C and never enters the shared queue, and the host's
	// next line is read once half its share is answered; another request
	// beyond twice as many waits (the host's own reader stops) until its
	// earlier ones are answered. So one flooding host cannot fill the queue
	// whose delay decides congestion for every host.
	MaxPending int
	// HelloTimeout is how long a connection may take to complete its hello
	// (default 5 s); one that has not by then is closed ("hello timeout"), so
	// idle unauthenticated connections do not hold resources.
	HelloTimeout time.Duration
	// Rules decide which host is offered an incoming call; see Rule. None
	// means one rule that matches every call: round robin over every host that
	// subscribed with "incoming": true.
	Rules []Rule
	// DisconnectCause is the Q.850 cause of the REL sent for each call of a
	// host that goes away (default 41, temporary failure), with location
	// DisconnectLocation (default 2, public network serving the local user).
	DisconnectCause    uint8
	DisconnectLocation uint8
	// NoHostCause is the cause of the REL for an incoming call that a rule
	// matched but no host of that rule is connected (default 27, destination
	// out of order); a call no rule matches gets cause 1 (unallocated number).
	NoHostCause uint8
}

// Rule offers incoming calls to hosts. A call matches when every condition set
// holds (empty means any); the first matching rule with a connected, subscribed
// host of its App wins, and its hosts take turns (round robin).
type Rule struct {
	Prefix string        // the called number starts with these digits
	OPC    mtp.PointCode // the call comes from this point code (0 any)
	Route  string        // the call arrives on this circuit group (by name)
	App    string        // hosts whose hello named this application ("" any)
}

func (r Rule) matches(called string, opc mtp.PointCode, route string) bool {
	return strings.HasPrefix(called, r.Prefix) && (r.OPC == 0 || r.OPC == opc) && (r.Route == "" || r.Route == route)
}

// Stack is what the server needs of the ISUP stack (*stack.Stack has it).
type Stack interface {
	SubmitContext(ctx context.Context, r stack.Request) error
	Inspect(ctx context.Context) (stack.Snapshot, error)
}

// screener is a Stack whose edge admission can be asked before an outseize
// is submitted (*stack.Stack's Screen): its refusals then cost the host API
// no bookkeeping.
type screener interface {
	Screen(o stack.Outseize) (stack.Outseize, stack.Status)
}

// Alarm is an alarm for hosts: congestion control raises its own through
// RaiseAlarm; the stack's are mapped from stack.Alarm.
type Alarm struct {
	Number   uint16
	Severity uint8
	Cleared  bool
	Text     string
	Data     map[string]any
}

// Option adjusts a Server.
type Option func(*Server)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// OnOverload registers f to hear the highest overload level (0-2) declared by
// the connected hosts whenever it changes; a host that disconnects counts as 0.
// Calls are serialised and in order; f must not block for long and must not
// call back into the server.
func OnOverload(f func(maxLevel int)) Option { return func(s *Server) { s.onOverload = f } }

// DefaultHelloTimeout is Config.HelloTimeout's default: a host says hello
// right after it connects, so seconds are plenty even over a slow network.
const DefaultHelloTimeout = 5 * time.Second

// DefaultMaxPending is Config.MaxPending's default. A host's requests wait
// behind at most this many of another's, a few milliseconds of the loop's
// work; a host that places tens of thousands of calls a second has a few
// hundred waiting only when the gateway is already falling behind.
const DefaultMaxPending = 256

// tagBase marks the stack request tags the server uses ("HS" in the top 16
// bits), so that results of requests submitted by others are ignored.
const tagBase = uint64(0x4853) << 48

// Server is the host API server.
type Server struct {
	cfg        Config
	pcs        pointCodes // reads the point codes of requests
	log        *slog.Logger
	onOverload func(int)
	metrics    Metrics
	stack      atomic.Pointer[stackRef]
	ctx        atomic.Pointer[context.Context] // the Start context: submits give up when it ends
	tags       atomic.Uint64
	ids        atomic.Uint64

	mu        sync.Mutex
	conns     map[*conn]struct{} // every open connection
	hosts     []*conn            // authenticated, in hello order (round robin)
	waiting   []*conn            // not yet authenticated, oldest first
	evictLog  time.Time          // when a pre-hello eviction was last logged
	calls     map[stack.CallID]*conn
	pending   map[uint64]pending
	rr        []uint64
	alarms    map[string]Alarm // active alarms, by number and subject
	listeners []net.Listener
	closed    bool

	ovMu  sync.Mutex
	ovMax int

	janitor janitor
	// notOffered limits the "incoming call not offered" lines (one a
	// second per cause, with the count of those left out).
	notOffered *ratelog.Limiter
	wg         sync.WaitGroup
	tcpAddr    net.Addr
}

type stackRef struct {
	s      Stack
	screen screener // nil: s has no Screen
}

// pending is a request submitted to the stack and not yet answered.
type pending struct {
	c   *conn
	seq uint64
	typ string
}

// New builds a server; Attach gives it the stack and Start opens its sockets.
func New(cfg Config, opts ...Option) (*Server, error) {
	if cfg.Token == "" && !cfg.NoAuth {
		return nil, errors.New("host: a token is required (or set NoAuth explicitly)")
	}
	if cfg.TCP == "" {
		cfg.TCP = wire.DefaultTCP
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1024
	}
	if cfg.MaxHosts <= 0 {
		cfg.MaxHosts = 64
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxPreHello <= 0 {
		cfg.MaxPreHello = 64
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = DefaultHelloTimeout
	}
	if cfg.DisconnectCause == 0 {
		cfg.DisconnectCause = isup.CauseTemporaryFailure
	}
	if cfg.DisconnectLocation == 0 {
		cfg.DisconnectLocation = isup.LocationPublicLocal
	}
	if cfg.NoHostCause == 0 {
		cfg.NoHostCause = 27
	}
	if len(cfg.Rules) == 0 {
		cfg.Rules = []Rule{{}}
	}
	for i, r := range cfg.Rules {
		if _, err := isup.ParseDigits(r.Prefix); err != nil {
			return nil, fmt.Errorf("host: rule %d: prefix: %w", i, err)
		}
	}
	s := &Server{
		cfg: cfg, pcs: newPointCodes(cfg.PointCodes, cfg.Destinations), log: slog.New(slog.DiscardHandler),
		conns: map[*conn]struct{}{}, calls: map[stack.CallID]*conn{},
		pending: map[uint64]pending{}, rr: make([]uint64, len(cfg.Rules)), alarms: map[string]Alarm{},
		notOffered: ratelog.New(time.Second, nil),
	}
	s.janitor.init()
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Attach gives the server the stack it submits requests to. Call it before
// Start (the sink may run earlier: events before Attach find no host).
func (s *Server) Attach(st Stack) {
	sc, _ := st.(screener)
	s.stack.Store(&stackRef{st, sc})
}

// submit hands a request to the stack; it gives up when the server stops, so
// a stopped stack cannot hold a connection's reader.
func (s *Server) submit(r stack.Request) error {
	if ref := s.stack.Load(); ref != nil {
		return ref.s.SubmitContext(s.runCtx(), r)
	}
	return errors.New("host: no stack attached")
}

// screen applies the stack's edge admission to an outseize before any
// bookkeeping (stack.Screen); with no stack attached it passes, and submit
// then reports that.
func (s *Server) screen(o stack.Outseize) (stack.Outseize, stack.Status) {
	if ref := s.stack.Load(); ref != nil && ref.screen != nil {
		return ref.screen.Screen(o)
	}
	return o, stack.StatusOK
}

func (s *Server) runCtx() context.Context {
	if c := s.ctx.Load(); c != nil {
		return *c
	}
	return context.Background()
}

// Metrics returns a snapshot of the counters.
func (s *Server) Metrics() MetricsSnapshot { return s.metrics.Snapshot() }

// TCPAddr is the TCP listener's address once Start has returned (nil if none).
func (s *Server) TCPAddr() net.Addr { return s.tcpAddr }

// OverloadLevel is the highest level the connected hosts declare.
func (s *Server) OverloadLevel() int {
	s.ovMu.Lock()
	defer s.ovMu.Unlock()
	return s.ovMax
}

// Start opens the listeners (bound when Start returns) and serves until ctx
// ends; then it closes every connection. Wait waits for that.
func (s *Server) Start(ctx context.Context) error {
	s.ctx.Store(&ctx)
	if s.stack.Load() == nil {
		return errors.New("host: Start before Attach")
	}
	var lc net.ListenConfig
	if s.cfg.TCP != "none" {
		l, err := lc.Listen(ctx, "tcp", s.cfg.TCP)
		if err != nil {
			return fmt.Errorf("host: %w", err)
		}
		s.tcpAddr = l.Addr()
		s.listeners = append(s.listeners, l)
		if ap, ok := l.Addr().(*net.TCPAddr); ok && !ap.IP.IsLoopback() {
			s.log.Warn("host API listening beyond loopback", "addr", l.Addr().String())
		}
	}
	if s.cfg.Unix != "" {
		l, err := listenUnix(ctx, s.cfg.Unix)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("host: %w", err)
		}
		s.listeners = append(s.listeners, l)
	}
	s.wg.Add(1 + len(s.listeners))
	go func() {
		defer s.wg.Done()
		s.janitor.run(ctx, s)
	}()
	for _, l := range s.listeners {
		go func() {
			defer s.wg.Done()
			s.accept(l)
		}()
	}
	go func() {
		<-ctx.Done()
		s.shutdown()
	}()
	return nil
}

// Wait returns when the listeners and every connection have finished.
func (s *Server) Wait() { s.wg.Wait() }

func listenUnix(ctx context.Context, path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		// A socket file: in use if something answers, stale otherwise.
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("unix socket %s is in use", path)
		}
		os.Remove(path)
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.Close()
	}
}

func (s *Server) shutdown() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.closeListeners()
	for _, c := range conns {
		c.fail("server shutdown")
	}
}

func (s *Server) accept(l net.Listener) {
	for {
		nc, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		// Make room among the connections waiting for their hello by closing
		// the one that has waited longest: refusing the newcomer instead
		// would let whoever holds the places keep every host out.
		var evicted *conn
		if len(s.waiting) >= s.cfg.MaxPreHello {
			evicted = s.waiting[0]
			s.waiting = slices.Delete(s.waiting, 0, 1)
		}
		logEviction := evicted != nil && time.Since(s.evictLog) >= time.Second
		if logEviction {
			s.evictLog = time.Now()
		}
		c := newConn(s, nc)
		s.waiting = append(s.waiting, c)
		// The hello must come before this deadline; hello clears it.
		nc.SetReadDeadline(time.Now().Add(s.cfg.HelloTimeout))
		s.conns[c] = struct{}{}
		s.wg.Add(2)
		s.mu.Unlock()
		if evicted != nil {
			evicted.fail("pre-hello limit")
			if logEviction { // at most once a second: a connection flood must not flood the log
				s.log.Warn("host connections without hello at their limit: closing the oldest", "limit", s.cfg.MaxPreHello,
					"closed_so_far", s.metrics.Snapshot().Disconnects["pre-hello limit"])
			}
		}
		s.metrics.ConnectionsAccepted.Add(1)
		s.metrics.ConnectionsOpen.Add(1)
		s.log.Info("host connected", "conn", c.id, "remote", c.remote)
		go func() { defer s.wg.Done(); c.writer() }()
		go func() { defer s.wg.Done(); c.reader() }()
	}
}

// unwait takes c off the list of connections waiting for their hello (s.mu
// held).
func (s *Server) unwait(c *conn) {
	if i := slices.Index(s.waiting, c); i >= 0 {
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
}

func (s *Server) newTag() uint64 { return tagBase | s.tags.Add(1) }

// remove forgets a connection that ended and releases its calls towards the
// network. It runs on the connection's reader goroutine, which may block in
// Submit (that is back-pressure, not a stall of the stack).
func (s *Server) remove(c *conn) {
	s.mu.Lock()
	c.removed = true
	delete(s.conns, c)
	s.unwait(c)
	for i, h := range s.hosts {
		if h == c {
			s.hosts = append(s.hosts[:i:i], s.hosts[i+1:]...)
			break
		}
	}
	calls := make([]stack.CallID, 0, len(c.calls))
	for id := range c.calls {
		calls = append(calls, id)
		delete(s.calls, id)
	}
	c.calls = nil
	authed := c.authed
	s.mu.Unlock()

	reason := c.reason()
	s.metrics.ConnectionsOpen.Add(-1)
	s.log.Info("host disconnected", "conn", c.id, "app", c.app, "remote", c.remote, "reason", reason, "calls_released", len(calls))
	for _, id := range calls {
		s.metrics.ReleasedOnDisconnect.Add(1)
		s.submit(stack.Release{Tag: s.newTag(), Call: id, Cause: s.cfg.DisconnectCause, Location: s.cfg.DisconnectLocation})
	}
	if authed {
		s.setOverload(c, 0)
	}
}

// setOverload records a host's declared level and reports a new maximum.
func (s *Server) setOverload(c *conn, level int) {
	s.ovMu.Lock()
	defer s.ovMu.Unlock()
	c.overload = level
	s.mu.Lock()
	max := 0
	for _, h := range s.hosts {
		if h != c && h.overload > max {
			max = h.overload
		}
	}
	if !c.removed && level > max {
		max = level
	}
	s.mu.Unlock()
	if max != s.ovMax {
		s.ovMax = max
		s.log.Info("host overload level", "max", max)
		if s.onOverload != nil {
			s.onOverload(max)
		}
	}
}

// RaiseAlarm sends an alarm (or, with Cleared, alarm_cleared) to every
// authenticated host. Alarms that describe a lasting condition are remembered
// until cleared and sent to hosts that connect meanwhile, after their hello.
// It never blocks; it may be called from any goroutine.
func (s *Server) RaiseAlarm(a Alarm) {
	line := encodeAlarm(a)
	key := alarmKey(a)
	s.mu.Lock()
	if lasting(a.Number) {
		if a.Cleared {
			delete(s.alarms, key)
		} else {
			s.alarms[key] = a
		}
	}
	hosts := append([]*conn(nil), s.hosts...)
	s.mu.Unlock()
	typ := wire.TypeAlarm
	if a.Cleared {
		typ = wire.TypeAlarmCleared
	}
	for _, h := range hosts {
		if h.send(typ, line) {
			s.metrics.AlarmsSent.Add(1)
		}
	}
}

// ActiveAlarms lists the alarms raised and not yet cleared.
func (s *Server) ActiveAlarms() []Alarm {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Alarm, 0, len(s.alarms))
	for _, a := range s.alarms {
		out = append(out, a)
	}
	return out
}

// lasting reports whether an alarm number names a condition that holds until
// an alarm_cleared (as opposed to a one-off report such as a circuit reset).
func lasting(n uint16) bool {
	switch n {
	case wire.AlarmNetworkCongestion, wire.AlarmStackCongestion, wire.AlarmDestinationUnavailable,
		wire.AlarmDestinationOutOfServ, wire.AlarmConstraintViolation, wire.AlarmACCActive, wire.AlarmDestinationSlow,
		wire.AlarmSystemBusy, wire.AlarmCodeRed, wire.AlarmAssociationDown, wire.AlarmStandby:
		return true
	}
	return false
}

func alarmKey(a Alarm) string {
	return fmt.Sprintf("%d/%v/%v/%v/%v", a.Number, a.Data["dpc"], a.Data["direction"], a.Data["cic"], a.Data["association"])
}

// Sink takes the stack's events. It runs on the stack's loop goroutine and never
// blocks: lines are queued without waiting, and a host whose queue is full is
// disconnected. Pass it (or a function that calls it) to gateway.New.
func (s *Server) Sink(ev stack.Event) {
	switch e := ev.(type) {
	case stack.Result:
		s.onResult(e)
	case stack.Incoming:
		s.onIncoming(e)
	case stack.CallProgress:
		s.toOwner(e.Call, wire.TypeProgress, func() []byte { return encodeCallMessage(wire.TypeProgress, e.Call, e.Message) })
	case stack.Answered:
		s.toOwner(e.Call, wire.TypeAnswered, func() []byte { return encodeCallMessage(wire.TypeAnswered, e.Call, e.Message) })
	case stack.Released:
		s.mu.Lock()
		c := s.calls[e.Call]
		if c != nil {
			delete(s.calls, e.Call)
			delete(c.calls, e.Call)
		}
		s.mu.Unlock()
		if c == nil {
			s.metrics.OrphanEvents.Add(1)
			return
		}
		c.send(wire.TypeReleased, encodeReleased(e))
	case stack.Alarm:
		s.RaiseAlarm(mapStackAlarm(e))
	}
}

func (s *Server) toOwner(id stack.CallID, typ string, line func() []byte) {
	s.mu.Lock()
	c := s.calls[id]
	s.mu.Unlock()
	if c == nil {
		s.metrics.OrphanEvents.Add(1)
		return
	}
	c.send(typ, line())
}

func (s *Server) onResult(r stack.Result) {
	s.mu.Lock()
	p, ok := s.pending[r.Tag]
	if !ok {
		s.mu.Unlock()
		return // a request of ours with no host waiting (a release on disconnect), or not ours
	}
	delete(s.pending, r.Tag)
	if p.c.removed {
		s.mu.Unlock()
		if r.Status == stack.StatusOK && p.typ == wire.TypeOutseize {
			// The host went away while its outseize was queued: release the call.
			s.metrics.ReleasedOnDisconnect.Add(1)
			s.janitor.release(stack.Release{Tag: s.newTag(), Call: r.Call, Cause: s.cfg.DisconnectCause, Location: s.cfg.DisconnectLocation})
		}
		return
	}
	if r.Status == stack.StatusOK && p.typ == wire.TypeOutseize {
		s.calls[r.Call] = p.c
		p.c.calls[r.Call] = struct{}{}
	}
	s.mu.Unlock()
	if r.Status == stack.StatusOK {
		p.c.sendAnswer(wire.TypeAck, encodeAck(p.seq, r, p.typ == wire.TypeOutseize))
		return
	}
	s.metrics.naks.add(uint16(r.Status))
	detail := r.Detail
	if detail == "" {
		detail = r.Status.String()
	}
	p.c.sendAnswer(wire.TypeNak, encodeNak(&p.seq, wire.Status(r.Status), detail, uint64(r.Call)))
}

func (s *Server) onIncoming(in stack.Incoming) {
	called := ""
	if in.IAM != nil {
		called = in.IAM.CalledParty.Digits.String()
	}
	line := encodeIncoming(in)
	s.mu.Lock()
	c, matched := s.route(called, in.OPC, in.Route)
	if c != nil {
		s.calls[in.Call] = c
		c.calls[in.Call] = struct{}{}
	}
	s.mu.Unlock()
	if c == nil {
		s.metrics.IncomingUnrouted.Add(1)
		cause := isup.CauseUnallocatedNumber
		if matched {
			cause = s.cfg.NoHostCause
		}
		if n, ok := s.notOffered.Allow(fmt.Sprint(cause)); ok {
			s.log.Info("incoming call not offered", "call", uint64(in.Call), "called", called, "opc", s.cfg.PointCodes.Format(in.OPC), "cause", cause, "suppressed", n)
		}
		s.janitor.release(stack.Release{Tag: s.newTag(), Call: in.Call, Cause: cause, Location: isup.LocationPublicLocal})
		return
	}
	s.metrics.IncomingOffered.Add(1)
	c.send(wire.TypeIncoming, line)
}

// route picks the host for an incoming call (s.mu held). matched reports
// whether some rule's conditions held, even if none of its hosts is connected.
func (s *Server) route(called string, opc mtp.PointCode, routeName string) (c *conn, matched bool) {
	for i, r := range s.cfg.Rules {
		if !r.matches(called, opc, routeName) {
			continue
		}
		matched = true
		n := 0
		for _, h := range s.hosts {
			if h.incoming && (r.App == "" || r.App == h.app) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		k := int(s.rr[i] % uint64(n))
		s.rr[i]++
		for _, h := range s.hosts {
			if h.incoming && (r.App == "" || r.App == h.app) {
				if k == 0 {
					return h, true
				}
				k--
			}
		}
	}
	return nil, matched
}

// janitor submits requests that arise on the stack's loop goroutine (where
// Submit could block the loop on its own full queue): releases of calls that
// no host can own. Its queue is unbounded; entries are rare.
type janitor struct {
	mu   sync.Mutex
	q    []stack.Request
	wake chan struct{}
}

func (j *janitor) init() { j.wake = make(chan struct{}, 1) }

func (j *janitor) release(r stack.Release) {
	j.mu.Lock()
	j.q = append(j.q, r)
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *janitor) run(ctx context.Context, s *Server) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-j.wake:
		}
		j.mu.Lock()
		q := j.q
		j.q = nil
		j.mu.Unlock()
		for _, r := range q {
			s.submit(r)
		}
	}
}
