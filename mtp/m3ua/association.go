package m3ua

import (
	"context"
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

// dialLoop keeps an association to a Dial peer up, with exponential backoff
// between attempts, until the endpoint closes.
func (a *Association) dialLoop() {
	e := a.e
	defer e.wg.Done()
	backoff := e.backoffMin
	lost := false
	for e.ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		c, err := transport.Dial(dctx, e.cfg.Transport, a.cfg.Dial, e.topts...)
		cancel()
		if err == nil {
			if lost {
				e.stats.Reconnects.Add(1)
			}
			s := newSession(e, c, true)
			s.peer.Store(a)
			if a.cfg.Standby {
				s.goal = StateInactive // ASP Up only; ASP Active when the AS needs us
			}
			a.attach(s)
			s.run()
			lost = true
			if s.wasActive.Load() {
				backoff = e.backoffMin
			}
		} else {
			e.log.Debug().Err(err).Str("peer", a.cfg.Name).Msg("m3ua: dial failed")
		}
		if !e.sleep(backoff) {
			return
		}
		backoff = min(2*backoff, e.backoffMax)
	}
}

// sleep waits d on the endpoint clock; false if the endpoint closed.
func (e *Endpoint) sleep(d time.Duration) bool {
	ch := make(chan struct{})
	t := e.clock.AfterFunc(d, func() { close(ch) })
	select {
	case <-ch:
		return true
	case <-e.ctx.Done():
		t.Stop()
		return false
	}
}
