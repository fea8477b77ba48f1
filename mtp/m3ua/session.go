package m3ua

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// State is an ASP state (RFC 4666 §4.3.1).
type State int

// ASP states.
const (
	StateDown State = iota
	StateInactive
	StateActive
)

func (s State) String() string {
	return [...]string{"down", "inactive", "active"}[s]
}

// pending is the ASPSM/ASPTM request awaiting its ack under T(ack).
type pending int

const (
	pendNone pending = iota
	pendUp
	pendActive
	pendInactive
	pendDown
)

// session is one SCTP association's M3UA state. Handlers run on the read
// goroutine; timers and Close run elsewhere, so state is under mu.
type session struct {
	e       *Endpoint
	conn    transport.Conn
	dialed  bool
	streams uint16
	// active: we send ASP Up/Active (ASP; dialling IPSP; both IPSPs in
	// double exchange). passive: we answer them (SG; accepting IPSP).
	active, passive bool

	peer  atomic.Pointer[Association] // nil until identified
	cands []*Association              // accept side, several peers share the address

	trafficOK atomic.Bool // we may send DATA
	dataOK    atomic.Bool // we accept DATA (the peer, or we, are ACTIVE in the role that carries it)
	wasActive atomic.Bool
	rx        atomic.Uint64 // messages received: a sign of life for the heartbeat

	mu    sync.Mutex
	local State // our state toward the peer (active role)
	// goal is where the active role heads after ASP Up Ack: ACTIVE, or
	// INACTIVE when an unsolicited ASP Down Ack took down an inactive ASP.
	goal      State
	remote    State // the peer's state (passive role)
	remoteRCs []uint32
	ackRCs    []uint32 // RCs named by the peer's ASP Active Ack (active role)
	// upID is the ASP Identifier of the peer's ASP Up (passive role).
	upID     uint32
	hasUpID  bool
	reported State
	pend     pending
	// early holds DATA that arrived while our ASP Active awaited its Ack: the
	// peer sent it after its Ack, but on another stream, so it may overtake
	// the Ack. It is delivered, in order, once the Ack is in (nil: not holding).
	early     [][]byte
	pendMsg   []byte
	pendDone  chan struct{}
	tackTimer Timer
	beatTimer Timer
	beatSeq   uint32
	rxSeen    uint64    // rx at the last heartbeat tick
	heard     time.Time // when the peer was last heard from (to a tick)
	ended     bool
	done      chan struct{}
	endOnce   sync.Once
}

func newSession(e *Endpoint, c transport.Conn, dialed bool) *session {
	s := &session{e: e, conn: c, dialed: dialed, streams: c.OutboundStreams(), goal: StateActive, done: make(chan struct{})}
	switch e.cfg.Role {
	case RoleASP:
		s.active = true
	case RoleSG:
		s.passive = true
	case RoleIPSP:
		s.active = dialed || e.cfg.DoubleExchange
		s.passive = !dialed || e.cfg.DoubleExchange
	}
	return s
}

func (s *session) name() string {
	if a := s.peer.Load(); a != nil {
		return a.cfg.Name
	}
	return s.conn.RemoteAddr().String()
}

// run drives the association until it ends.
func (s *session) run() {
	s.e.addSession(s)
	defer s.e.removeSession(s)
	s.startBeat()
	if s.active && s.peer.Load() != nil {
		s.request(pendUp, s.aspUp())
	}
	if srv, ok := s.conn.(transport.Server); ok {
		err := srv.Serve(s.handle) // handle is safe for concurrent streams
		s.end("association lost: " + err.Error())
		return
	}
	buf := make([]byte, transport.DefaultMaxMessage)
	for {
		n, stream, ppid, err := s.conn.ReadMsg(buf)
		if errors.Is(err, transport.ErrShortBuffer) {
			s.e.stats.Malformed.Add(1)
			continue
		}
		if err != nil {
			s.end("association lost: " + err.Error())
			return
		}
		s.handle(buf[:n], stream, ppid)
	}
}

// write sends one M3UA message.
func (s *session) write(b []byte, stream uint16) error {
	if b == nil {
		return nil
	}
	if s.e.tap != nil {
		s.e.tap(true, s.conn.LocalAddr(), s.conn.RemoteAddr(), stream, b)
	}
	if err := s.conn.WriteMsg(b, stream, transport.PPIDM3UA); err != nil {
		return err
	}
	s.e.stats.countTx(b)
	s.e.stats.BytesOut.Add(uint64(len(b)))
	return nil
}

func (s *session) state() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active {
		return s.local
	}
	return s.remote
}

func (s *session) remoteActive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.passive && s.remote == StateActive
}

func (s *session) servesAny(rcs []uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(rcs) == 0 && len(s.remoteRCs) == 0 {
		return true
	}
	for _, a := range rcs {
		for _, b := range s.remoteRCs {
			if a == b {
				return true
			}
		}
	}
	return false
}

// updateTrafficLocked recomputes whether DATA may flow and returns the
// state event to emit after unlocking, if the reported state changed.
func (s *session) updateTrafficLocked(reason string) *mtp.PeerState {
	ok := !s.ended && (!s.active || s.local == StateActive) && (!s.passive || s.remote == StateActive)
	s.trafficOK.Store(ok)
	s.dataOK.Store(!s.ended && ((s.passive && s.remote == StateActive) || (s.active && s.local == StateActive)))
	if ok {
		s.wasActive.Store(true)
	}
	st := s.local
	switch {
	case s.active && s.passive:
		st = min(s.local, s.remote)
	case s.passive:
		st = s.remote
	}
	if st == s.reported {
		return nil
	}
	s.reported = st
	s.e.stats.StateChanges.Add(1)
	return &mtp.PeerState{Peer: s.name(), State: st.String(), Reason: reason}
}

func (s *session) emitState(ev *mtp.PeerState) {
	if ev != nil && s.peer.Load() != nil {
		s.e.log.Info().Str("peer", ev.Peer).Str("state", ev.State).Str("reason", ev.Reason).Msg("m3ua state")
		s.e.emit(*ev)
	}
}

// end tears the association down (ABORT) and tells the user.
func (s *session) end(reason string) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		lostActive := s.passive && s.remote == StateActive
		s.ended = true
		s.stopTimersLocked()
		if s.pendDone != nil {
			close(s.pendDone)
			s.pendDone = nil
		}
		s.local, s.remote = StateDown, StateDown
		s.trafficOK.Store(false)
		s.dataOK.Store(false)
		s.mu.Unlock()
		close(s.done)
		_ = s.conn.Close()
		if a := s.peer.Load(); a != nil && a.detach(s) {
			s.e.table.ClearProhibited(a.cfg.Name)
			s.e.stats.StateChanges.Add(1)
			s.emitState(&mtp.PeerState{Peer: a.cfg.Name, State: StateDown.String(), Reason: reason})
		}
		if lostActive {
			s.e.asLost(s)
		}
	})
}

func (s *session) stopTimersLocked() {
	for _, t := range []Timer{s.tackTimer, s.beatTimer} {
		if t != nil {
			t.Stop()
		}
	}
	s.tackTimer, s.beatTimer = nil, nil
}

// stop ends the association gracefully: ASP Inactive and ASP Down where we
// are the ASP, then SCTP SHUTDOWN.
func (s *session) stop(ctx context.Context) {
	if s.active {
		if s.state() == StateActive {
			s.await(ctx, pendInactive, s.aspInactive())
		}
		if s.state() != StateDown {
			s.await(ctx, pendDown, marshalAspDown())
		}
	}
	s.mu.Lock()
	s.ended = true
	s.stopTimersLocked()
	s.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, 2*s.e.tack)
	defer cancel()
	_ = s.conn.Shutdown(sctx)
	s.end("stopped")
}

// await sends a request and waits for its ack, T(ack) retransmissions
// included, bounded by ctx and 2 x T(ack) of wall time.
func (s *session) await(ctx context.Context, p pending, b []byte) {
	done := s.request(p, b)
	if done == nil {
		return
	}
	t := time.NewTimer(2 * s.e.tack)
	defer t.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-t.C:
	}
}

// request sends an ASPSM/ASPTM request and retransmits it every T(ack)
// until answered. It returns a channel closed when the ack arrives.
func (s *session) request(p pending, b []byte) chan struct{} {
	s.mu.Lock()
	if s.ended && p != pendInactive && p != pendDown {
		s.mu.Unlock()
		return nil
	}
	if s.tackTimer != nil {
		s.tackTimer.Stop()
	}
	if s.pendDone != nil {
		close(s.pendDone)
	}
	s.pend, s.pendMsg = p, b
	done := make(chan struct{})
	s.pendDone = done
	s.tackTimer = s.e.clock.AfterFunc(s.e.tack, s.onTack)
	s.mu.Unlock()
	_ = s.write(b, 0)
	return done
}

func (s *session) onTack() {
	s.mu.Lock()
	if s.pend == pendNone || s.tackTimer == nil {
		s.mu.Unlock()
		return
	}
	b := s.pendMsg
	s.tackTimer = s.e.clock.AfterFunc(s.e.tack, s.onTack)
	s.mu.Unlock()
	s.e.stats.TackRetransmits.Add(1)
	_ = s.write(b, 0)
}

// acked clears the pending request if it is p; false if p was not pending.
func (s *session) ackedLocked(p pending) bool {
	if s.pend != p {
		return false
	}
	s.pend, s.pendMsg = pendNone, nil
	if s.tackTimer != nil {
		s.tackTimer.Stop()
		s.tackTimer = nil
	}
	if s.pendDone != nil {
		close(s.pendDone)
		s.pendDone = nil
	}
	return true
}
