package mtp2

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Timers (Q.703 §12.3). The defaults are libss7's ITU values, which sit in
// Q.703's ranges for 64 kbit/s links.
type Timers struct {
	T1  time.Duration // aligned/ready (Q.703 T1: 40-50 s)
	T2  time.Duration // not aligned (Q.703 T2: 5-50 s)
	T3  time.Duration // aligned (Q.703 T3: 1-2 s)
	T4N time.Duration // normal proving period (Q.703 Pn: 2^16 octets, ~8.2 s at 64 kbit/s)
	T4E time.Duration // emergency proving period (Q.703 Pe: 2^12 octets, ~0.5 s)
	T6  time.Duration // remote congestion (Q.703 T6: 3-6 s)
	T7  time.Duration // excessive delay of acknowledgement (Q.703 T7: 0.5-2 s)
	// Repeat: the LSSU is sent again this often while aligning (this link
	// sends nothing continuously).
	Repeat time.Duration
	// AckDelay: how long a received MSU waits for an outgoing one to carry
	// its BSN before a FISU does.
	AckDelay time.Duration
}

// DefaultTimers returns the defaults.
func DefaultTimers() Timers {
	return Timers{T1: 45 * time.Second, T2: 50 * time.Second, T3: 1500 * time.Millisecond,
		T4N: 8500 * time.Millisecond, T4E: 500 * time.Millisecond, T6: 5 * time.Second,
		T7: 1250 * time.Millisecond, Repeat: time.Second, AckDelay: 5 * time.Millisecond}
}

func (t *Timers) fill() {
	d := DefaultTimers()
	for _, p := range []struct{ v, def *time.Duration }{{&t.T1, &d.T1}, {&t.T2, &d.T2}, {&t.T3, &d.T3},
		{&t.T4N, &d.T4N}, {&t.T4E, &d.T4E}, {&t.T6, &d.T6}, {&t.T7, &d.T7}, {&t.Repeat, &d.Repeat}} {
		if *p.v <= 0 {
			*p.v = *p.def
		}
	}
	if t.AckDelay < 0 {
		t.AckDelay = 0
	}
}

// Link states (Q.703 Figures 8 and 9).
type linkState int

const (
	stOutOfService linkState = iota
	stNotAligned
	stAligned
	stProving
	stAlignedReady
	stInService
)

var linkStateNames = [...]string{"out of service", "not aligned", "aligned", "proving", "aligned ready", "in service"}

func (s linkState) String() string { return linkStateNames[s] }

// Errors from Send.
var (
	ErrNotInService = errors.New("mtp2: link not in service")
	ErrTooBig       = fmt.Errorf("mtp2: MSU longer than %d octets", MaxSIF)
	ErrQueueFull    = errors.New("mtp2: transmission queue full")
)

// MaxQueued bounds the MSUs waiting for the 127-MSU window to open.
const MaxQueued = 4096

// window is how many MSUs may be unacknowledged (7-bit FSN).
const window = 127

// Stats are the link's counters.
type Stats struct {
	SentMSU, ReceivedMSU atomic.Uint64
	Retransmitted        atomic.Uint64
	NACKsSent            atomic.Uint64
	Malformed            atomic.Uint64
	Discarded            atomic.Uint64 // duplicates, MSUs while waiting for a retransmission, out-of-state SUs
	BadBSN               atomic.Uint64
	Failures             atomic.Uint64
	Alignments           atomic.Uint64
	Retrieved, Lost      atomic.Uint64
}

type sent struct {
	fsn uint8
	msu []byte
}

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

// machine is the level 2 state machine, free of I/O; see the m2pa package
// for the same pattern: out runs under mu and must not block; indications
// are delivered after mu is released, in order, under upMu.
type machine struct {
	upMu  sync.Mutex
	mu    sync.Mutex
	clock l2.Clock
	tm    Timers
	out   func(b []byte)
	stats *Stats

	user      l2.User
	ups       []func()
	state     linkState
	emergency bool
	peerEmerg bool
	peerReady bool
	provingE  bool // the proving period running is the emergency one
	remotePO  bool
	busy      bool
	started   bool
	lastLSSU  Status

	fsn, bsn, acked uint8 // last FSN sent; last FSN accepted; last FSN of ours acknowledged
	fib, bib        bool
	rtb             []sent
	txq             [][]byte // waiting for the window
	ackOwed         bool

	timers [nTimers]armed
	seq    uint64
	reason string
}

func newMachine(clock l2.Clock, tm Timers, stats *Stats, out func([]byte)) *machine {
	tm.fill()
	m := &machine{clock: clock, tm: tm, out: out, stats: stats}
	m.reset()
	return m
}

// reset: sequence numbers and indicator bits as after power on (Q.703
// §5.2.1; libss7 resets the same way).
func (m *machine) reset() {
	m.fsn, m.bsn, m.acked = SeqInitial, SeqInitial, SeqInitial
	m.fib, m.bib = true, true
	m.ackOwed = false
}

func (m *machine) lock()   { m.upMu.Lock(); m.mu.Lock() }
func (m *machine) unlock() { ups := m.ups; m.ups = nil; m.mu.Unlock(); runAll(ups); m.upMu.Unlock() }

func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}

func (m *machine) up(f func(u l2.User)) {
	if u := m.user; u != nil {
		m.ups = append(m.ups, func() { f(u) })
	}
}

func (m *machine) arm(k int, d time.Duration, f func()) {
	m.disarm(k)
	m.seq++
	id := m.seq
	m.timers[k] = armed{t: m.clock.AfterFunc(d, func() {
		m.lock()
		defer m.unlock()
		if m.timers[k].id != id || m.timers[k].t == nil {
			return
		}
		m.timers[k] = armed{}
		f()
	}), id: id}
}

func (m *machine) disarm(k int) {
	if t := m.timers[k].t; t != nil {
		t.Stop()
	}
	m.timers[k] = armed{}
}

func (m *machine) disarmAll() {
	for k := range m.timers {
		m.disarm(k)
	}
}

func (m *machine) running(k int) bool { return m.timers[k].t != nil }

func dist(a, b uint8) int { return int((b - a) & SeqMask) }

func (m *machine) header() SU { return SU{BSN: m.bsn, BIB: m.bib, FSN: m.fsn, FIB: m.fib} }

func (m *machine) sendLSSU(s Status) {
	su := m.header()
	su.Kind, su.Status = LSSU, s
	m.lastLSSU = s
	m.out(su.Append(make([]byte, 0, LSSULen)))
}

func (m *machine) sendFISU() {
	m.disarm(tmAck)
	m.ackOwed = false
	su := m.header()
	su.Kind = FISU
	m.out(su.Append(make([]byte, 0, FISULen)))
}

func (m *machine) aligning() Status {
	if m.emergency {
		return SIE
	}
	return SIN
}

// --- user actions ---

func (m *machine) start(u l2.User) {
	m.lock()
	defer m.unlock()
	m.user = u
	m.disarmAll()
	if n := len(m.rtb) + len(m.txq); n > 0 {
		m.stats.Lost.Add(uint64(n))
	}
	m.rtb, m.txq = nil, nil
	m.reset()
	m.peerReady, m.peerEmerg, m.busy, m.remotePO = false, false, false, false
	m.started = true
	m.state = stNotAligned
	m.sendLSSU(SIO)
	m.arm(tmT2, m.tm.T2, func() { m.fail("T2 expired: no SIO, SIN or SIE from the peer") })
	m.armRepeat()
}

func (m *machine) armRepeat() {
	m.arm(tmRepeat, m.tm.Repeat, func() {
		switch m.state {
		case stNotAligned, stAligned, stProving:
			m.sendLSSU(m.lastLSSU)
			m.armRepeat()
		}
	})
}

func (m *machine) stop() {
	m.lock()
	defer m.unlock()
	if m.state != stOutOfService {
		m.sendLSSU(SIOS)
	}
	m.state = stOutOfService
	m.disarmAll()
}

func (m *machine) setEmergency(on bool) {
	m.lock()
	m.emergency = on
	m.unlock()
}

// send queues an MSU: it goes out at once while fewer than 127 are
// unacknowledged (Q.703 §5.2.1), else when acknowledgements open the window.
func (m *machine) send(msu []byte) error {
	if len(msu) > MaxSIF {
		return ErrTooBig
	}
	if len(msu) < 3 {
		return fmt.Errorf("%w: MSU of %d octets", ErrMalformed, len(msu))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != stInService {
		return ErrNotInService
	}
	c := append([]byte(nil), msu...)
	if len(m.rtb) >= window || len(m.txq) > 0 {
		if len(m.txq) >= MaxQueued {
			return ErrQueueFull
		}
		m.txq = append(m.txq, c)
		return nil
	}
	m.transmit(c)
	return nil
}

func (m *machine) transmit(c []byte) {
	m.fsn = (m.fsn + 1) & SeqMask
	m.rtb = append(m.rtb, sent{fsn: m.fsn, msu: c})
	su := m.header()
	su.Kind, su.Data = MSU, c
	m.ackOwed = false
	m.disarm(tmAck)
	if !m.running(tmT7) && !m.busy {
		m.arm(tmT7, m.tm.T7, func() { m.fail("T7 expired: the peer does not acknowledge") })
	}
	m.stats.SentMSU.Add(1)
	m.out(su.Append(make([]byte, 0, HeaderLen+len(c)+FCSLen)))
}

func (m *machine) fail(reason string) {
	if m.state == stOutOfService {
		return
	}
	m.stats.Failures.Add(1)
	m.sendLSSU(SIOS)
	m.state = stOutOfService
	m.reason = reason
	m.disarmAll()
	m.up(func(u l2.User) { u.OutOfService(reason) })
}

// lost: the socket closed.
func (m *machine) lost(reason string) {
	m.lock()
	defer m.unlock()
	if m.state == stOutOfService {
		return
	}
	m.stats.Failures.Add(1)
	m.state = stOutOfService
	m.reason = reason
	m.disarmAll()
	m.up(func(u l2.User) { u.OutOfService(reason) })
}

func (m *machine) bsnt() (uint32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint32(m.bsn), m.started
}

// retrieve (Q.704 §5.4.2 through Q.703 §1.x "retrieval"): the MSUs beyond
// fsnc not yet acknowledged, then those never sent; without fsnc only the
// never sent.
func (m *machine) retrieve(fsnc uint32, ok bool) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]byte
	if ok {
		rest := m.rtb
		if k := dist(m.acked, uint8(fsnc&SeqMask)); k <= len(rest) {
			rest = rest[k:]
		}
		for _, s := range rest {
			out = append(out, s.msu)
		}
	} else if n := len(m.rtb); n > 0 {
		m.stats.Lost.Add(uint64(n))
	}
	out = append(out, m.txq...)
	m.rtb, m.txq = nil, nil
	m.stats.Retrieved.Add(uint64(len(out)))
	return out
}

// --- received signal units ---

func (m *machine) receive(b []byte) {
	su, err := Decode(b)
	if err != nil {
		m.stats.Malformed.Add(1)
		return
	}
	m.lock()
	defer m.unlock()
	if su.Kind == LSSU {
		m.lssu(su.Status)
		return
	}
	switch m.state {
	case stProving:
		m.peerReady = true // the peer finished proving first
		return
	case stAlignedReady:
		m.inService()
	case stInService:
	default:
		m.stats.Discarded.Add(1)
		return
	}
	m.ack(su)
	if m.state != stInService || su.Kind != MSU {
		return
	}
	m.msu(su)
}

func (m *machine) lssu(s Status) {
	switch s {
	case SIO, SIN, SIE:
		if s == SIE {
			m.peerEmerg = true
		}
		switch m.state {
		case stOutOfService:
			m.sendLSSU(SIOS)
		case stNotAligned:
			m.aligned()
			if s != SIO {
				m.proving()
			}
		case stAligned:
			if s != SIO {
				m.proving()
			}
		case stProving:
			if s == SIO {
				m.aligned() // Q.703 §7.3: proving starts again
			} else if s == SIE && !m.provingE {
				m.proving() // switch to the emergency proving period
			}
		case stAlignedReady, stInService:
			m.fail(fmt.Sprintf("%v received: the peer restarted alignment", s))
		}
	case SIOS:
		switch m.state {
		case stOutOfService, stNotAligned:
		default:
			m.fail("SIOS received: the peer went out of service")
		}
	case SIPO:
		if !m.remotePO {
			m.remotePO = true
			m.up(func(u l2.User) { u.RemoteProcessorOutage(true) })
		}
	case SIB:
		// Q.703 §9.3: while the peer is busy T7 is suspended and T6 runs.
		if !m.busy && m.state == stInService {
			m.busy = true
			m.disarm(tmT7)
			m.arm(tmT6, m.tm.T6, func() { m.fail("T6 expired: the peer stayed busy") })
			m.up(func(u l2.User) { u.Congested(true) })
		}
	}
}

func (m *machine) aligned() {
	m.disarm(tmT2)
	m.disarm(tmT4)
	m.state = stAligned
	m.sendLSSU(m.aligning())
	m.arm(tmT3, m.tm.T3, func() { m.fail("T3 expired: no SIN or SIE from the peer") })
	m.armRepeat()
}

func (m *machine) proving() {
	m.disarm(tmT3)
	m.state = stProving
	d := m.tm.T4N
	m.provingE = m.emergency || m.peerEmerg
	if m.provingE {
		d = m.tm.T4E
	}
	m.arm(tmT4, d, func() {
		m.disarm(tmRepeat)
		m.sendFISU()
		if m.peerReady {
			m.inService()
			return
		}
		m.state = stAlignedReady
		m.arm(tmT1, m.tm.T1, func() { m.fail("T1 expired: the peer never became ready") })
	})
}

func (m *machine) inService() {
	m.disarm(tmT1)
	m.disarm(tmRepeat)
	m.state = stInService
	m.stats.Alignments.Add(1)
	m.busy = false
	// Nothing is sent continuously here, so a peer that went aligned ready
	// after our FISU needs another to come into service (Q.703 §7: a FISU
	// or MSU in aligned ready completes the alignment).
	m.sendFISU()
	m.up(func(u l2.User) { u.InService() })
}

// ack applies BSN and BIB (Q.703 §5.2.2, §5.3): a BSN acknowledges up to
// itself; a BIB unlike our FIB asks for retransmission of everything after
// the BSN, which we do with FIB inverted.
func (m *machine) ack(su SU) {
	k := dist(m.acked, su.BSN)
	if k > len(m.rtb) {
		m.stats.BadBSN.Add(1) // Q.703 §5.3.1: discarded
		return
	}
	if k > 0 {
		clear(m.rtb[:k])
		m.rtb = m.rtb[k:]
		m.acked = su.BSN
		m.disarm(tmT7)
		if m.busy {
			m.busy = false
			m.disarm(tmT6)
			m.up(func(u l2.User) { u.Congested(false) })
		}
		if len(m.rtb) > 0 {
			m.arm(tmT7, m.tm.T7, func() { m.fail("T7 expired: the peer does not acknowledge") })
		}
	}
	if su.BIB != m.fib {
		m.fib = !m.fib
		for _, s := range m.rtb {
			h := SU{BSN: m.bsn, BIB: m.bib, FSN: s.fsn, FIB: m.fib, Kind: MSU, Data: s.msu}
			m.stats.Retransmitted.Add(1)
			m.out(h.Append(make([]byte, 0, HeaderLen+len(s.msu)+FCSLen)))
		}
		if len(m.rtb) == 0 {
			m.sendFISU() // nothing to resend: show the new FIB
		}
	}
	for len(m.txq) > 0 && len(m.rtb) < window {
		c := m.txq[0]
		m.txq = m.txq[1:]
		m.transmit(c)
	}
}

func (m *machine) msu(su SU) {
	if su.FIB != m.bib {
		m.stats.Discarded.Add(1) // waiting for the retransmission we asked for
		return
	}
	switch su.FSN {
	case m.bsn:
		m.stats.Discarded.Add(1) // a repeat
		return
	case (m.bsn + 1) & SeqMask:
	default:
		// A gap: negative acknowledgement (Q.703 §5.2.2 b).
		m.bib = !m.bib
		m.stats.NACKsSent.Add(1)
		m.sendFISU()
		return
	}
	m.bsn = su.FSN
	m.stats.ReceivedMSU.Add(1)
	data := su.Data
	m.up(func(u l2.User) { u.Received(data) })
	if m.tm.AckDelay == 0 {
		m.sendFISU()
		return
	}
	if !m.ackOwed {
		m.ackOwed = true
		m.arm(tmAck, m.tm.AckDelay, func() {
			if m.ackOwed && m.state == stInService {
				m.sendFISU()
			}
		})
	}
}

func (m *machine) snapshot() (st linkState, fsn, bsn, acked uint8, unacked, queued int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state, m.fsn, m.bsn, m.acked, len(m.rtb), len(m.txq)
}

// socketUp: a new socket; if alignment is under way, SIO goes out at once.
func (m *machine) socketUp() {
	m.lock()
	defer m.unlock()
	if m.state == stNotAligned {
		m.sendLSSU(SIO)
	}
}
