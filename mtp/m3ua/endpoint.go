package m3ua

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/rs/zerolog"
)

// Endpoint is an M3UA node: its associations, routing table and counters.
// Indications() and Events() must both be drained by the MTP user; a full
// channel holds the association reader back (SCTP flow control then slows
// the peer) rather than dropping anything.
type Endpoint struct {
	cfg                       Config
	clock                     Clock
	tack                      time.Duration
	beatInterval, beatTimeout time.Duration
	backoffMin, backoffMax    time.Duration
	reroute                   time.Duration
	recovery                  time.Duration
	topts                     []transport.Option
	indQueue, evQueue         int
	log                       zerolog.Logger
	tap                       Tap

	stats  Stats
	table  *mtp.Table
	peers  []*Association
	byName map[string]*Association
	ind    chan mtp.Message
	ev     chan mtp.Event

	ln     transport.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	sessions map[*session]struct{}
	// asOrder orders the AS state changes an SG makes for its ASPs: an
	// activation with its override takeover, a loss with its AS-Pending,
	// the end of T(r) with its AS-Inactive (SG side, as.go, sgp.go).
	asOrder sync.Mutex
	// asMu guards recover: the T(r) deadline of each ASP whose loss left its
	// AS AS-PENDING (SG side, as.go).
	asMu    sync.Mutex
	recover map[*Association]time.Time
	// queues (under asMu) hold DATA for AS-PENDING ASes during T(r);
	// queuing is their number, so that Transfer pays one atomic load when
	// there is none (as.go).
	queues                  []*recoveryQueue
	queuing                 atomic.Int32
	queueMax, queueMaxBytes int
}

// Errors.
var (
	ErrNotActive   = errors.New("m3ua: association not active")
	ErrUnknownPeer = errors.New("m3ua: no such peer")
	ErrConfig      = errors.New("m3ua: invalid configuration")
)

// New checks cfg and builds an endpoint; Start brings it up.
func New(cfg Config, opts ...Option) (*Endpoint, error) {
	e := &Endpoint{
		cfg: cfg, clock: realClock{}, tack: DefaultTack,
		beatInterval: DefaultBeatInterval, beatTimeout: DefaultBeatTimeout,
		backoffMin: DefaultBackoffMin, backoffMax: DefaultBackoffMax,
		reroute: mtp.DefaultRerouteDelay, recovery: DefaultRecovery, recover: map[*Association]time.Time{}, indQueue: DefaultQueue, evQueue: DefaultEventsQueue,
		queueMax: DefaultRecoveryQueue, queueMaxBytes: DefaultRecoveryQueueBytes,
		log: zerolog.Nop(), byName: map[string]*Association{}, sessions: map[*session]struct{}{},
	}
	for _, o := range opts {
		o(e)
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if cfg.Role < RoleASP || cfg.Role > RoleIPSP {
		return nil, fmt.Errorf("%w: role", ErrConfig)
	}
	if cfg.RouteMode == 0 {
		e.cfg.RouteMode = mtp.Loadshare
	}
	now := e.clock.Now
	e.table = mtp.NewTable(mtp.WithRerouteDelay(e.reroute), mtp.WithNow(now),
		mtp.WithAfterFunc(func(d time.Duration, f func()) { e.clock.AfterFunc(d, f) }))
	e.ind = make(chan mtp.Message, e.indQueue)
	e.ev = make(chan mtp.Event, e.evQueue)
	byDPC := map[mtp.PointCode][]mtp.Link{}
	var order []mtp.PointCode
	var defaults []mtp.Link
	for _, p := range cfg.Peers {
		if p.Name == "" || e.byName[p.Name] != nil {
			return nil, fmt.Errorf("%w: peer name %q empty or repeated", ErrConfig, p.Name)
		}
		if !p.Dial.IsValid() && !p.From.IsValid() {
			return nil, fmt.Errorf("%w: peer %q needs Dial or From", ErrConfig, p.Name)
		}
		if p.Dial.IsValid() && cfg.Role == RoleSG {
			return nil, fmt.Errorf("%w: an SG accepts its ASPs; peer %q has Dial", ErrConfig, p.Name)
		}
		if p.TrafficMode == 0 {
			p.TrafficMode = mtp.Loadshare
		}
		a := &Association{e: e, cfg: p}
		e.peers = append(e.peers, a)
		e.byName[p.Name] = a
		for _, dpc := range p.DPCs {
			if byDPC[dpc] == nil {
				order = append(order, dpc)
			}
			byDPC[dpc] = append(byDPC[dpc], a)
		}
		if p.Default {
			defaults = append(defaults, a)
		}
	}
	for _, dpc := range order {
		e.table.Add(dpc, e.cfg.RouteMode, byDPC[dpc]...)
	}
	if len(defaults) > 0 {
		e.table.SetDefault(e.cfg.RouteMode, defaults...)
	}
	return e, nil
}

// Start opens the listener (if configured) and starts dialling peers.
func (e *Endpoint) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	topts := append([]transport.Option{transport.WithResolveHook(func(k transport.Kind, why string) {
		e.log.Info().Str("transport", k.String()).Str("why", why).Msg("m3ua transport chosen")
	}),
		// Only configured peers' addresses get as far as SCTP (issue 14).
		transport.WithAcceptFilter(func(r netip.AddrPort) bool { return len(e.candidates(r.Addr())) > 0 }),
	}, e.topts...)
	if e.cfg.Listen.IsValid() {
		ln, err := transport.Listen(e.cfg.Transport, e.cfg.Listen, topts...)
		if err != nil {
			return err
		}
		e.ln = ln
		e.wg.Add(1)
		go e.acceptLoop()
	}
	for _, a := range e.peers {
		if a.cfg.Dial.IsValid() {
			a.dialMu.Lock()
			a.startDial(a.cfg.Dial)
			a.dialMu.Unlock()
		}
	}
	return nil
}

// Addr is the listener's address (zero without a listener).
func (e *Endpoint) Addr() netip.AddrPort {
	if e.ln == nil {
		return netip.AddrPort{}
	}
	return e.ln.Addr()
}

// Transfer is MTP-TRANSFER request: route by DPC, pick association and
// stream by SLS, send. Safe from many goroutines.
func (e *Endpoint) Transfer(m *mtp.Message) error {
	queuing := e.queuing.Load() > 0
	if queuing {
		// While a queue is being delivered to the ASP that became active,
		// later messages for its AS go behind it (order per AS).
		if held, err := e.holdForRecovery(m, true); held {
			return err
		}
	}
	err := e.table.Transfer(m)
	if queuing && errors.Is(err, mtp.ErrUnavailable) {
		if held, qerr := e.holdForRecovery(m, false); held {
			return qerr
		}
	}
	if errors.Is(err, mtp.ErrNoRoute) || errors.Is(err, mtp.ErrUnavailable) {
		e.stats.NoRoute.Add(1)
	}
	return err
}

// Indications delivers MTP-TRANSFER indications (received DATA).
func (e *Endpoint) Indications() <-chan mtp.Message { return e.ind }

// Events delivers status indications.
func (e *Endpoint) Events() <-chan mtp.Event { return e.ev }

// Stats returns the live counters.
func (e *Endpoint) Stats() *Stats { return &e.stats }

// Table is the routing table (routes are built from the peers' DPCs).
func (e *Endpoint) Table() *mtp.Table { return e.table }

// Peer returns the association of a configured peer.
func (e *Endpoint) Peer(name string) *Association { return e.byName[name] }

// Notify sends an SSNM message to a peer: Pause as DUNA, Resume as DAVA,
// Restricted as DRST, Congestion as SCON, UserPartUnavailable as DUPU. An SG
// uses it to tell its ASPs about the network; an ASP or IPSP may send SCON
// and DUPU about itself.
func (e *Endpoint) Notify(peer string, ev mtp.Event) error {
	a := e.byName[peer]
	if a == nil {
		return ErrUnknownPeer
	}
	s := a.cur.Load()
	if s == nil {
		return ErrNotActive
	}
	b, err := s.encodeSSNM(ev)
	if err != nil {
		return err
	}
	return s.write(b, 0)
}

// Close stops the endpoint gracefully: each association where we are the
// ASP goes ASP Inactive and ASP Down, then SCTP SHUTDOWN. ctx bounds it.
func (e *Endpoint) Close(ctx context.Context) error {
	e.cancel() // no new sessions: the accept and dial loops stop
	if e.ln != nil {
		_ = e.ln.Close() // accepted associations keep its socket until they end
	}
	e.mu.Lock()
	all := make([]*session, 0, len(e.sessions))
	for s := range e.sessions {
		all = append(all, s)
	}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop(ctx) }()
	}
	wg.Wait()
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		if e.ln != nil {
			<-e.ln.Released() // the address is free for a restart
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Endpoint) emit(ev mtp.Event) {
	select {
	case e.ev <- ev:
	case <-e.ctx.Done():
	}
}

func (e *Endpoint) addSession(s *session) {
	e.mu.Lock()
	e.sessions[s] = struct{}{}
	e.mu.Unlock()
}

func (e *Endpoint) removeSession(s *session) {
	e.mu.Lock()
	delete(e.sessions, s)
	e.mu.Unlock()
}

func (e *Endpoint) acceptLoop() {
	defer e.wg.Done()
	for {
		c, err := e.ln.Accept(e.ctx)
		if err != nil {
			return
		}
		cands := e.candidates(c.RemoteAddr().Addr())
		if len(cands) == 0 {
			e.log.Warn().Stringer("from", c.RemoteAddr()).Msg("m3ua: association from unknown address refused")
			e.refuse(c, ErrNoConfiguredAS)
			continue
		}
		s := newSession(e, c, false)
		if len(cands) == 1 {
			s.peer.Store(cands[0])
		} else {
			s.cands = cands
		}
		e.wg.Add(1)
		go func() { defer e.wg.Done(); s.run() }()
	}
}

// candidates are the accept-side peers configured for a remote address.
func (e *Endpoint) candidates(ip netip.Addr) []*Association {
	var out []*Association
	for _, a := range e.peers {
		if a.cfg.From.IsValid() && a.cfg.From == ip.Unmap() {
			out = append(out, a)
		}
	}
	return out
}

// refuse answers an unwanted association with ERR and ends it.
func (e *Endpoint) refuse(c transport.Conn, code ErrorCode) {
	e.stats.RefusedPeers.Add(1)
	s := newSession(e, c, false)
	s.sendErr(code, nil)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), e.tack)
		defer cancel()
		_ = c.Shutdown(ctx)
		_ = c.Close()
	}()
}

// takeover applies override mode on the SG side: an ASP going active for a
// routing context makes the others serving it inactive, told by NTFY
// "alternate ASP active" (RFC 4666 §4.3.4.3).
func (e *Endpoint) takeover(winner *session, rcs []uint32) {
	e.mu.Lock()
	var losers []*session
	for s := range e.sessions {
		if s != winner && s.remoteActive() && s.servesAny(rcs) {
			losers = append(losers, s)
		}
	}
	e.mu.Unlock()
	for _, s := range losers {
		s.demote()
	}
}

// Abort drops every association at once with SCTP ABORT and stops dialling,
// without the ASP Inactive and ASP Down of Close: what peers see of a process
// that is killed (its kernel aborts the associations). Tests use it as kill -9;
// Close may follow to release the listener.
func (e *Endpoint) Abort() {
	e.cancel()
	if e.ln != nil {
		_ = e.ln.Close()
	}
	e.mu.Lock()
	all := make([]*session, 0, len(e.sessions))
	for s := range e.sessions {
		all = append(all, s)
	}
	e.mu.Unlock()
	for _, s := range all {
		s.end("aborted: endpoint killed")
	}
}
