package m3ua

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// Association is a configured peer and its current SCTP association, which
// changes across reconnects. It is the mtp.Link the routing table uses.
type Association struct {
	e   *Endpoint
	cfg Peer
	cur atomic.Pointer[session]
	// dial is the dialler of a Dial peer (Redial replaces it).
	dialMu sync.Mutex
	dial   *dialer
}

var _ mtp.Link = (*Association)(nil)

// Name is the peer's configured name.
func (a *Association) Name() string { return a.cfg.Name }

// Available reports whether DATA may be sent now.
func (a *Association) Available() bool {
	s := a.cur.Load()
	return s != nil && s.trafficOK.Load()
}

// State returns the ASP state of the current association ("down" if none).
func (a *Association) State() State {
	s := a.cur.Load()
	if s == nil {
		return StateDown
	}
	return s.state()
}

// Abort drops the current SCTP association at once (ABORT); a dialling
// peer reconnects. Operators use it to restart a stuck association.
func (a *Association) Abort() {
	if s := a.cur.Load(); s != nil {
		s.end("aborted by user")
	}
}

var dataBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Send encodes m as DATA and writes it on the stream its SLS maps to.
func (a *Association) Send(m *mtp.Message) error {
	s := a.cur.Load()
	if s == nil || !s.trafficOK.Load() {
		return ErrNotActive
	}
	rc, hasRC := uint32(0), len(a.cfg.RoutingContexts) > 0
	if hasRC {
		rc = a.cfg.RoutingContexts[0]
	}
	bp := dataBufs.Get().(*[]byte)
	b := appendData((*bp)[:0], m, rc, hasRC, a.e.cfg.NetworkAppearance, a.e.cfg.HasNetworkAppearance)
	err := s.write(b, mtp.StreamForSLS(m.SLS, s.streams))
	if err == nil {
		a.e.stats.DataOut.Add(1)
	}
	*bp = b
	dataBufs.Put(bp)
	return err
}

// attach makes s the current association, ending a previous one (an ASP
// that reconnects replaces its old association).
func (a *Association) attach(s *session) {
	if old := a.cur.Swap(s); old != nil && old != s {
		old.end("replaced by a new association")
	}
}

func (a *Association) detach(s *session) bool {
	return a.cur.CompareAndSwap(s, nil)
}

// dialer is the goroutine dialling one address for a Dial peer.
type dialer struct {
	addr   netip.AddrPort
	cancel context.CancelFunc
	done   chan struct{}
}

// startDial starts dialling addr (a.dialMu held, or before Start returns).
func (a *Association) startDial(addr netip.AddrPort) {
	ctx, cancel := context.WithCancel(a.e.ctx)
	d := &dialer{addr: addr, cancel: cancel, done: make(chan struct{})}
	a.dial = d
	a.e.wg.Add(1)
	go a.dialLoop(ctx, d)
}

// DialAddress is the address the association is dialled at now (zero for a
// peer that connects to us).
func (a *Association) DialAddress() netip.AddrPort {
	a.dialMu.Lock()
	defer a.dialMu.Unlock()
	if a.dial == nil {
		return netip.AddrPort{}
	}
	return a.dial.addr
}

// Redial moves a dialling peer to a new address (a configuration reload):
// its dialler stops, the current association, if any, ends (ABORT), and
// dialling starts at addr. Nothing else of the endpoint is touched: other
// associations, the routes (the peer keeps its place in them) and the
// counters stay as they are.
func (e *Endpoint) Redial(peer string, addr netip.AddrPort) error {
	a := e.byName[peer]
	if a == nil {
		return fmt.Errorf("%w: %q", ErrUnknownPeer, peer)
	}
	if !a.cfg.Dial.IsValid() || !addr.IsValid() {
		return fmt.Errorf("%w: peer %q: only a peer we dial can change its address, to a valid one", ErrConfig, peer)
	}
	if e.ctx.Err() != nil {
		return e.ctx.Err()
	}
	a.dialMu.Lock()
	defer a.dialMu.Unlock()
	old := a.dial
	if old != nil {
		if old.addr == addr {
			return nil
		}
		old.cancel()
		if s := a.cur.Load(); s != nil {
			s.end("peer address changed to " + addr.String())
		}
		<-old.done
	}
	e.log.Info().Str("peer", peer).Str("from", old.addrText()).Str("to", addr.String()).Msg("m3ua: peer address changed: dialling the new one")
	a.startDial(addr)
	return nil
}

func (d *dialer) addrText() string {
	if d == nil {
		return "none"
	}
	return d.addr.String()
}

// dialLoop keeps an association to a Dial peer up, with exponential backoff
// between attempts, until the endpoint closes or Redial stops it. Every
// attempt after the first counts as a reconnect, whether the previous one
// lost an association or never got one: an address that never answers
// shows as a climbing counter, not as silence.
func (a *Association) dialLoop(ctx context.Context, d *dialer) {
	e := a.e
	defer e.wg.Done()
	defer close(d.done)
	backoff := e.backoffMin
	for first := true; ctx.Err() == nil; first = false {
		if !first {
			e.stats.Reconnects.Add(1)
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := transport.Dial(dctx, e.cfg.Transport, d.addr, e.topts...)
		cancel()
		switch {
		case err == nil && ctx.Err() != nil: // stopped while dialling
			_ = c.Close()
			return
		case err == nil:
			s := newSession(e, c, true)
			s.peer.Store(a)
			if a.cfg.Standby {
				s.goal = StateInactive // ASP Up only; ASP Active when the AS needs us
			}
			a.attach(s)
			s.run()
			if s.wasActive.Load() {
				backoff = e.backoffMin
			}
		default:
			e.log.Debug().Err(err).Str("peer", a.cfg.Name).Str("address", d.addr.String()).Msg("m3ua: dial failed")
		}
		if !e.sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, e.backoffMax)
	}
}

// sleepCtx waits d on the endpoint clock; false if ctx ended.
func (e *Endpoint) sleepCtx(ctx context.Context, d time.Duration) bool {
	ch := make(chan struct{})
	t := e.clock.AfterFunc(d, func() { close(ch) })
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}
