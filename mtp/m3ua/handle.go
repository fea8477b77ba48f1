package m3ua

import (
	"slices"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// handle decodes and dispatches one received M3UA message. Nothing here may
// panic on bad input: every failure becomes a counted ERR (never an ERR in
// answer to an ERR) and the association stays up.
func (s *session) handle(b []byte, stream uint16, ppid uint32) {
	st := &s.e.stats
	s.rx.Add(1)
	st.BytesIn.Add(uint64(len(b)))
	if ppid != transport.PPIDM3UA {
		st.WrongPPID.Add(1)
	}
	if s.e.tap != nil {
		s.e.tap(false, s.conn.LocalAddr(), s.conn.RemoteAddr(), stream, b)
	}
	class, typ, err := checkHeader(b)
	if err != nil {
		st.Malformed.Add(1)
		s.sendErrFor(b, codeFor(err))
		return
	}
	classOK, typeOK := knownType(class, typ)
	if !classOK {
		st.Malformed.Add(1)
		s.sendErrFor(b, ErrUnsupportedClass)
		return
	}
	if !typeOK {
		st.Malformed.Add(1)
		s.sendErrFor(b, ErrUnsupportedType)
		return
	}
	st.countRx(class, typ)
	if class == classTransfer {
		s.handleData(b, stream)
		return
	}
	msg, err := messages.Parse(b)
	if err != nil {
		st.Malformed.Add(1)
		s.sendErrFor(b, codeFor(paramErr(err)))
		return
	}
	switch m := msg.(type) {
	case *messages.Error:
		s.handleError(m)
	case *messages.Notify:
		s.handleNotify(m)
	case *messages.AspUp:
		s.handleAspUp(b, m)
	case *messages.AspUpAck:
		s.handleAck(b, pendUp)
	case *messages.AspDown:
		s.handleAspDown(b)
	case *messages.AspDownAck:
		s.handleAck(b, pendDown)
	case *messages.Heartbeat:
		_ = s.write(marshal(messages.NewHeartbeatAck(m.HeartbeatData)), stream)
	case *messages.HeartbeatAck:
		// Nothing more to do: receiving it (any message) is the sign of life.
	case *messages.AspActive:
		s.handleAspActive(b, m)
	case *messages.AspActiveAck:
		s.handleAck(b, pendActive)
	case *messages.AspInactive:
		s.handleAspInactive(b, m)
	case *messages.AspInactiveAck:
		s.handleAck(b, pendInactive)
	default:
		s.handleSSNM(b, msg)
	}
}

// sendErrFor answers the message orig with ERR code, quoting up to 40 of
// its octets as diagnostic information.
func (s *session) sendErrFor(orig []byte, code ErrorCode) {
	if len(orig) >= 4 && orig[2] == classMGMT && orig[3] == messages.MsgTypeError {
		return // an ERR is never answered with an ERR
	}
	s.sendErr(code, orig)
}

// sendErrRC is sendErrFor with the routing contexts the ERR is about
// (RFC 4666 §3.8.1: "Invalid Routing Context" MUST carry the invalid ones).
func (s *session) sendErrRC(orig []byte, code ErrorCode, rc *params.Param) {
	if len(orig) >= 4 && orig[2] == classMGMT && orig[3] == messages.MsgTypeError {
		return
	}
	s.sendErrWith(code, orig, rc)
}

func (s *session) sendErr(code ErrorCode, orig []byte) { s.sendErrWith(code, orig, nil) }

func (s *session) sendErrWith(code ErrorCode, orig []byte, rc *params.Param) {
	var diag *params.Param
	if len(orig) > 0 {
		diag = params.NewDiagnosticInformation(append([]byte(nil), orig[:min(len(orig), 40)]...))
	}
	if s.write(marshal(messages.NewError(params.NewErrorCode(uint32(code)), rc, nil, nil, diag)), 0) == nil {
		s.e.stats.errSent[code].Add(1)
	}
	s.e.log.Debug().Str("peer", s.name()).Uint32("code", uint32(code)).Msg("m3ua: ERR sent")
}

func (s *session) unexpected(b []byte) {
	s.e.stats.Unexpected.Add(1)
	s.sendErrFor(b, ErrUnexpectedMessage)
}

// handleData delivers DATA as an MTP-TRANSFER indication.
func (s *session) handleData(b []byte, stream uint16) {
	if stream == 0 {
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, ErrInvalidStream) // RFC 4666 §1.4.7: DATA never on stream 0
		return
	}
	a := s.peer.Load()
	if s.holdEarly(b, stream) {
		return
	}
	if !s.dataOK.Load() || a == nil {
		s.unexpected(b)
		return
	}
	s.deliverData(a, b)
}

// maxEarly bounds the DATA held while waiting for an ASP Active Ack.
const maxEarly = 4096

// holdEarly keeps DATA that overtook the ASP Active Ack (and any DATA that
// arrives while held DATA is being delivered, so each stream stays in order).
func (s *session) holdEarly(b []byte, stream uint16) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	holding := s.early != nil
	waiting := !s.dataOK.Load() && s.active && s.pend == pendActive
	if (!holding && !waiting) || len(s.early) >= maxEarly {
		return false
	}
	if s.early == nil {
		s.early = make([][]byte, 0, 16)
	}
	s.early = append(s.early, append([]byte(nil), b...))
	return true
}

// releaseEarly delivers the held DATA once traffic may flow; DATA arriving
// meanwhile joins the queue until it is empty.
func (s *session) releaseEarly() {
	for {
		s.mu.Lock()
		batch := s.early
		if len(batch) == 0 {
			s.early = nil
			s.mu.Unlock()
			return
		}
		s.early = s.early[:0:0]
		s.mu.Unlock()
		a := s.peer.Load()
		for _, b := range batch {
			if a == nil || !s.dataOK.Load() {
				s.unexpected(b)
				continue
			}
			s.deliverData(a, b)
		}
	}
}

func (s *session) deliverData(a *Association, b []byte) {
	var d dataFields
	if err := decodeData(b, &d); err != nil {
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, codeFor(err))
		return
	}
	if d.HasNA && s.e.cfg.HasNetworkAppearance && d.NA != s.e.cfg.NetworkAppearance {
		s.e.stats.Malformed.Add(1)
		s.sendErrFor(b, ErrInvalidNA)
		return
	}
	if d.HasRC && !s.acceptsRC(a, d.RC) {
		s.e.stats.Malformed.Add(1)
		s.sendErrRC(b, ErrInvalidRC, params.NewRoutingContext(d.RC))
		return
	}
	s.e.stats.DataIn.Add(1)
	msg := mtp.Message{Label: d.Label, Payload: append([]byte(nil), d.Payload...), Peer: a.cfg.Name}
	select {
	case s.e.ind <- msg:
	case <-s.done:
	case <-s.e.ctx.Done():
	}
}

// knowsRC reports whether rc is one of the peer's configured routing contexts.
func (a *Association) knowsRC(rc uint32) bool {
	return slices.Contains(a.cfg.RoutingContexts, rc)
}

// acceptsRC checks the routing context of received DATA. RFC 4666 §3.8.1: a
// message with an invalid (unconfigured) routing context gets ERR "Invalid
// Routing Context". With none configured (a single AS, RC optional in DATA,
// §3.3.1) DATA without RC is fine, and an RC is valid only if the peer named
// it for this association in its ASP Active Ack; any other is unconfigured,
// not unchecked.
func (s *session) acceptsRC(a *Association, rc uint32) bool {
	if len(a.cfg.RoutingContexts) > 0 {
		return a.knowsRC(rc)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.ackRCs, rc)
}

func (s *session) handleError(m *messages.Error) {
	code, ok := u32(m.ErrorCode)
	if !ok {
		s.e.stats.Malformed.Add(1)
		return
	}
	if code < maxErrorCode {
		s.e.stats.errRecv[code].Add(1)
	}
	s.e.log.Warn().Str("peer", s.name()).Uint32("code", code).Msg("m3ua: ERR received")
}

func (s *session) handleNotify(m *messages.Notify) {
	status, ok := u32(m.Status)
	if !ok {
		s.e.stats.Malformed.Add(1)
		s.sendErr(ErrMissingParam, nil)
		return
	}
	typ, info := status>>16, status&0xffff
	switch {
	case typ == statusOther && info == otherAltActive:
		// Override: another ASP took over; we are inactive now. A standby
		// stays so until the SG says the AS has no active ASP.
		s.mu.Lock()
		var ev *mtp.PeerState
		if s.active && s.local == StateActive {
			s.local = StateInactive
			ev = s.updateTrafficLocked("alternate ASP active")
		}
		if a := s.peer.Load(); a != nil && a.cfg.Standby {
			s.goal = StateInactive
		}
		s.mu.Unlock()
		s.emitState(ev)
	case typ == statusASChange && (info == asPending || info == asInactive):
		s.standbyTakeover(info)
	}
}

// standbyTakeover activates a standby ASP when the SG reports that its AS has
// no active ASP: AS-Pending (the last active ASP failed or went inactive, RFC
// 4666 §4.3.4.4, the SG holds traffic for T(r)) or AS-Inactive (nobody
// serves it, §4.3.2). An ASP that is not a standby, or not inactive and idle
// (a request under way, or already active), ignores it, as before.
func (s *session) standbyTakeover(info uint32) {
	a := s.peer.Load()
	s.mu.Lock()
	take := a != nil && a.cfg.Standby && s.active && !s.ended && s.local == StateInactive &&
		s.pend == pendNone && s.e.ctx.Err() == nil
	if take {
		s.goal = StateActive
	}
	s.mu.Unlock()
	if !take {
		return
	}
	why := map[uint32]string{asPending: "AS-Pending", asInactive: "AS-Inactive"}[info]
	s.e.stats.StandbyTakeovers.Add(1)
	s.e.log.Info().Str("peer", a.cfg.Name).Str("ntfy", why).Msg("m3ua: standby ASP takes over the AS")
	s.request(pendActive, s.aspActive())
}

// handleAck completes a pending request; acks nobody asked for are
// discarded and counted.
func (s *session) handleAck(b []byte, p pending) {
	s.mu.Lock()
	if !s.active || !s.ackedLocked(p) {
		retry := s.unsolicitedAckLocked(p)
		s.mu.Unlock()
		if retry == nil {
			s.e.stats.Unexpected.Add(1)
			return
		}
		s.e.stats.UnsolicitedAcks.Add(1)
		s.emitState(retry.ev)
		if retry.p != pendNone {
			s.request(retry.p, retry.msg)
		}
		return
	}
	var ev *mtp.PeerState
	next := pendNone
	switch p {
	case pendUp:
		s.local = StateInactive
		if s.goal == StateActive {
			next = pendActive
		}
	case pendActive:
		s.local = StateActive
		s.learnAckRCsLocked(b)
	case pendInactive:
		s.local = StateInactive
	case pendDown:
		s.local = StateDown
	}
	ev = s.updateTrafficLocked(map[pending]string{pendUp: "ASP Up Ack", pendActive: "ASP Active Ack",
		pendInactive: "ASP Inactive Ack", pendDown: "ASP Down Ack"}[p])
	s.mu.Unlock()
	s.emitState(ev)
	switch {
	case next == pendActive:
		s.request(pendActive, s.aspActive())
	case p == pendActive:
		s.releaseEarly()
		s.audit()
	}
}

// learnAckRCsLocked keeps the routing contexts an ASP Active Ack named, the ones
// the peer will put in DATA when we configured none.
func (s *session) learnAckRCsLocked(b []byte) {
	if m, err := messages.ParseAspActiveAck(b); err == nil && m.RoutingContext != nil {
		if rcs, ok := u32s(m.RoutingContext); ok && len(rcs) <= 64 {
			s.ackRCs = rcs
		}
	}
}

// comeback is what an unsolicited ack leads to: the state to report and the
// request that starts the way back.
type comeback struct {
	ev  *mtp.PeerState
	p   pending
	msg []byte
}

// unsolicitedAckLocked applies an ASP Down Ack or ASP Inactive Ack the ASP did
// not ask for: the SGP has taken it down (or inactive). RFC 4666 §4.3.4.2 and
// §4.3.4.4: the ASP considers itself ASP-DOWN (ASP-INACTIVE), so it stops
// sending DATA at once, and initiates the procedures to return to its previous
// state. nil: not an ack this rule covers (counted as unexpected).
func (s *session) unsolicitedAckLocked(p pending) *comeback {
	if !s.active || s.ended {
		return nil
	}
	closing := s.e.ctx.Err() != nil // a graceful stop is under way: no way back
	switch {
	case p == pendDown && s.local != StateDown:
		prev := s.local
		s.local = StateDown
		c := &comeback{ev: s.updateTrafficLocked("unsolicited ASP Down Ack")}
		if !closing {
			s.goal = prev
			c.p, c.msg = pendUp, s.aspUp()
		}
		return c
	case p == pendInactive && s.local == StateActive:
		s.local = StateInactive
		c := &comeback{ev: s.updateTrafficLocked("unsolicited ASP Inactive Ack")}
		if !closing {
			c.p, c.msg = pendActive, s.aspActive()
		}
		return c
	}
	return nil
}

// audit sends DAUD for the peer's destinations once active (RFC 4666
// §4.5.3), so their state is known before traffic starts.
func (s *session) audit() {
	a := s.peer.Load()
	if a == nil || len(a.cfg.DPCs) == 0 {
		return
	}
	pcs := make([]uint32, len(a.cfg.DPCs))
	for i, pc := range a.cfg.DPCs {
		pcs[i] = uint32(pc) & 0xffffff
	}
	_ = s.write(marshal(messages.NewDestinationStateAudit(s.naParam(), s.rcParam(),
		params.NewAffectedPointCode(pcs...), nil)), 0)
}
