package m2pa

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Timers of the link state machine. RFC 4165 §4.1.4 keeps the Q.703 timers
// T1 to T4, T6 and T7 with the meanings of Q.703 §12.3; the defaults here
// are Q.703's for 64 kbit/s links where the RFC gives none of its own.
type Timers struct {
	T1  time.Duration // aligned/ready: our Ready sent, waiting for the peer's (Q.703 T1, 40-50 s)
	T2  time.Duration // not aligned: Alignment sent, waiting for the peer's (Q.703 T2, 5-50 s)
	T3  time.Duration // aligned: Proving sent, waiting for the peer's (Q.703 T3, 1-2 s)
	T4N time.Duration // normal proving period (Q.703 Pn 8.2 s; RFC 4165 §4.1.4 allows shorter)
	T4E time.Duration // emergency proving period (Q.703 Pe 0.5 s)
	T6  time.Duration // remote congestion (Busy) tolerated (Q.703 T6, 3-6 s)
	T7  time.Duration // excessive delay of acknowledgement (Q.703 T7, 0.5-2 s)
	// Repeat is how often Alignment is sent again while not aligned
	// (RFC 4165 §4.1.2: it MAY be sent again until the peer answers).
	Repeat time.Duration
	// AckDelay is how long a received MSU may wait for an outgoing one to
	// carry its acknowledgement before an empty User Data message does it
	// (RFC 4165 §4.2.2); AckEvery MSUs unacknowledged force one at once.
	AckDelay time.Duration
	AckEvery int
}

// DefaultTimers returns the defaults.
func DefaultTimers() Timers {
	return Timers{T1: 45 * time.Second, T2: 20 * time.Second, T3: 2 * time.Second,
		T4N: 8200 * time.Millisecond, T4E: 500 * time.Millisecond, T6: 5 * time.Second, T7: time.Second,
		Repeat: time.Second, AckDelay: 10 * time.Millisecond, AckEvery: 16}
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
	if t.AckEvery <= 0 {
		t.AckEvery = d.AckEvery
	}
}

// Link states (RFC 4165 §4.1, after Q.703 Figure 8 and 9).
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
	ErrNotInService = errors.New("m2pa: link not in service")
	ErrBufferFull   = errors.New("m2pa: retransmission buffer full (peer not acknowledging)")
	ErrTooBig       = fmt.Errorf("m2pa: MSU longer than %d octets", MaxMessage-HeaderLen-1)
)

// MaxUnacked bounds the retransmission buffer.
const MaxUnacked = 1 << 14

// Stats are a link's counters.
type Stats struct {
	SentMSU, ReceivedMSU atomic.Uint64
	SentAcks             atomic.Uint64 // empty User Data messages
	Malformed            atomic.Uint64 // undecodable messages, discarded
	Discarded            atomic.Uint64 // decodable but unexpected (User Data before in service, repeated FSN)
	Failures             atomic.Uint64
	Alignments           atomic.Uint64 // times the link came into service
	Retrieved            atomic.Uint64 // MSUs handed back by Retrieve
	Lost                 atomic.Uint64 // MSUs dropped by Start with buffers not retrieved
}

type sent struct {
	fsn uint32
	pri uint8
	msu []byte
}

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

// machine is the link state machine, free of I/O: it is fed decoded
// messages and timer expiries, and sends through out (called with mu held;
// it must not block). Indications to the user are queued under mu and
// delivered after it is released, one caller at a time (upMu), in order.
type machine struct {
	upMu  sync.Mutex
	mu    sync.Mutex
	clock l2.Clock
	tm    Timers
	out   func(b []byte, linkStatus bool)
	stats *Stats

	user      l2.User
	ups       []func()
	state     linkState
	emergency bool // ours
	peerEmerg bool
	peerReady bool // Ready received while still proving
	localPO   bool
	remotePO  bool
	busy      bool // peer sent Busy
	started   bool // at least one Start: BSNT is meaningful

	fsn       uint32 // last FSN sent with data
	bsn       uint32 // last FSN received with data (our BSN)
	acked     uint32 // last FSN of ours the peer acknowledged
	rtb       []sent // sent, not acknowledged, in FSN order
	ackOwed   int    // MSUs received and not yet acknowledged
	lastState State  // the last Link Status sent, for Repeat

	timers [nTimers]armed
	seq    uint64
	reason string // of the last failure
}

func newMachine(clock l2.Clock, tm Timers, stats *Stats, out func(b []byte, linkStatus bool)) *machine {
	tm.fill()
	return &machine{clock: clock, tm: tm, out: out, stats: stats,
		fsn: SeqInitial, bsn: SeqInitial, acked: SeqInitial}
}

// --- plumbing ---

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
			return // stopped or re-armed meanwhile
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

func (m *machine) sendStatus(s State) {
	msg := Message{Type: TypeLinkStatus, BSN: m.bsn, FSN: m.fsn, State: s}
	m.lastState = s
	m.out(msg.Append(make([]byte, 0, HeaderLen+4)), true)
}

func (m *machine) sendAck() {
	m.disarm(tmAck)
	m.ackOwed = 0
	msg := Message{Type: TypeUserData, BSN: m.bsn, FSN: m.fsn}
	m.stats.SentAcks.Add(1)
	m.out(msg.Append(make([]byte, 0, HeaderLen)), false)
}

func (m *machine) proving() State {
	if m.emergency {
		return StateProvingEmergency
	}
	return StateProvingNormal
}

// --- user actions ---

// start begins alignment (RFC 4165 §4.1.2): sequence numbers restart at
// 0xFFFFFF and whatever the buffers still hold is dropped.
func (m *machine) start(u l2.User) {
	m.lock()
	defer m.unlock()
	m.user = u
	m.disarmAll()
	if n := len(m.rtb); n > 0 {
		m.stats.Lost.Add(uint64(n))
	}
	m.rtb = nil
	m.fsn, m.bsn, m.acked = SeqInitial, SeqInitial, SeqInitial
	m.ackOwed, m.peerReady, m.peerEmerg, m.busy, m.remotePO = 0, false, false, false, false
	m.started = true
	m.state = stNotAligned
	m.sendStatus(StateAlignment)
	m.arm(tmT2, m.tm.T2, func() { m.fail("T2 expired: no Alignment from the peer") })
	m.armRepeat()
}

func (m *machine) armRepeat() {
	m.arm(tmRepeat, m.tm.Repeat, func() {
		switch m.state {
		case stNotAligned, stAligned:
			m.sendStatus(m.lastState)
			m.armRepeat()
		}
	})
}

// stop takes the link out of service on the user's order: no indication.
func (m *machine) stop() {
	m.lock()
	defer m.unlock()
	if m.state != stOutOfService {
		m.sendStatus(StateOutOfService)
	}
	m.state = stOutOfService
	m.disarmAll()
}

func (m *machine) setEmergency(on bool) {
	m.lock()
	m.emergency = on
	m.unlock()
}

// send transmits an MSU (RFC 4165 §4.2.1): the FSN goes up by one, the BSN
// acknowledges what we received.
func (m *machine) send(pri uint8, msu []byte) error {
	if len(msu) > MaxMessage-HeaderLen-1 {
		return ErrTooBig
	}
	if len(msu) == 0 {
		return fmt.Errorf("%w: empty MSU", ErrMalformed)
	}
	m.mu.Lock() // no indications come of it: upMu is not needed
	defer m.mu.Unlock()
	if m.state != stInService || m.localPO {
		return ErrNotInService
	}
	if len(m.rtb) >= MaxUnacked {
		return ErrBufferFull
	}
	m.fsn = seqAdd(m.fsn, 1)
	c := append([]byte(nil), msu...)
	m.rtb = append(m.rtb, sent{fsn: m.fsn, pri: pri & 3, msu: c})
	msg := Message{Type: TypeUserData, BSN: m.bsn, FSN: m.fsn, Priority: pri & 3, Data: c}
	m.ackOwed = 0
	m.disarm(tmAck)
	if !m.running(tmT7) && !m.busy {
		m.arm(tmT7, m.tm.T7, func() { m.fail("T7 expired: the peer does not acknowledge") })
	}
	m.stats.SentMSU.Add(1)
	m.out(msg.Append(make([]byte, 0, HeaderLen+1+len(c))), false)
	return nil
}

// fail is link failure (Q.703 §7.2 via RFC 4165 §4.1): out of service, the
// peer told, the user told; buffers stay for retrieval.
func (m *machine) fail(reason string) {
	if m.state == stOutOfService {
		return
	}
	m.stats.Failures.Add(1)
	m.sendStatus(StateOutOfService)
	m.state = stOutOfService
	m.reason = reason
	m.disarmAll()
	m.up(func(u l2.User) { u.OutOfService(reason) })
}

// lost is the association's end: the same as a failure, with nothing sent.
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
	return m.bsn, m.started
}

// retrieve hands back what the peer has not acknowledged beyond fsnc
// (Q.704 §5.4.2, RFC 4165 §4.1.x "retrieval"). M2PA writes every MSU to
// SCTP at once, so without a valid fsnc nothing is known to be untransmitted;
// the caller then gets the whole unacknowledged buffer, since SCTP may have
// delivered none of it (a duplicate is better than a loss for the one
// changeover that has no BSNT).
func (m *machine) retrieve(fsnc uint32, ok bool) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	rest := m.rtb
	if ok {
		if k := int(seqDist(m.acked, fsnc)); k <= len(rest) {
			rest = rest[k:]
		}
	}
	out := make([][]byte, len(rest))
	for i, s := range rest {
		out[i] = s.msu
	}
	m.rtb = nil
	m.stats.Retrieved.Add(uint64(len(out)))
	return out
}

// --- received messages ---

// receive handles one message from the peer.
func (m *machine) receive(b []byte) {
	msg, err := Decode(b)
	if err != nil {
		m.stats.Malformed.Add(1)
		return
	}
	m.lock()
	defer m.unlock()
	if msg.Type == TypeLinkStatus {
		m.linkStatus(msg)
		return
	}
	m.userData(msg)
}

func (m *machine) linkStatus(msg Message) {
	switch msg.State {
	case StateAlignment:
		switch m.state {
		case stOutOfService:
			// Not started: say so, as Q.703 answers SIO with SIOS.
			m.sendStatus(StateOutOfService)
		case stNotAligned:
			m.aligned()
		case stProving:
			// The peer restarted alignment: prove again (Q.703 §7.3).
			m.aligned()
		case stAlignedReady, stInService:
			m.fail("the peer restarted alignment")
		}
	case StateProvingNormal, StateProvingEmergency:
		m.peerEmerg = msg.State == StateProvingEmergency
		switch m.state {
		case stNotAligned:
			m.aligned()
			m.startProving()
		case stAligned:
			m.startProving()
		}
	case StateReady:
		switch m.state {
		case stProving:
			m.peerReady = true
		case stAlignedReady:
			m.inService()
		}
	case StateProcessorOutage:
		if !m.remotePO {
			m.remotePO = true
			m.up(func(u l2.User) { u.RemoteProcessorOutage(true) })
		}
	case StateProcessorRecovered:
		if m.remotePO {
			m.remotePO = false
			m.up(func(u l2.User) { u.RemoteProcessorOutage(false) })
		}
	case StateBusy:
		// Q.703 §9.3: while the peer is busy T7 is suspended and T6 runs.
		if !m.busy && m.state == stInService {
			m.busy = true
			m.disarm(tmT7)
			m.arm(tmT6, m.tm.T6, func() { m.fail("T6 expired: the peer stayed busy") })
			m.up(func(u l2.User) { u.Congested(true) })
		}
	case StateBusyEnded:
		if m.busy {
			m.busy = false
			m.disarm(tmT6)
			if len(m.rtb) > 0 {
				m.arm(tmT7, m.tm.T7, func() { m.fail("T7 expired: the peer does not acknowledge") })
			}
			m.up(func(u l2.User) { u.Congested(false) })
		}
	case StateOutOfService:
		switch m.state {
		case stOutOfService, stNotAligned:
			// The peer is not started yet, or not yet aligning.
		default:
			m.fail("the peer went out of service")
		}
	}
}

// aligned: the peer's Alignment (or Proving) was seen; we prove (RFC 4165
// §4.1.2, Q.703 Figure 9 state "aligned").
func (m *machine) aligned() {
	m.disarm(tmT2)
	m.disarm(tmT4)
	m.state = stAligned
	m.sendStatus(m.proving())
	m.arm(tmT3, m.tm.T3, func() { m.fail("T3 expired: no Proving from the peer") })
	m.armRepeat()
}

// startProving runs T4: emergency proving when either side asks for it
// (Q.703 §7.3).
func (m *machine) startProving() {
	m.disarm(tmT3)
	m.disarm(tmRepeat)
	m.state = stProving
	d := m.tm.T4N
	if m.emergency || m.peerEmerg {
		d = m.tm.T4E
	}
	m.arm(tmT4, d, func() {
		m.sendStatus(StateReady)
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
	m.state = stInService
	m.stats.Alignments.Add(1)
	m.up(func(u l2.User) { u.InService() })
}

func (m *machine) userData(msg Message) {
	switch m.state {
	case stAlignedReady:
		// User Data means the peer is in service: as good as its Ready
		// (RFC 4165 §4.1.3; Ready and User Data travel on different streams).
		m.inService()
	case stInService:
	default:
		m.stats.Discarded.Add(1)
		return
	}
	if !m.ack(msg.BSN) {
		return
	}
	if msg.Data == nil {
		return // an acknowledgement only
	}
	switch msg.FSN {
	case seqAdd(m.bsn, 1):
	case m.bsn:
		m.stats.Discarded.Add(1) // a repeat: already delivered
		return
	default:
		m.fail(fmt.Sprintf("FSN %d received, %d expected", msg.FSN, seqAdd(m.bsn, 1)))
		return
	}
	m.bsn = msg.FSN
	m.stats.ReceivedMSU.Add(1)
	data := msg.Data
	m.up(func(u l2.User) { u.Received(data) })
	m.ackOwed++
	switch {
	case m.ackOwed >= m.tm.AckEvery || m.tm.AckDelay == 0:
		m.sendAck()
	case !m.running(tmAck):
		m.arm(tmAck, m.tm.AckDelay, func() {
			if m.state == stInService && m.ackOwed > 0 {
				m.sendAck()
			}
		})
	}
}

// ack applies a received BSN: our MSUs up to it leave the retransmission
// buffer. A BSN outside what we sent is a protocol error (Q.703 §5.3.1
// counts it; over SCTP nothing can excuse it): the link fails.
func (m *machine) ack(bsn uint32) bool {
	k := int(seqDist(m.acked, bsn))
	if k > len(m.rtb) {
		m.fail(fmt.Sprintf("BSN %d acknowledges beyond the last FSN sent (%d)", bsn, m.fsn))
		return false
	}
	if k == 0 {
		return true
	}
	clear(m.rtb[:k])
	m.rtb = m.rtb[k:]
	m.acked = bsn
	m.disarm(tmT7)
	if len(m.rtb) > 0 && !m.busy {
		m.arm(tmT7, m.tm.T7, func() { m.fail("T7 expired: the peer does not acknowledge") })
	}
	return true
}

// snapshot is for status and tests.
func (m *machine) snapshot() (st linkState, fsn, bsn, acked uint32, unacked int, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state, m.fsn, m.bsn, m.acked, len(m.rtb), m.reason
}

// associationUp: a new association; if alignment is under way, Alignment
// goes out on it at once instead of at the next repeat.
func (m *machine) associationUp() {
	m.lock()
	defer m.unlock()
	if m.state == stNotAligned {
		m.sendStatus(StateAlignment)
	}
}
