// Package gateway assembles a running ISUP gateway from its parts: the M3UA
// endpoint (mtp/m3ua) that carries ISUP to SIGTRAN peers, the ISUP stack
// (isup/stack) that owns circuits and calls, and the pumps between them. The
// binary, the demo and the end-to-end tests all build gateways here, so they
// run the same wiring.
package gateway

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/sprc"
)

// Config is what a gateway is made of.
type Config struct {
	Stack stack.Config
	M3UA  m3ua.Config
}

// Option adjusts a gateway.
type Option func(*options)

type options struct {
	mtp        MTP
	links      func() []LinkStatus
	m3ua       []m3ua.Option
	stack      []stack.Option
	onMTPEvent []func(mtp.Event)
	closeWait  time.Duration
	sprc       *sprcOptions
	iamRefused func(stack.RefusedIAM)
}

// OnIAMRefused makes f hear every incoming IAM refused: by the stack
// (released with a cause, or discarded on a circuit we blocked) and at the
// edge (dropped unread at inbound congestion level 2). f runs on the stack's
// loop or the inbound pump and must be cheap and safe for concurrent use.
func OnIAMRefused(f func(stack.RefusedIAM)) Option {
	return func(g *options) {
		g.iamRefused = f
		g.stack = append(g.stack, stack.WithIAMRefused(f))
	}
}

// WithM3UAOptions passes options to the M3UA endpoint.
func WithM3UAOptions(o ...m3ua.Option) Option {
	return func(g *options) { g.m3ua = append(g.m3ua, o...) }
}

// MTP is an MTP service beside the M3UA endpoint, such as an mtp/mtp3 node
// on its own signalling links: the destinations it routes go through it, the
// others through M3UA.
type MTP interface {
	Routes(dpc mtp.PointCode) bool
	Transfer(m *mtp.Message) error
	Indications() <-chan mtp.Message
	Events() <-chan mtp.Event
}

// WithMTP adds an MTP service beside M3UA; links, when set, reports its
// signalling links for the status.
func WithMTP(p MTP, links func() []LinkStatus) Option {
	return func(g *options) { g.mtp, g.links = p, links }
}

// WithStackOptions passes options to the ISUP stack.
func WithStackOptions(o ...stack.Option) Option {
	return func(g *options) { g.stack = append(g.stack, o...) }
}

// OnMTPEvent registers f to see every MTP status indication (congestion control
// listens to SCON this way). f runs on the event pump and must not block.
func OnMTPEvent(f func(mtp.Event)) Option {
	return func(g *options) { g.onMTPEvent = append(g.onMTPEvent, f) }
}

// Gateway is an M3UA endpoint and an ISUP stack wired together, with
// congestion control when configured.
type Gateway struct {
	Endpoint *m3ua.Endpoint
	Stack    *stack.Stack
	Control  *sprc.Controller // nil without WithCongestionControl
	firstCIC map[mtp.PointCode]uint16
	routes   map[string]mtp.PointCode // circuit group names
	// edge is the status every new outgoing call is refused with at the edge
	// (0: none; see edgeAdmit).
	edge     atomic.Uint32
	opts     options
	avail    *availability
	red      *redundancy
	sink     func(stack.Event)
	cfg      Config
	started  time.Time
	ctx      context.Context
	wg       sync.WaitGroup
	stackErr chan error
}

// New builds a gateway. Stack events go to sink from the stack's loop; sink must
// not block.
func New(cfg Config, sink func(stack.Event), opts ...Option) (*Gateway, error) {
	g := &Gateway{opts: options{closeWait: 5 * time.Second}}
	for _, o := range opts {
		o(&g.opts)
	}
	// Destinations are unreachable until an association says otherwise.
	cfg.Stack.AwaitResume = true
	if g.opts.sprc != nil {
		if err := g.attachControl(cfg); err != nil {
			return nil, err
		}
	}
	g.red, g.sink = newRedundancy(cfg), sink
	if g.red.role != RoleSingle {
		g.opts.stack = append(g.opts.stack, stack.WithEdgeAdmission(g.standbyEdge)) // after attachControl's: this one wins
	}
	ep, err := m3ua.New(cfg.M3UA, g.opts.m3ua...)
	if err != nil {
		return nil, err
	}
	transfer := ep.Transfer
	if p := g.opts.mtp; p != nil {
		transfer = func(m *mtp.Message) error {
			if p.Routes(m.DPC) {
				return p.Transfer(m)
			}
			return ep.Transfer(m)
		}
	}
	st, err := stack.New(cfg.Stack, transfer, sink, g.opts.stack...)
	if err != nil {
		return nil, err
	}
	g.Endpoint, g.Stack = ep, st
	g.avail = newAvailability(cfg)
	g.cfg = cfg
	return g, nil
}

// Start starts the endpoint (its listener is bound when Start returns), the
// stack and the pumps between them. They run until ctx ends; Wait then stops the
// associations gracefully (ASP Inactive, ASP Down, SCTP SHUTDOWN) within a
// bounded time.
func (g *Gateway) Start(ctx context.Context) error {
	if err := g.Endpoint.Start(ctx); err != nil {
		return err
	}
	g.ctx, g.started = ctx, time.Now()
	if g.red.role == RoleStandby {
		g.raise(stack.Alarm{Kind: stack.AlarmStandby, Text: "this gateway starts as the standby of its pair"})
	}
	g.stackErr = make(chan error, 1)
	g.wg.Add(3)
	go func() { defer g.wg.Done(); g.stackErr <- g.Stack.Run(ctx) }()
	if g.Control != nil {
		g.wg.Add(1)
		go func() { defer g.wg.Done(); g.runControl(ctx) }()
	}
	go func() {
		defer g.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-g.Endpoint.Indications():
				if !g.shed(m) {
					g.Stack.Deliver(m)
				}
			}
		}
	}()
	go func() {
		defer g.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-g.Endpoint.Events():
				g.mtpEvent(ev)
			}
		}
	}()
	if p := g.opts.mtp; p != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case m := <-p.Indications():
					if !g.shed(m) {
						g.Stack.Deliver(m)
					}
				case ev := <-p.Events():
					g.avail.mark(ev) // its pause and resume are the availability of what it routes
					g.mtpEvent(ev)
				}
			}
		}()
	}
	return nil
}

// Wait blocks until the context given to Start ends, then shuts down.
func (g *Gateway) Wait() error {
	<-g.ctx.Done()
	closeCtx, cancel := context.WithTimeout(context.Background(), g.opts.closeWait)
	defer cancel()
	closeErr := g.Endpoint.Close(closeCtx)
	g.wg.Wait()
	if err := <-g.stackErr; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return closeErr
}

// Run is Start then Wait.
func (g *Gateway) Run(ctx context.Context) error {
	if err := g.Start(ctx); err != nil {
		return err
	}
	return g.Wait()
}

// mtpEvent passes an indication to the listeners and the stack; an association
// changing state becomes pause or resume for the point codes behind it.
func (g *Gateway) mtpEvent(ev mtp.Event) {
	for _, f := range g.opts.onMTPEvent {
		f(ev)
	}
	if ps, ok := ev.(*mtp.PeerState); ok {
		ev = *ps
	}
	if ps, ok := ev.(mtp.PeerState); ok {
		if g.Control != nil {
			g.Control.MTPEvent(ps) // the IAMs in flight on a lost association are not the destination's failures
		}
		after := g.roleEvent(ps)
		for _, e := range g.avail.peerState(ps.Peer, ps.State == "active") {
			g.toStackAndControl(e)
		}
		if after != nil {
			after()
		}
		return
	}
	g.toStackAndControl(ev)
}

func (g *Gateway) toStackAndControl(ev mtp.Event) {
	if g.Control != nil {
		g.Control.MTPEvent(ev)
	}
	g.Stack.MTPEvent(ev)
}

// availability tracks which point codes are reachable through active
// associations, so that losing the last one pauses them.
type availability struct {
	mu     sync.Mutex
	viaPC  map[mtp.PointCode][]string // configured peers per destination
	active map[string]bool
	up     map[mtp.PointCode]bool
}

func newAvailability(cfg Config) *availability {
	a := &availability{viaPC: map[mtp.PointCode][]string{}, active: map[string]bool{}, up: map[mtp.PointCode]bool{}}
	var defaults []string
	for _, p := range cfg.M3UA.Peers {
		for _, pc := range p.DPCs {
			a.viaPC[pc] = append(a.viaPC[pc], p.Name)
		}
		if p.Default {
			defaults = append(defaults, p.Name)
		}
	}
	for _, grp := range cfg.Stack.Groups {
		if _, ok := a.viaPC[grp.DPC]; !ok {
			a.viaPC[grp.DPC] = defaults
		}
	}
	return a
}

// mark records a pause or resume of one point code from an MTP beside M3UA.
func (a *availability) mark(ev mtp.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch x := ev.(type) {
	case mtp.Pause:
		if x.Mask == 0 {
			a.up[x.PC] = false
		}
	case mtp.Resume:
		if x.Mask == 0 {
			a.up[x.PC] = true
		}
	}
}

// peerState records an association's state and returns the pause and resume
// indications that follow from it.
func (a *availability) peerState(peer string, active bool) []mtp.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.active[peer] = active
	var out []mtp.Event
	for pc, peers := range a.viaPC {
		up := false
		for _, p := range peers {
			up = up || a.active[p]
		}
		if up != a.up[pc] {
			a.up[pc] = up
			if up {
				out = append(out, mtp.Resume{Peer: peer, PC: pc})
			} else {
				out = append(out, mtp.Pause{Peer: peer, PC: pc})
			}
		}
	}
	return out
}
