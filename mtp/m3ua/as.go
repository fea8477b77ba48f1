package m3ua

import (
	"errors"
	"slices"
	"time"

	"github.com/isupgw/isupgw/mtp"
)

// The SG side of an application server with several ASPs (RFC 4666 §4.3.2):
// which NTFY an ASP of the AS gets when the AS changes state, and the
// recovery timer T(r) after its last active ASP is lost. Override mode's
// "Alternate ASP Active" is in takeover (endpoint.go).

// DefaultRecovery is T(r), the time an AS stays AS-PENDING after its last
// active ASP is lost before it is AS-INACTIVE; the RFC names no value, this
// is osmo-stp's default.
const DefaultRecovery = 2 * time.Second

// WithRecoveryTimer sets the SG's recovery timer T(r) (RFC 4666 §4.3.2).
func WithRecoveryTimer(d time.Duration) Option { return func(e *Endpoint) { e.recovery = d } }

// Bounds of the queue an SG keeps for an AS-PENDING AS during T(r): at 2 s
// of T(r) they hold a few thousand ISUP messages a second for one AS.
const (
	DefaultRecoveryQueue      = 8192
	DefaultRecoveryQueueBytes = 4 << 20
)

// WithRecoveryQueue bounds the DATA an SG queues for an AS-PENDING AS during
// T(r): at most msgs messages and bytes octets of payload; beyond either,
// messages are dropped and counted (Stats.RecoveryDropped). 0 turns the
// queue off.
func WithRecoveryQueue(msgs, bytes int) Option {
	return func(e *Endpoint) { e.queueMax, e.queueMaxBytes = msgs, bytes }
}

// ErrRecoveryQueueFull is Transfer's answer for a message for an AS-PENDING
// AS that its recovery queue has no room for.
var ErrRecoveryQueueFull = errors.New("m3ua: AS pending and its recovery queue full: message dropped")

// recoveryQueue holds the DATA for one AS-PENDING AS (RFC 4666 §4.3.4.4:
// "the SGP MUST buffer the messages for the AS until either another ASP
// becomes active or T(r) expires"), in order.
type recoveryQueue struct {
	a     *Association // the ASP whose loss made the AS pending
	until time.Time    // its T(r) deadline
	msgs  []*mtp.Message
	bytes int
	// flushing: an ASP became active and the queue is being delivered to it.
	flushing bool
}

// servesDPC says whether a's AS is a route for dpc.
func servesDPC(a *Association, dpc mtp.PointCode) bool {
	return slices.Contains(a.cfg.DPCs, dpc)
}

// holdForRecovery queues m if a recovery queue is for its DPC and, unless
// always, is being delivered. held says it took m (queued, or dropped with
// ErrRecoveryQueueFull).
func (e *Endpoint) holdForRecovery(m *mtp.Message, flushingOnly bool) (held bool, err error) {
	e.asMu.Lock()
	defer e.asMu.Unlock()
	for _, q := range e.queues {
		if !servesDPC(q.a, m.DPC) || flushingOnly && !q.flushing {
			continue
		}
		if len(q.msgs) >= e.queueMax || q.bytes+len(m.Payload) > e.queueMaxBytes {
			e.stats.RecoveryDropped.Add(1)
			return true, ErrRecoveryQueueFull
		}
		c := *m
		c.Payload = append([]byte(nil), m.Payload...) // the caller may reuse its buffer
		q.msgs = append(q.msgs, &c)
		q.bytes += len(c.Payload)
		e.stats.RecoveryQueued.Add(1)
		return true, nil
	}
	return false, nil
}

// queueForLocked returns the recovery queue of a's AS (asMu held).
func (e *Endpoint) queueForLocked(a *Association) (int, *recoveryQueue) {
	for i, q := range e.queues {
		if sameAS(a, q.a) {
			return i, q
		}
	}
	return -1, nil
}

func (e *Endpoint) dropQueueLocked(i int) {
	e.queues = slices.Delete(e.queues, i, i+1)
	e.queuing.Add(-1)
}

// deliverRecovery sends a's AS's queue, in order, to the ASP that became
// active (a): RFC 4666 §4.3.4.4, after its ASP Active Ack. Messages queued
// meanwhile go out in the same loop, and the queue ends when it is empty.
func (e *Endpoint) deliverRecovery(a *Association) {
	e.asMu.Lock()
	_, q := e.queueForLocked(a)
	if q == nil {
		e.asMu.Unlock()
		return
	}
	q.flushing = true
	for {
		batch := q.msgs
		q.msgs, q.bytes = nil, 0
		if len(batch) == 0 {
			if i, cur := e.queueForLocked(a); cur == q {
				e.dropQueueLocked(i)
			}
			e.asMu.Unlock()
			return
		}
		e.asMu.Unlock()
		for _, m := range batch {
			if a.Send(m) == nil {
				e.stats.RecoveryDelivered.Add(1)
			} else {
				e.stats.RecoveryDropped.Add(1)
			}
		}
		e.asMu.Lock()
	}
}

// sameAS says whether two configured ASPs serve one AS: they share a routing
// context, or neither has one and they share a destination.
func sameAS(a, b *Association) bool {
	if a == b {
		return true
	}
	ra, rb := a.cfg.RoutingContexts, b.cfg.RoutingContexts
	if len(ra) > 0 || len(rb) > 0 {
		for _, rc := range ra {
			if slices.Contains(rb, rc) {
				return true
			}
		}
		return false
	}
	for _, pc := range a.cfg.DPCs {
		if slices.Contains(b.cfg.DPCs, pc) {
			return true
		}
	}
	return false
}

// asSessions lists the live SG-side associations of ASPs in a's AS, except.
func (e *Endpoint) asSessions(a *Association, except *session) []*session {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*session
	for s := range e.sessions {
		if s == except || !s.passive {
			continue
		}
		if b := s.peer.Load(); b != nil && sameAS(a, b) {
			out = append(out, s)
		}
	}
	return out
}

// remoteState is the peer's ASP state as the SG side sees it (down once ended).
func (s *session) remoteState() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return StateDown
	}
	return s.remote
}

// asInfo is the NTFY status information for a's AS as seen without except:
// AS-Active while another ASP serves it, AS-Pending during T(r), else
// AS-Inactive (the ASP asking is up, so the AS is not down).
func (e *Endpoint) asInfo(a *Association, except *session) uint16 {
	for _, s := range e.asSessions(a, except) {
		if s.remoteState() == StateActive {
			return asActive
		}
	}
	now := e.clock.Now()
	e.asMu.Lock()
	defer e.asMu.Unlock()
	for b, until := range e.recover {
		if sameAS(a, b) && now.Before(until) {
			return asPending
		}
	}
	return asInactive
}

// notifyInactive sends NTFY AS-state info to every ASP-INACTIVE ASP of a's AS
// but except; it returns how many were told.
func (e *Endpoint) notifyInactive(a *Association, except *session, info uint16) int {
	n := 0
	for _, s := range e.asSessions(a, except) {
		if s.remoteState() == StateInactive && s.write(s.notify(statusASChange, info, s.aspIDParam(), s.rcParam()), 0) == nil {
			n++
		}
	}
	return n
}

// asLost runs when the ASP of s stopped being active (ASP Inactive, ASP Down,
// association lost). RFC 4666 §4.3.4.4: if no other ASP of the AS is active,
// the SGP sends NTFY AS-Pending to the ASP-INACTIVE ones, and T(r) starts
// (§4.3.2); when it expires with still none active, the AS is AS-INACTIVE
// and they are told so. A standby ASP activates on either (§4.3.4.3).
func (e *Endpoint) asLost(s *session) {
	a := s.peer.Load()
	if a == nil || e.ctx.Err() != nil {
		return
	}
	e.asOrder.Lock()
	defer e.asOrder.Unlock()
	for _, o := range e.asSessions(a, s) {
		if o.remoteState() == StateActive {
			return // another ASP serves the AS (override demotion, loadshare)
		}
	}
	until := e.clock.Now().Add(e.recovery)
	e.asMu.Lock()
	e.recover[a] = until
	if e.queueMax > 0 && e.queueMaxBytes > 0 {
		if _, q := e.queueForLocked(a); q != nil {
			q.until = until // a later loss restarted T(r)
		} else {
			e.queues = append(e.queues, &recoveryQueue{a: a, until: until})
			e.queuing.Add(1)
		}
	}
	e.asMu.Unlock()
	// T(r) runs from the loss, before anyone is told: a peer that reacts to
	// the AS-Pending (or a test's fake clock advanced on seeing it) must
	// find the timer already running.
	e.clock.AfterFunc(e.recovery, func() { e.recoveryExpired(a, until) })
	n := e.notifyInactive(a, s, asPending)
	e.stats.ASPendingSent.Add(uint64(n))
	e.log.Info().Str("peer", a.cfg.Name).Int("told", n).Msg("m3ua: last active ASP of the AS lost: AS-Pending")
}

// recoveryExpired ends T(r) started at the loss of a (deadline until).
func (e *Endpoint) recoveryExpired(a *Association, until time.Time) {
	e.asMu.Lock()
	if e.recover[a] != until {
		e.asMu.Unlock()
		return // the AS recovered, or a later loss restarted T(r)
	}
	delete(e.recover, a)
	// RFC 4666 §4.3.4.4: at T(r) expiry with no ASP active, the queued
	// messages are discarded.
	if i, q := e.queueForLocked(a); q != nil && q.until == until && !q.flushing {
		e.stats.RecoveryDiscarded.Add(uint64(len(q.msgs)))
		e.dropQueueLocked(i)
		e.log.Info().Str("peer", a.cfg.Name).Int("discarded", len(q.msgs)).Msg("m3ua: T(r) expired with no ASP active: queued messages discarded")
	}
	e.asMu.Unlock()
	if e.ctx.Err() != nil {
		return
	}
	e.asOrder.Lock()
	defer e.asOrder.Unlock()
	if e.asInfo(a, nil) == asInactive {
		e.notifyInactive(a, nil, asInactive)
	}
}

// asActivated runs when the ASP of s went active; wasActive is whether the AS
// already was. An AS that becomes active ends T(r) and its other ASPs are told
// (NTFY AS-Active, §4.3.4.3), so a standby knows it must stay inactive.
func (e *Endpoint) asActivated(s *session, wasActive bool) {
	a := s.peer.Load()
	if a == nil {
		return
	}
	e.asMu.Lock()
	for b := range e.recover {
		if sameAS(a, b) {
			delete(e.recover, b)
		}
	}
	e.asMu.Unlock()
	e.deliverRecovery(a)
	if !wasActive {
		e.notifyInactive(a, s, asActive)
	}
}
