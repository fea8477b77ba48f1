package m3ua

import (
	"github.com/isupgw/isupgw/mtp"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// The answering side of ASPSM/ASPTM: SG, accepting IPSP, and both IPSPs in
// double exchange.

// identify binds an accepted association to a configured peer by its ASP
// identifier. It returns the ERR code to refuse with, or 0.
func (s *session) identify(id uint32, hasID bool) ErrorCode {
	if a := s.peer.Load(); a != nil {
		if a.cfg.HasASPID && (!hasID || id != a.cfg.ASPID) {
			if !hasID {
				return ErrASPIDRequired
			}
			return ErrInvalidASPID
		}
		return 0
	}
	var open *Association
	needID := false
	for _, c := range s.cands {
		switch {
		case c.cfg.HasASPID && hasID && c.cfg.ASPID == id:
			s.peer.Store(c)
			return 0
		case !c.cfg.HasASPID && open == nil:
			open = c
		case c.cfg.HasASPID:
			needID = true
		}
	}
	if open != nil {
		s.peer.Store(open)
		return 0
	}
	if needID && !hasID {
		return ErrASPIDRequired
	}
	return ErrInvalidASPID
}

func (s *session) handleAspUp(b []byte, m *messages.AspUp) {
	if !s.passive {
		s.unexpected(b)
		return
	}
	id, hasID := u32(m.AspIdentifier)
	if m.AspIdentifier != nil && !hasID {
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, ErrParamField)
		return
	}
	if code := s.identify(id, hasID); code != 0 {
		s.e.stats.RefusedPeers.Add(1)
		s.sendErrFor(b, code)
		go s.refuseEnd("ASP Up refused")
		return
	}
	a := s.peer.Load()
	s.mu.Lock()
	s.upID, s.hasUpID = id, hasID
	s.mu.Unlock()
	if !s.takeSlot(a, id, hasID) {
		s.e.stats.RefusedTakeovers.Add(1)
		s.e.stats.RefusedPeers.Add(1)
		s.e.log.Warn().Str("peer", a.cfg.Name).Stringer("from", s.conn.RemoteAddr()).
			Msg("m3ua: ASP Up on a second association refused: the current one is alive")
		s.sendErrFor(b, ErrRefusedMgmtBlocking)
		go s.refuseEnd("ASP Up refused: association in use")
		return
	}
	s.mu.Lock()
	wasActive := s.remote == StateActive
	s.remote = StateInactive
	ev := s.updateTrafficLocked("ASP Up")
	s.mu.Unlock()
	var aspID *params.Param
	if hasID {
		aspID = params.NewAspIdentifier(id)
	}
	_ = s.write(marshal(messages.NewAspUpAck(aspID, nil)), 0)
	if wasActive {
		// RFC 4666 §4.3.4.1: an ASP Up from an ASP we hold ASP-ACTIVE gets the
		// ASP Up Ack and an ERR "Unexpected Message"; the ASP is now inactive.
		s.unexpected(b)
	}
	// RFC 4666 §4.3.4.1: the ASP is told the AS's state, AS-Active when an
	// alternate serves it, so that a standby knows to stay inactive.
	_ = s.write(s.notify(statusASChange, s.e.asInfo(a, s), aspID, s.rcParam()), 0)
	s.emitState(ev)
	if wasActive {
		s.e.asLost(s)
	}
	// A double-exchange IPSP that was waiting to know its peer starts its
	// own ASP Up now.
	s.mu.Lock()
	startOwn := s.active && s.local == StateDown && s.pend == pendNone
	s.mu.Unlock()
	if startOwn {
		s.request(pendUp, s.aspUp())
	}
}

// takeSlot makes s the peer's current association unless another one is
// alive and not being restarted by this ASP (see restartedBy). Two newcomers
// at once: one wins the swap, the other then sees it alive.
func (s *session) takeSlot(a *Association, id uint32, hasID bool) bool {
	for range 3 {
		cur := a.cur.Load()
		if cur == s {
			return true
		}
		if cur != nil && !cur.restartedBy(id, hasID) {
			return false
		}
		if a.cur.CompareAndSwap(cur, s) {
			if cur != nil {
				s.e.log.Info().Str("peer", a.cfg.Name).Uint32("asp_id", id).Msg("m3ua: ASP restarted on a new association")
				cur.end("replaced by a new association")
			}
			return true
		}
	}
	return false
}

// restartedBy says whether an ASP Up with this identifier, on another
// association, is the ASP of s restarting, so the new association may replace
// s although s has not failed. A live association is never handed to a
// newcomer otherwise (it may be a stale or forged process at the peer's
// address); a dead one has already been ended by the liveness rules (BEAT
// timeout, SCTP failure) and is no longer current. Only an ASP Identifier
// (RFC 4666 §3.5.1: unique among the ASPs of the AS) can say "same ASP": s
// must have sent it too.
func (s *session) restartedBy(id uint32, hasID bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return true
	}
	return hasID && s.hasUpID && s.upID == id
}

// refuseEnd closes a refused association after the ERR had time to leave.
func (s *session) refuseEnd(reason string) {
	ctx, cancel := contextWithTimeout(s.e.tack)
	defer cancel()
	_ = s.conn.Shutdown(ctx)
	s.end(reason)
}

func (s *session) handleAspDown(b []byte) {
	if !s.passive {
		s.unexpected(b)
		return
	}
	s.mu.Lock()
	wasActive := s.remote == StateActive
	s.remote = StateDown
	ev := s.updateTrafficLocked("ASP Down")
	s.mu.Unlock()
	_ = s.write(marshal(messages.NewAspDownAck(nil)), 0)
	s.emitState(ev)
	if wasActive {
		s.e.asLost(s)
	}
}

func (s *session) handleAspActive(b []byte, m *messages.AspActive) {
	s.mu.Lock()
	up := s.remote != StateDown
	s.mu.Unlock()
	if !s.passive || !up || s.peer.Load() == nil {
		s.unexpected(b)
		return
	}
	a := s.peer.Load()
	mode := uint32(mtp.Loadshare)
	if m.TrafficModeType != nil {
		v, ok := u32(m.TrafficModeType)
		if !ok {
			s.e.stats.Malformed.Add(1)
			s.sendErrFor(b, ErrParamField)
			return
		}
		if v != uint32(mtp.Override) && v != uint32(mtp.Loadshare) {
			s.sendErrFor(b, ErrUnsupportedTrafficMode) // broadcast (3) not offered
			return
		}
		mode = v
	}
	var rcs []uint32
	if m.RoutingContext != nil {
		var ok bool
		if rcs, ok = u32s(m.RoutingContext); !ok {
			s.e.stats.Malformed.Add(1)
			s.sendErrFor(b, ErrParamField)
			return
		}
		for _, rc := range rcs {
			if !a.knowsRC(rc) {
				s.e.stats.RefusedPeers.Add(1)
				s.sendErrRC(b, ErrInvalidRC, m.RoutingContext)
				return
			}
		}
	} else if len(a.cfg.RoutingContexts) > 1 {
		// RC is mandatory when the ASP serves several ASes (§3.7.1).
		s.sendErrFor(b, ErrMissingParam)
		return
	}
	if rcs == nil {
		rcs = a.cfg.RoutingContexts
	}
	// One activation at a time (asOrder): the one processed last wins the
	// AS in override, and an activation that lags cannot demote the ASP
	// that took over after it. Its state changes are emitted under the lock
	// too, so that users see them in the order they happened.
	s.e.asOrder.Lock()
	defer s.e.asOrder.Unlock()
	asWasActive := s.e.asInfo(a, s) == asActive
	s.mu.Lock()
	s.remote = StateActive
	s.remoteRCs = rcs
	ev := s.updateTrafficLocked("ASP Active")
	s.mu.Unlock()
	_ = s.write(marshal(messages.NewAspActiveAck(params.NewTrafficModeType(mode), m.RoutingContext, nil)), 0)
	_ = s.write(s.notify(statusASChange, asActive, s.aspIDParam(), m.RoutingContext), 0)
	s.emitState(ev)
	s.e.asActivated(s, asWasActive)
	if mode == uint32(mtp.Override) {
		s.e.takeover(s, rcs)
	}
}

func (s *session) handleAspInactive(b []byte, m *messages.AspInactive) {
	s.mu.Lock()
	up := s.remote != StateDown
	s.mu.Unlock()
	if !s.passive || !up {
		s.unexpected(b)
		return
	}
	s.mu.Lock()
	wasActive := s.remote == StateActive
	s.remote = StateInactive
	ev := s.updateTrafficLocked("ASP Inactive")
	s.mu.Unlock()
	_ = s.write(marshal(messages.NewAspInactiveAck(m.RoutingContext, nil)), 0)
	s.emitState(ev)
	if wasActive {
		s.e.asLost(s)
	}
}

// demote makes an active ASP inactive because another took over (override).
func (s *session) demote() {
	s.mu.Lock()
	s.remote = StateInactive
	ev := s.updateTrafficLocked("alternate ASP active")
	s.mu.Unlock()
	_ = s.write(s.notify(statusOther, otherAltActive, s.aspIDParam(), s.rcParam()), 0)
	s.emitState(ev)
}
