package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

// Multi is a host attached to several gateways (docs/deployment.md): the two
// of an active/standby pair, N gateways each with its own point code and
// trunk groups, or N pairs. Each new call goes to a gateway that is
// available for its destination (Gateways: connected, not standby, with a
// circuit group towards the DPC, the DPC not reported unavailable there), the
// least loaded of them, in turns among equals; a call stays on the gateway
// that took it (its events come from that connection and Call names it), so
// a takeover or a lost gateway moves new calls, never calls in progress.
//
// When a gateway's connection ends, Events carries a *GatewayLost for it and
// then a *Released (cause 41, temporary failure, Remote, reason "gateway
// connection lost") for every call of this host it still carried, so that no
// call is left half-open at the host; new calls go to the others.
type Multi struct {
	clients []atomic.Pointer[Client] // replaced when a lost gateway is dialled again
	gws     *Gateways
	events  chan GatewayEvent
	wg      sync.WaitGroup
	// redial, when set (DialMulti), connects to gateway i again.
	redial func(ctx context.Context, i int) (*Client, error)
	cmu    sync.Mutex // orders a redialled connection against Close
	closed chan struct{}

	mu       sync.Mutex
	open     map[callKey]openCall // calls in progress, by gateway
	early    map[callKey]bool     // released before their outseize returned
	inflight []int                // outseizes waiting for their answer, per gateway
}

type callKey struct {
	gw   int
	call uint64
}

type openCall struct {
	dpc uint32
	cic uint16
}

// Call is a call placed through a Multi: the gateway that carries it and
// its handle there.
type Call struct {
	Gateway int
	Seized
}

// GatewayEvent is an event of one of the gateways (index into the addresses).
type GatewayEvent struct {
	Gateway int
	Event   Event
}

// GatewayLost is Multi's own event: the connection to the gateway ended
// (Err says why) and new calls go to the others; Calls is how many of this
// host's calls it carried, each reported released right after.
type GatewayLost struct {
	Err   error
	Calls int
}

// GatewayBack is Multi's own event: a lost (or never reached) gateway was
// dialled again and takes calls (once it says it is not standby).
type GatewayBack struct{}

func (*GatewayLost) event() {}
func (*GatewayBack) event() {}

// Redial bounds: a lost gateway is dialled again after RedialMin, doubling
// up to RedialMax between attempts, until the Multi is closed.
const (
	RedialMin = 100 * time.Millisecond
	RedialMax = 5 * time.Second
)

// CauseGatewayLost is the Q.850 cause of the released events Multi reports
// for the calls of a lost gateway: 41, temporary failure, as the gateway
// itself uses for calls it can no longer carry (docs/host-api.md).
const CauseGatewayLost = 41

// ErrNoActive is returned when no gateway is available for the call
// (every one standby, gone, or not serving its destination).
var ErrNoActive = errors.New("client: no active gateway")

func newMulti(n int, cfg Config) *Multi {
	return &Multi{clients: make([]atomic.Pointer[Client], n), gws: NewGateways(n), events: make(chan GatewayEvent, max(cfg.EventBuffer, 1024)),
		open: map[callKey]openCall{}, early: map[callKey]bool{}, inflight: make([]int, n), closed: make(chan struct{})}
}

// DialMulti connects to every address and at least one must answer. A
// gateway that cannot be reached, or whose connection ends later, is left
// out (never chosen) and dialled again (RedialMin to RedialMax apart) until
// Close: a restarted instance of a pair comes back (as the standby) and
// takes calls again at the next takeover (GatewayBack).
func DialMulti(ctx context.Context, network string, addrs []string, cfg Config) (*Multi, error) {
	m := newMulti(len(addrs), cfg)
	m.redial = func(ctx context.Context, i int) (*Client, error) { return Dial(ctx, network, addrs[i], cfg) }
	var errs []error
	var missing []int
	for i, a := range addrs {
		c, err := Dial(ctx, network, a, cfg)
		if err != nil {
			errs = append(errs, err)
			m.gws.SetDown(i, true)
			missing = append(missing, i)
			continue
		}
		m.attach(ctx, i, c)
	}
	if len(errs) == len(addrs) {
		return nil, errors.Join(errs...)
	}
	for _, i := range missing {
		m.wg.Add(1)
		go m.reconnect(i)
	}
	go func() { m.wg.Wait(); close(m.events) }()
	return m, nil
}

// reconnect dials gateway i until it answers or the Multi is closed (wg
// counted by the caller).
func (m *Multi) reconnect(i int) {
	defer m.wg.Done()
	wait := RedialMin
	for {
		t := time.NewTimer(wait)
		select {
		case <-m.closed:
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), RedialMax)
		c, err := m.redial(ctx, i)
		if err == nil {
			m.cmu.Lock()
			select {
			case <-m.closed: // closed meanwhile: Close did not see this one
				m.cmu.Unlock()
				c.Close()
				cancel()
				return
			default:
				m.clients[i].Store(c)
				m.cmu.Unlock()
			}
			m.gws.SetStandby(i, false) // until its hello's alarms say otherwise
			m.attach(ctx, i, c)
			m.gws.SetDown(i, false)
			m.events <- GatewayEvent{Gateway: i, Event: &GatewayBack{}}
			cancel()
			return
		}
		cancel()
		wait = min(2*wait, RedialMax)
	}
}

// NewMulti is DialMulti over connections already open (tests).
func NewMulti(ctx context.Context, conns []net.Conn, cfg Config) (*Multi, error) {
	m := newMulti(len(conns), cfg)
	for i, nc := range conns {
		c, err := New(ctx, nc, cfg)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.attach(ctx, i, c)
	}
	go func() { m.wg.Wait(); close(m.events) }()
	return m, nil
}

// attach learns which destinations gateway i serves (its circuit groups'
// point codes; a gateway that lists none may take any) and starts relaying
// its events.
func (m *Multi) attach(ctx context.Context, i int, c *Client) {
	m.clients[i].Store(c)
	if _, groups, err := c.Circuits(ctx, CircuitFilter{Summary: true}); err == nil && len(groups) > 0 {
		dpcs := make([]uint32, 0, len(groups))
		for _, g := range groups {
			dpcs = append(dpcs, g.DPC)
		}
		m.gws.SetServes(i, dpcs)
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for ev := range c.Events() {
			m.gws.Observe(i, ev)
			switch e := ev.(type) {
			case *Incoming:
				m.opened(i, e.Call, openCall{dpc: e.OPC, cic: e.CIC})
			case *Released:
				m.ended(i, e.Call)
			}
			m.events <- GatewayEvent{Gateway: i, Event: ev}
		}
		m.lost(i, c)
		if m.redial != nil {
			select {
			case <-m.closed:
			default:
				m.wg.Add(1)
				go m.reconnect(i)
			}
		}
	}()
}

// opened records a call gateway i carries for this host.
func (m *Multi) opened(i int, call uint64, oc openCall) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := callKey{i, call}
	if m.early[k] {
		delete(m.early, k) // its released came first: it is over
		return
	}
	m.open[k] = oc
	m.gws.CallStarted(i)
}

// ended records a released call. One not known yet may be an outseize whose
// ack the caller has not seen (the gateway sends the ack first, but the
// caller's goroutine may run later): kept until the outseizes return.
func (m *Multi) ended(i int, call uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := callKey{i, call}
	if _, ok := m.open[k]; ok {
		delete(m.open, k)
		m.gws.CallEnded(i)
	} else if m.inflight[i] > 0 {
		m.early[k] = true
	}
}

func (m *Multi) outseizeDone(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inflight[i]--; m.inflight[i] == 0 {
		for k := range m.early {
			if k.gw == i {
				delete(m.early, k)
			}
		}
	}
}

// lost tells the host that gateway i is gone and ends its calls there.
func (m *Multi) lost(i int, c *Client) {
	m.gws.SetDown(i, true)
	m.mu.Lock()
	var calls []Released
	for k, oc := range m.open {
		if k.gw == i {
			delete(m.open, k)
			m.gws.CallEnded(i)
			calls = append(calls, Released{Call: k.call, Cause: CauseGatewayLost, Location: 2, DPC: oc.dpc, CIC: oc.cic, Remote: true,
				Reason: "gateway connection lost"})
		}
	}
	m.mu.Unlock()
	m.events <- GatewayEvent{Gateway: i, Event: &GatewayLost{Err: c.Err(), Calls: len(calls)}}
	for k := range calls {
		m.events <- GatewayEvent{Gateway: i, Event: &calls[k]}
	}
}

// Gateways is what the Multi knows of its gateways; SetServes on it
// overrides the destinations learned at connect.
func (m *Multi) Gateways() *Gateways { return m.gws }

// Active is the first gateway that takes new calls (any destination), or -1.
func (m *Multi) Active() int {
	for i := range m.clients {
		if m.gws.Available(i, 0) {
			return i
		}
	}
	return -1
}

// Events delivers every gateway's events, each with its gateway, and the
// Multi's own (*GatewayLost).
func (m *Multi) Events() <-chan GatewayEvent { return m.events }

// Client is the connection to gateway i (nil if it was never reached).
func (m *Multi) Client(i int) *Client { return m.clients[i].Load() }

// retryElsewhere says whether an outseize refused by one gateway may be
// tried on another: the refusal is about that gateway (its role, its
// circuits, its view of the destination, its shutdown), not about the call.
func retryElsewhere(err error) bool {
	if errors.Is(err, ErrClosed) {
		return true
	}
	var nak *Nak
	if !errors.As(err, &nak) {
		return false
	}
	switch nak.Status {
	case wire.StatusStandby, wire.StatusNoCircuit, wire.StatusDestinationUnavailable, wire.StatusDestinationOutOfService, wire.StatusShuttingDown:
		return true
	}
	return false
}

// Outseize places a call on an available gateway for o.DPC (a call by route
// name may go to any). A refusal that is about the gateway (retryElsewhere;
// a nak "standby" also marks it standby) is tried on the next one; any other
// answer is final. With no gateway left it returns the last such refusal,
// or ErrNoActive.
func (m *Multi) Outseize(ctx context.Context, o Outseize) (Call, error) {
	var tried uint64
	var last error
	for range len(m.clients) {
		i := m.gws.Pick(o.DPC, tried)
		if i < 0 {
			break
		}
		tried |= 1 << i
		m.mu.Lock()
		m.inflight[i]++
		m.mu.Unlock()
		s, err := m.Client(i).Outseize(ctx, o)
		if err == nil {
			m.opened(i, s.Call, openCall{dpc: s.DPC, cic: s.CIC})
		}
		m.outseizeDone(i)
		if err == nil || !retryElsewhere(err) {
			return Call{Gateway: i, Seized: s}, err
		}
		var nak *Nak
		if errors.As(err, &nak) && nak.Status == wire.StatusStandby {
			m.gws.SetStandby(i, true)
			continue
		}
		if !errors.Is(err, ErrClosed) {
			last = err
		}
	}
	if last != nil {
		return Call{}, last
	}
	return Call{}, ErrNoActive
}

// Release ends a call on the gateway that carries it.
func (m *Multi) Release(ctx context.Context, c Call, cause, location uint8) error {
	cl := m.Client(c.Gateway)
	if cl == nil {
		return ErrClosed
	}
	return cl.Release(ctx, c.Call, cause, location)
}

// Close closes every connection and stops dialling lost gateways.
func (m *Multi) Close() error {
	m.cmu.Lock()
	select {
	case <-m.closed:
	default:
		close(m.closed)
	}
	var cs []*Client
	for i := range m.clients {
		if c := m.Client(i); c != nil {
			cs = append(cs, c)
		}
	}
	m.cmu.Unlock()
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
