// Package q703 is the signalling link state machine of Q.703 that the MTP2
// socket link (mtp/mtp2) and the M2PA link (mtp/m2pa, which RFC 4165 §4
// builds on the same machine) share: alignment, proving, aligned ready, in
// service and out of service (Q.703 §4-§7, Figures 8 and 9), timers T1-T4,
// T6 and T7 (Q.703 §12.3), sequence numbers, acknowledgement and the
// retransmission buffer (Q.703 §5), remote congestion (Q.703 §9) and
// retrieval for changeover (Q.704 §5.4).
//
// The machine is free of I/O. A Framing encodes what it sends (LSSU, FISU
// and MSU, or Link Status and User Data); the link decodes what it receives
// and feeds it in as Status and Data. Where MTP2 and M2PA really differ,
// a Profile field says so, with the clause that decides it.
package q703

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Status is a link status indication, whatever its encoding: an LSSU's
// status field (Q.703 §11.1.2) or an M2PA Link Status state (RFC 4165
// §2.3.2).
type Status int

// Link status indications.
const (
	OutOfService       Status = iota // SIOS; Out of Service
	Alignment                        // SIO; Alignment
	ProvingNormal                    // SIN; Proving Normal
	ProvingEmergency                 // SIE; Proving Emergency
	Ready                            // M2PA Ready; MTP2 has no LSSU for it (see Profile.ReadyIsFISU)
	ProcessorOutage                  // SIPO; Processor Outage
	ProcessorRecovered               // M2PA Processor Recovered
	Busy                             // SIB; Busy
	BusyEnded                        // M2PA Busy Ended (see Profile.AckEndsBusy)
)

// Header is the sequence part of what is sent: FSN and BSN, and for MTP2
// the indicator bits FIB and BIB (Q.703 §2.3.2). M2PA ignores the bits.
type Header struct {
	FSN, BSN uint32
	FIB, BIB bool
}

// Framing encodes and sends. It is called with the machine's lock held and
// must not block.
type Framing interface {
	// Status sends a link status (LSSU, or M2PA Link Status).
	Status(h Header, s Status)
	// Data sends an MSU (MTP2 MSU, or M2PA User Data with data); pri is the
	// ANSI priority 0..3.
	Data(h Header, pri uint8, msu []byte)
	// Ack sends an acknowledgement alone (FISU, or empty M2PA User Data).
	Ack(h Header)
}

// Timers of the machine (Q.703 §12.3; RFC 4165 §4.1.4 keeps them).
type Timers struct {
	T1  time.Duration // aligned ready: waiting for the peer to be ready
	T2  time.Duration // not aligned: waiting for the peer's alignment
	T3  time.Duration // aligned: waiting for the peer's proving
	T4N time.Duration // normal proving period
	T4E time.Duration // emergency proving period
	T6  time.Duration // remote congestion tolerated
	T7  time.Duration // excessive delay of acknowledgement
	// Repeat is how often the alignment status is sent again while aligning.
	Repeat time.Duration
	// AckDelay is how long a received MSU waits for an outgoing one to carry
	// its acknowledgement; AckEvery MSUs unacknowledged force one at once
	// (0: no such limit).
	AckDelay time.Duration
	AckEvery int
}

// Fill replaces the unset (zero or negative) timers of t by those of def.
func (t *Timers) Fill(def Timers) {
	for _, p := range []struct{ v, def *time.Duration }{{&t.T1, &def.T1}, {&t.T2, &def.T2}, {&t.T3, &def.T3},
		{&t.T4N, &def.T4N}, {&t.T4E, &def.T4E}, {&t.T6, &def.T6}, {&t.T7, &def.T7}, {&t.Repeat, &def.Repeat}} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	if t.AckDelay < 0 {
		t.AckDelay = 0
	}
	if t.AckEvery <= 0 {
		t.AckEvery = def.AckEvery
	}
}

// Profile is what makes the machine MTP2's or M2PA's.
type Profile struct {
	// SeqMask is the sequence number modulus minus one: 0x7F (Q.703
	// §2.3.1) or 0xFFFFFF (RFC 4165 §2.2). Numbers start at SeqMask.
	SeqMask uint32
	// Window is how many MSUs may be unacknowledged: 127 with 7-bit
	// numbers (Q.703 §5.2.1); beyond it MSUs wait in a queue of MaxQueued.
	// ErrFull is Send's error when there is no room.
	Window, MaxQueued int
	ErrFull           error
	ErrNotInService   error

	// BasicErrorCorrection: a gap in FSNs is answered with a negative
	// acknowledgement (BIB inverted) and a BIB unlike our FIB makes us
	// retransmit (Q.703 §5.2.2, §5.3); a BSN outside what was sent is
	// discarded (Q.703 §5.3.1). Without it (M2PA: SCTP delivers reliably
	// and in order, RFC 4165 §4.2) a gap or a bad BSN fails the link.
	BasicErrorCorrection bool
	// ReadyIsFISU: Q.703 has no "ready" LSSU: at the end of proving a FISU
	// says aligned ready, and a FISU or MSU received while proving means the
	// peer is (Q.703 §7, Figure 9). M2PA sends Ready (RFC 4165 §4.1.3).
	ReadyIsFISU bool
	// ProvingIsAlignment: SIN and SIE are alignment indications like SIO
	// (Q.703 §7.2-§7.3): answered with SIOS when stopped, a link failure in
	// aligned ready or in service, an SIE switches a normal proving period
	// to the emergency one and keeps emergency for the whole alignment.
	// M2PA's Proving statuses only start proving, and the peer's latest one
	// says whether it asks for emergency (RFC 4165 §4.1.2).
	ProvingIsAlignment bool
	// Intermittent: Q.703 §7 sends LSSUs and FISUs continuously; a link that
	// sends each once repeats SIN/SIE while proving and sends a FISU on
	// entering service, where a continuous link would anyway. M2PA stops
	// repeating when proving starts (RFC 4165 §4.1.2).
	Intermittent bool
	// AckEndsBusy: the peer's busy ends with the next positive
	// acknowledgement (Q.703 §9.3, no LSSU says it); M2PA sends Busy Ended
	// (RFC 4165 §4.1.5).
	AckEndsBusy bool
	// RetrieveUnackedWithoutBSNT: Retrieve without the peer's BSNT hands
	// back the whole unacknowledged buffer (M2PA writes every MSU to SCTP at
	// once, which may have delivered none: a duplicate is better than a
	// loss); otherwise only the MSUs never sent (Q.704 §5.4.2) and the rest
	// count as lost.
	RetrieveUnackedWithoutBSNT bool

	// Names for failure reasons: T2Wait and T3Wait are what T2 and T3
	// wait for; Received, when set, names a received status.
	T2Wait, T3Wait string
	Received       func(Status) string
}

// Counters are the link's counters the machine keeps; nil ones are not
// kept.
type Counters struct {
	SentMSU, ReceivedMSU, Retransmitted, NACKsSent *atomic.Uint64
	Discarded, BadBSN, Failures, Alignments        *atomic.Uint64
	Retrieved, Lost                                *atomic.Uint64
}

func add(c *atomic.Uint64, n int) {
	if c != nil && n > 0 {
		c.Add(uint64(n))
	}
}

// State is a link state (Q.703 Figures 8 and 9; RFC 4165 §4.1).
type State int

// Link states.
const (
	StOutOfService State = iota
	StNotAligned
	StAligned
	StProving
	StAlignedReady
	StInService
)

var stateNames = [...]string{"out of service", "not aligned", "aligned", "proving", "aligned ready", "in service"}

func (s State) String() string { return stateNames[s] }

// Timer slots.
const (
	tmT1 = iota
	tmT2
	tmT3
	tmT4
	tmT6
	tmT7
	tmRepeat
	tmAck
	nTimers
)

type armed struct {
	t  l2.Timer
	id uint64
}

type sent struct {
	fsn uint32
	pri uint8
	msu []byte
}

// Machine is one link's state machine. Indications to the user are queued
// under mu and delivered after it is released, one caller at a time (upMu),
// in order.
type Machine struct {
	upMu  sync.Mutex
	mu    sync.Mutex
	clock l2.Clock
	tm    Timers
	p     Profile
	f     Framing
	c     Counters

	user      l2.User
	ups       []func()
	state     State
	emergency bool // ours
	peerEmerg bool
	peerReady bool // the peer was ready while we still proved
	provingE  bool // the proving period running is the emergency one
	remotePO  bool
	busy      bool // the peer is busy
	started   bool // at least one Start: BSNT is meaningful
	lastSent  Status

	fsn, bsn, acked uint32 // last FSN sent; last FSN accepted; last FSN of ours acknowledged
	fib, bib        bool
	rtb             []sent   // sent, not acknowledged, in FSN order
	txq             [][]byte // waiting for the window
	ackOwed         int      // MSUs received and not yet acknowledged

	timers [nTimers]armed
	seq    uint64
	reason string // of the last failure
}

// New builds a machine; tm's unset timers must already be filled.
func New(clock l2.Clock, tm Timers, p Profile, f Framing, c Counters) *Machine {
	m := &Machine{clock: clock, tm: tm, p: p, f: f, c: c}
	m.reset()
	return m
}

// reset: sequence numbers and indicator bits as after power on (Q.703
// §5.2.1; RFC 4165 §4.1.2: 0xFFFFFF).
func (m *Machine) reset() {
	m.fsn, m.bsn, m.acked = m.p.SeqMask, m.p.SeqMask, m.p.SeqMask
	m.fib, m.bib = true, true
	m.ackOwed = 0
}

// --- plumbing ---

func (m *Machine) lock()   { m.upMu.Lock(); m.mu.Lock() }
func (m *Machine) unlock() { ups := m.ups; m.ups = nil; m.mu.Unlock(); runAll(ups); m.upMu.Unlock() }

func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}

func (m *Machine) up(f func(u l2.User)) {
	if u := m.user; u != nil {
		m.ups = append(m.ups, func() { f(u) })
	}
}

func (m *Machine) arm(k int, d time.Duration, f func()) {
	m.disarm(k)
	m.seq++
	id := m.seq
	m.timers[k] = armed{t: m.clock.AfterFunc(d, func() {
		m.lock()
		defer m.unlock()
		if m.timers[k].id != id || m.timers[k].t == nil {
			return // stopped or re-armed meanwhile
		}
		m.timers[k] = armed{}
		f()
	}), id: id}
}

func (m *Machine) disarm(k int) {
	if t := m.timers[k].t; t != nil {
		t.Stop()
	}
	m.timers[k] = armed{}
}

func (m *Machine) disarmAll() {
	for k := range m.timers {
		m.disarm(k)
	}
}

func (m *Machine) running(k int) bool { return m.timers[k].t != nil }

func (m *Machine) dist(a, b uint32) int { return int((b - a) & m.p.SeqMask) }

func (m *Machine) header() Header { return Header{FSN: m.fsn, BSN: m.bsn, FIB: m.fib, BIB: m.bib} }

func (m *Machine) sendStatus(s Status) {
	m.lastSent = s
	m.f.Status(m.header(), s)
}

func (m *Machine) sendAck() {
	m.disarm(tmAck)
	m.ackOwed = 0
	m.f.Ack(m.header())
}

func (m *Machine) provingStatus() Status {
	if m.emergency {
		return ProvingEmergency
	}
	return ProvingNormal
}

func (m *Machine) received(s Status) string {
	if m.p.Received == nil {
		return ""
	}
	return m.p.Received(s) + " received: "
}

// --- user actions ---

// Start begins alignment: sequence numbers restart and whatever the
// buffers still hold is dropped (Q.703 §7.2, RFC 4165 §4.1.2).
func (m *Machine) Start(u l2.User) {
	m.lock()
	defer m.unlock()
	m.user = u
	m.disarmAll()
	add(m.c.Lost, len(m.rtb)+len(m.txq))
	m.rtb, m.txq = nil, nil
	m.reset()
	m.peerReady, m.peerEmerg, m.busy, m.remotePO = false, false, false, false
	m.started = true
	m.state = StNotAligned
	m.sendStatus(Alignment)
	m.arm(tmT2, m.tm.T2, func() { m.fail("T2 expired: no " + m.p.T2Wait + " from the peer") })
	m.armRepeat()
}

func (m *Machine) armRepeat() {
	m.arm(tmRepeat, m.tm.Repeat, func() {
		switch {
		case m.state == StNotAligned, m.state == StAligned, m.state == StProving && m.p.Intermittent:
			m.sendStatus(m.lastSent)
			m.armRepeat()
		}
	})
}

// Stop takes the link out of service on the user's order: no indication.
func (m *Machine) Stop() {
	m.lock()
	defer m.unlock()
	if m.state != StOutOfService {
		m.sendStatus(OutOfService)
	}
	m.state = StOutOfService
	m.disarmAll()
}

// Emergency selects emergency proving for the next alignments.
func (m *Machine) Emergency(on bool) {
	m.lock()
	m.emergency = on
	m.unlock()
}

// Send transmits an MSU, or queues it while the window is closed (Q.703
// §5.2.1). The caller checks its length: it is never empty.
func (m *Machine) Send(pri uint8, msu []byte) error {
	m.mu.Lock() // no indications come of it: upMu is not needed
	defer m.mu.Unlock()
	if m.state != StInService {
		return m.p.ErrNotInService
	}
	c := append([]byte(nil), msu...)
	if len(m.rtb) >= m.p.Window || len(m.txq) > 0 {
		if len(m.txq) >= m.p.MaxQueued {
			return m.p.ErrFull
		}
		m.txq = append(m.txq, c)
		return nil
	}
	m.transmit(pri&3, c)
	return nil
}

// transmit sends an MSU: the FSN goes up by one, the BSN acknowledges what
// we received (Q.703 §5.2.1, RFC 4165 §4.2.1).
func (m *Machine) transmit(pri uint8, c []byte) {
	m.fsn = (m.fsn + 1) & m.p.SeqMask
	m.rtb = append(m.rtb, sent{fsn: m.fsn, pri: pri, msu: c})
	m.ackOwed = 0
	m.disarm(tmAck)
	if !m.running(tmT7) && !m.busy {
		m.armT7()
	}
	add(m.c.SentMSU, 1)
	m.f.Data(m.header(), pri, c)
}

func (m *Machine) armT7() {
	m.arm(tmT7, m.tm.T7, func() { m.fail("T7 expired: the peer does not acknowledge") })
}

// fail is link failure (Q.703 §7.2): out of service, the peer told, the
// user told; buffers stay for retrieval.
func (m *Machine) fail(reason string) {
	if m.state == StOutOfService {
		return
	}
	add(m.c.Failures, 1)
	m.sendStatus(OutOfService)
	m.goOut(reason)
}

func (m *Machine) goOut(reason string) {
	m.state = StOutOfService
	m.reason = reason
	m.disarmAll()
	m.up(func(u l2.User) { u.OutOfService(reason) })
}

// Lost is the end of the socket or association: a failure with nothing
// sent.
func (m *Machine) Lost(reason string) {
	m.lock()
	defer m.unlock()
	if m.state == StOutOfService {
		return
	}
	add(m.c.Failures, 1)
	m.goOut(reason)
}

// Connected is a new socket or association: if alignment is under way, the
// alignment status goes out on it at once instead of at the next repeat.
func (m *Machine) Connected() {
	m.lock()
	defer m.unlock()
	if m.state == StNotAligned {
		m.sendStatus(Alignment)
	}
}

// BSNT is the last FSN accepted (Q.704 §5.4.1).
func (m *Machine) BSNT() (uint32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bsn, m.started
}

// Retrieve hands back the MSUs the peer has not acknowledged beyond fsnc,
// then those never sent (Q.704 §5.4.2); without fsnc see
// Profile.RetrieveUnackedWithoutBSNT.
func (m *Machine) Retrieve(fsnc uint32, ok bool) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	rest := m.rtb
	switch {
	case ok:
		if k := m.dist(m.acked, fsnc); k <= len(rest) {
			rest = rest[k:]
		}
	case !m.p.RetrieveUnackedWithoutBSNT:
		add(m.c.Lost, len(rest))
		rest = nil
	}
	out := make([][]byte, 0, len(rest)+len(m.txq))
	for _, s := range rest {
		out = append(out, s.msu)
	}
	out = append(out, m.txq...)
	m.rtb, m.txq = nil, nil
	add(m.c.Retrieved, len(out))
	return out
}

// Snapshot is the machine's state, for status and tests.
type Snapshot struct {
	State           State
	FSN, BSN, Acked uint32
	Unacked, Queued int
	Reason          string // of the last failure
}

// Snapshot reads the state.
func (m *Machine) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Snapshot{State: m.state, FSN: m.fsn, BSN: m.bsn, Acked: m.acked,
		Unacked: len(m.rtb), Queued: len(m.txq), Reason: m.reason}
}

// --- received ---

// Status handles a link status from the peer.
func (m *Machine) Status(s Status) {
	m.lock()
	defer m.unlock()
	switch s {
	case Alignment:
		switch m.state {
		case StOutOfService:
			m.sendStatus(OutOfService) // not started: say so (Q.703 §7.2)
		case StNotAligned, StProving:
			m.aligned() // in proving: the peer restarted, prove again (Q.703 §7.3)
		case StAlignedReady, StInService:
			m.fail(m.received(s) + "the peer restarted alignment")
		}
	case ProvingNormal, ProvingEmergency:
		m.peerProving(s)
	case Ready:
		switch m.state {
		case StProving:
			m.peerReady = true
		case StAlignedReady:
			m.inService()
		}
	case ProcessorOutage, ProcessorRecovered:
		if on := s == ProcessorOutage; m.remotePO != on {
			m.remotePO = on
			m.up(func(u l2.User) { u.RemoteProcessorOutage(on) })
		}
	case Busy:
		// Q.703 §9.3: while the peer is busy T7 is suspended and T6 runs.
		if !m.busy && m.state == StInService {
			m.busy = true
			m.disarm(tmT7)
			m.arm(tmT6, m.tm.T6, func() { m.fail("T6 expired: the peer stayed busy") })
			m.up(func(u l2.User) { u.Congested(true) })
		}
	case BusyEnded:
		m.busyEnded()
	case OutOfService:
		switch m.state {
		case StOutOfService, StNotAligned:
			// The peer is not started yet, or not yet aligning.
		default:
			m.fail(m.received(s) + "the peer went out of service")
		}
	}
}

func (m *Machine) peerProving(s Status) {
	if !m.p.ProvingIsAlignment {
		m.peerEmerg = s == ProvingEmergency
	} else if s == ProvingEmergency {
		m.peerEmerg = true
	}
	switch m.state {
	case StOutOfService:
		if m.p.ProvingIsAlignment {
			m.sendStatus(OutOfService)
		}
	case StNotAligned:
		m.aligned()
		m.proving()
	case StAligned:
		m.proving()
	case StProving:
		if m.p.ProvingIsAlignment && s == ProvingEmergency && !m.provingE {
			m.proving() // switch to the emergency proving period
		}
	case StAlignedReady:
		// The peer may still be proving when our proving period ended
		// first: its SIN or SIE goes on until it sends a FISU. Figure
		// 8/Q.703 (aligned ready) fails the link on SIO and SIOS only.
	case StInService:
		// In service the peer's FISU or MSU came first: SIN or SIE now
		// means it aligns again (Figure 8/Q.703, in service).
		if m.p.ProvingIsAlignment {
			m.fail(m.received(s) + "the peer restarted alignment")
		}
	}
}

func (m *Machine) busyEnded() {
	if m.busy {
		m.busy = false
		m.disarm(tmT6)
		if len(m.rtb) > 0 {
			m.armT7()
		}
		m.up(func(u l2.User) { u.Congested(false) })
	}
}

// aligned: the peer's alignment status was seen; we prove (Q.703 Figure 9
// state "aligned", RFC 4165 §4.1.2).
func (m *Machine) aligned() {
	m.disarm(tmT2)
	m.disarm(tmT4)
	m.state = StAligned
	m.sendStatus(m.provingStatus())
	m.arm(tmT3, m.tm.T3, func() { m.fail("T3 expired: no " + m.p.T3Wait + " from the peer") })
	m.armRepeat()
}

// proving runs T4: emergency proving when either side asks for it
// (Q.703 §7.3).
func (m *Machine) proving() {
	m.disarm(tmT3)
	if !m.p.Intermittent {
		m.disarm(tmRepeat)
	}
	m.state = StProving
	d := m.tm.T4N
	m.provingE = m.emergency || m.peerEmerg
	if m.provingE {
		d = m.tm.T4E
	}
	m.arm(tmT4, d, func() {
		m.disarm(tmRepeat)
		if m.p.ReadyIsFISU {
			m.sendAck()
		} else {
			m.sendStatus(Ready)
		}
		if m.peerReady {
			m.inService()
			return
		}
		m.state = StAlignedReady
		m.arm(tmT1, m.tm.T1, func() { m.fail("T1 expired: the peer never became ready") })
	})
}

func (m *Machine) inService() {
	m.disarm(tmT1)
	m.disarm(tmRepeat)
	m.state = StInService
	add(m.c.Alignments, 1)
	m.busy = false
	if m.p.Intermittent {
		// A peer that went aligned ready after our FISU needs another to
		// come into service (Q.703 §7: a FISU or MSU in aligned ready
		// completes the alignment).
		m.sendAck()
	}
	m.up(func(u l2.User) { u.InService() })
}

// Data handles an acknowledgement (msu nil) or an MSU from the peer.
func (m *Machine) Data(h Header, msu []byte) {
	m.lock()
	defer m.unlock()
	switch m.state {
	case StProving:
		if m.p.ReadyIsFISU {
			m.peerReady = true // the peer finished proving first
			return
		}
		add(m.c.Discarded, 1)
		return
	case StAlignedReady:
		// The peer is in service: as good as its Ready (Q.703 §7; RFC 4165
		// §4.1.3, Ready and User Data travel on different streams).
		m.inService()
	case StInService:
	default:
		add(m.c.Discarded, 1)
		return
	}
	if !m.ack(h) || m.state != StInService || msu == nil {
		return
	}
	m.accept(h, msu)
}

// ack applies a received BSN (and BIB): our MSUs up to it leave the
// retransmission buffer (Q.703 §5.2.2, §5.3).
func (m *Machine) ack(h Header) bool {
	switch k := m.dist(m.acked, h.BSN); {
	case k > len(m.rtb) && m.p.BasicErrorCorrection:
		add(m.c.BadBSN, 1) // Q.703 §5.3.1: discarded
	case k > len(m.rtb):
		m.fail(fmt.Sprintf("BSN %d acknowledges beyond the last FSN sent (%d)", h.BSN, m.fsn))
		return false
	case k > 0:
		clear(m.rtb[:k])
		m.rtb = m.rtb[k:]
		m.acked = h.BSN
		m.disarm(tmT7)
		if m.p.AckEndsBusy && m.busy {
			m.busy = false
			m.disarm(tmT6)
			m.up(func(u l2.User) { u.Congested(false) })
		}
		if len(m.rtb) > 0 && !m.busy {
			m.armT7()
		}
	}
	if !m.p.BasicErrorCorrection {
		return true
	}
	if h.BIB != m.fib {
		// A negative acknowledgement: everything after the BSN again, with
		// FIB inverted (Q.703 §5.3.2).
		m.fib = !m.fib
		for _, s := range m.rtb {
			add(m.c.Retransmitted, 1)
			m.f.Data(Header{FSN: s.fsn, BSN: m.bsn, FIB: m.fib, BIB: m.bib}, s.pri, s.msu)
		}
		if len(m.rtb) == 0 {
			m.sendAck() // nothing to resend: show the new FIB
		}
	}
	// The window opened: queued MSUs go (Q.703 §5.2.1; they carry no
	// priority, which only M2PA has, and M2PA queues none).
	for len(m.txq) > 0 && len(m.rtb) < m.p.Window {
		c := m.txq[0]
		m.txq = m.txq[1:]
		m.transmit(0, c)
	}
	return true
}

// accept takes an MSU in sequence and schedules its acknowledgement.
func (m *Machine) accept(h Header, msu []byte) {
	if m.p.BasicErrorCorrection && h.FIB != m.bib {
		add(m.c.Discarded, 1) // waiting for the retransmission we asked for
		return
	}
	switch next := (m.bsn + 1) & m.p.SeqMask; h.FSN {
	case next:
	case m.bsn:
		add(m.c.Discarded, 1) // a repeat: already delivered
		return
	default:
		if m.p.BasicErrorCorrection {
			// A gap: negative acknowledgement (Q.703 §5.2.2 b).
			m.bib = !m.bib
			add(m.c.NACKsSent, 1)
			m.sendAck()
			return
		}
		m.fail(fmt.Sprintf("FSN %d received, %d expected", h.FSN, next))
		return
	}
	m.bsn = h.FSN
	add(m.c.ReceivedMSU, 1)
	m.up(func(u l2.User) { u.Received(msu) })
	m.ackOwed++
	switch {
	case m.tm.AckDelay == 0 || (m.tm.AckEvery > 0 && m.ackOwed >= m.tm.AckEvery):
		m.sendAck()
	case !m.running(tmAck):
		m.arm(tmAck, m.tm.AckDelay, func() {
			if m.state == StInService && m.ackOwed > 0 {
				m.sendAck()
			}
		})
	}
}
