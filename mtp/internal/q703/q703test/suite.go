// Package q703test runs one set of link state machine tests against each
// framing of the shared Q.703 machine (MTP2 signal units, M2PA messages), and
// gives the framings' own tests the same two-machine harness.
package q703test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/internal/q703"
	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

// Unit is a decoded signal unit or message, as the suite sees it.
type Unit struct {
	Kind   Kind
	Status q703.Status // Kind Status
	q703.Header
	Data []byte // Kind MSU
}

// Kind says what a Unit is.
type Kind int

// Unit kinds.
const (
	KindStatus Kind = iota // LSSU; Link Status
	KindAck                // FISU; empty User Data
	KindMSU                // MSU; User Data with data
)

// Framing is what the suite needs of one framing.
type Framing struct {
	// New builds a machine on c with the framing's default timers, but for
	// T4N when t4n is set; it sends through out. receive is the framing's
	// decoding input, stats its counters (for its own tests).
	New func(c *l2test.Clock, t4n time.Duration, out func([]byte)) (m *q703.Machine, receive func([]byte), stats any)
	// Timers are the framing's defaults, filled.
	Timers q703.Timers
	// Encode builds a unit as the peer would send it; Decode reads one.
	Encode func(Unit) []byte
	Decode func([]byte) (Unit, error)
	// MSU is a valid MSU that carries i in its second and third octets.
	MSU func(i int) []byte
	// SeqMask is the framing's sequence number mask (and initial value).
	SeqMask uint32
}

// Recorder is an l2.User that records what it is told.
type Recorder struct {
	mu       sync.Mutex
	events   []string
	received [][]byte
}

func (r *Recorder) add(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }

// InService records the indication.
func (r *Recorder) InService() { r.add("in service") }

// OutOfService records the indication.
func (r *Recorder) OutOfService(reason string) { r.add("out of service: " + reason) }

// Received records the MSU.
func (r *Recorder) Received(msu []byte) {
	r.mu.Lock()
	r.received = append(r.received, append([]byte(nil), msu...))
	r.mu.Unlock()
}

// RemoteProcessorOutage records the indication.
func (r *Recorder) RemoteProcessorOutage(on bool) { r.add(fmt.Sprint("remote processor outage ", on)) }

// Congested records the indication.
func (r *Recorder) Congested(on bool) { r.add(fmt.Sprint("congested ", on)) }

// Last is the last indication but Received.
func (r *Recorder) Last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return ""
	}
	return r.events[len(r.events)-1]
}

// Received is what was received so far.
func (r *Recorder) ReceivedMSUs() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.received...)
}

// End is one machine with what it sent queued for the peer.
type End struct {
	M       *q703.Machine
	U       *Recorder
	Stats   any
	receive func([]byte)
	mu      sync.Mutex
	out     [][]byte
	// Drop, when set, loses what it matches on the way out.
	Drop func(b []byte) bool
}

// NewEnd builds one end.
func NewEnd(c *l2test.Clock, f Framing, t4n time.Duration) *End {
	e := &End{U: &Recorder{}}
	e.M, e.receive, e.Stats = f.New(c, t4n, func(b []byte) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.Drop == nil || !e.Drop(b) {
			e.out = append(e.out, b)
		}
	})
	return e
}

// Receive feeds b in, as from the peer.
func (e *End) Receive(b []byte) { e.receive(b) }

// Take returns and forgets what the end sent.
func (e *End) Take() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.out
	e.out = nil
	return o
}

// State is the machine's state.
func (e *End) State() q703.State { return e.M.Snapshot().State }

// Pump carries units both ways until both ends are quiet (bounded).
func Pump(t *testing.T, a, b *End) {
	t.Helper()
	for range 1000 {
		oa, ob := a.Take(), b.Take()
		if len(oa) == 0 && len(ob) == 0 {
			return
		}
		for _, x := range oa {
			b.Receive(x)
		}
		for _, x := range ob {
			a.Receive(x)
		}
	}
	t.Fatal("pump: the machines never went quiet")
}

// AdvancePumping lets d pass in steps of 10 ms, carrying what is sent after
// each, as on a link where units arrive while time passes.
func AdvancePumping(t *testing.T, c *l2test.Clock, a, b *End, d time.Duration) {
	t.Helper()
	const step = 10 * time.Millisecond
	for ; d > 0; d -= step {
		c.Advance(min(d, step))
		Pump(t, a, b)
	}
}

// AlignPair starts two machines and proves with the normal period,
// checking that proving lasts exactly T4N.
func AlignPair(t *testing.T, c *l2test.Clock, f Framing) (*End, *End) {
	t.Helper()
	a, b := NewEnd(c, f, 0), NewEnd(c, f, 0)
	a.M.Start(a.U)
	b.M.Start(b.U)
	Pump(t, a, b)
	if a.State() != q703.StProving || b.State() != q703.StProving {
		t.Fatalf("after exchanging alignment and proving: %v %v, want proving", a.State(), b.State())
	}
	c.Advance(f.Timers.T4N - time.Millisecond)
	Pump(t, a, b)
	if a.State() != q703.StProving {
		t.Fatalf("in service before the normal proving period ended: %v", a.State())
	}
	c.Advance(time.Millisecond)
	Pump(t, a, b)
	if a.State() != q703.StInService || b.State() != q703.StInService || a.U.Last() != "in service" || b.U.Last() != "in service" {
		t.Fatalf("after T4: %v %v (%q %q)", a.State(), b.State(), a.U.Last(), b.U.Last())
	}
	return a, b
}

// Run runs the shared machine tests against f.
func Run(t *testing.T, f Framing) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Framing)
	}{
		{"AlignNormal", func(t *testing.T, f Framing) { AlignPair(t, l2test.New(), f) }},
		{"AlignEmergencyOneSideUsesT4E", alignEmergency},
		{"AlignWithLateStartingPeer", alignLate},
		{"PeerStillProvingWhenOursEnds", alignPeerProvesLonger},
		{"T2ExpiresWithoutPeer", t2Expires},
		{"SequenceNumbersStartAtZeroAndAck", sequenceAndAck},
		{"T7FailsWhenPeerStopsAcking", t7Expires},
		{"RetrieveGivesBackWhatPeerDidNotReceive", retrieve},
		{"BusyRunsT6", busyT6},
		{"PeerOutOfServiceFailsLink", peerOutOfService},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, f) })
	}
}

func alignEmergency(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := NewEnd(c, f, 0), NewEnd(c, f, 0)
	a.M.Emergency(true) // one side asking is enough (Q.703 §7.3)
	a.M.Start(a.U)
	b.M.Start(b.U)
	Pump(t, a, b)
	c.Advance(f.Timers.T4E)
	Pump(t, a, b)
	if a.State() != q703.StInService || b.State() != q703.StInService {
		t.Fatalf("after T4E: %v %v", a.State(), b.State())
	}
}

func alignLate(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := NewEnd(c, f, 0), NewEnd(c, f, 0)
	a.M.Start(a.U)
	Pump(t, a, b) // b is not started: it answers out of service
	if a.State() != q703.StNotAligned {
		t.Fatalf("a %v", a.State())
	}
	c.Advance(5 * time.Second) // a repeats its alignment status meanwhile
	b.M.Start(b.U)
	Pump(t, a, b)
	AdvancePumping(t, c, a, b, f.Timers.T4N)
	if a.State() != q703.StInService || b.State() != q703.StInService {
		t.Fatalf("%v %v", a.State(), b.State())
	}
}

// alignPeerProvesLonger: our proving period ends first; the peer goes on
// proving (and, on a link that repeats them, sending SIN) until its own
// ends. We wait in aligned ready for its FISU (Figure 8/Q.703: only SIO and
// SIOS fail the link there), then both are in service.
func alignPeerProvesLonger(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := NewEnd(c, f, f.Timers.T4N/2), NewEnd(c, f, 0)
	a.M.Start(a.U)
	b.M.Start(b.U)
	Pump(t, a, b)
	AdvancePumping(t, c, a, b, f.Timers.T4N/2+50*time.Millisecond)
	if a.State() != q703.StAlignedReady || b.State() != q703.StProving {
		t.Fatalf("after the short proving period: %v %v (%q), want aligned ready and proving", a.State(), b.State(), a.U.Last())
	}
	AdvancePumping(t, c, a, b, f.Timers.T4N/2)
	if a.State() != q703.StInService || b.State() != q703.StInService || a.U.Last() != "in service" {
		t.Fatalf("after the peer's proving period: %v %v (%q %q)", a.State(), b.State(), a.U.Last(), b.U.Last())
	}
}

func t2Expires(t *testing.T, f Framing) {
	c := l2test.New()
	a := NewEnd(c, f, 0)
	a.M.Start(a.U)
	c.Advance(f.Timers.T2 - time.Millisecond)
	if a.State() != q703.StNotAligned {
		t.Fatalf("failed before T2: %v", a.State())
	}
	c.Advance(time.Millisecond)
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "T2") {
		t.Fatalf("after T2: %v %q", a.State(), a.U.Last())
	}
	out := a.Take() // it told the peer
	if u, err := f.Decode(out[len(out)-1]); err != nil || u.Kind != KindStatus || u.Status != q703.OutOfService {
		t.Fatalf("last sent %+v (%v), want out of service", u, err)
	}
}

func sequenceAndAck(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := AlignPair(t, c, f)
	for i := range 3 {
		if err := a.M.Send(0, f.MSU(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, x := range a.Take() {
		u, err := f.Decode(x)
		if err != nil || u.Kind != KindMSU || u.FSN != uint32(i) || u.BSN != f.SeqMask {
			t.Fatalf("MSU %d: %+v %v; want FSN %d BSN %#x", i, u, err, i, f.SeqMask)
		}
		b.Receive(x)
	}
	if got := b.U.ReceivedMSUs(); len(got) != 3 || !bytes.Equal(got[2], f.MSU(2)) {
		t.Fatalf("b received %x", got)
	}
	if len(b.Take()) != 0 {
		t.Fatal("b acknowledged before AckDelay with nothing to carry it")
	}
	c.Advance(f.Timers.AckDelay)
	acks := b.Take()
	if len(acks) != 1 {
		t.Fatalf("want one acknowledgement, got %d units", len(acks))
	}
	if u, err := f.Decode(acks[0]); err != nil || u.Kind != KindAck || u.BSN != 2 || u.FSN != f.SeqMask {
		t.Fatalf("ack %+v %v", u, err)
	}
	a.Receive(acks[0])
	if s := a.M.Snapshot(); s.Acked != 2 || s.Unacked != 0 {
		t.Fatalf("a: acked %d, %d unacknowledged", s.Acked, s.Unacked)
	}
	// T7 was stopped by the acknowledgement.
	c.Advance(10 * f.Timers.T7)
	if a.State() != q703.StInService {
		t.Fatalf("a failed though everything was acknowledged: %q", a.U.Last())
	}
}

func t7Expires(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := AlignPair(t, c, f)
	b.Drop = func([]byte) bool { return true }
	_ = a.M.Send(0, f.MSU(1))
	Pump(t, a, b)
	c.Advance(f.Timers.T7)
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "T7") {
		t.Fatalf("%v %q", a.State(), a.U.Last())
	}
}

func retrieve(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := AlignPair(t, c, f)
	for i := range 5 {
		_ = a.M.Send(0, f.MSU(i))
	}
	out := a.Take()
	for _, x := range out[:3] { // the last two are lost with the connection
		b.Receive(x)
	}
	c.Advance(f.Timers.AckDelay) // b acknowledges FSN 2 ...
	b.Take()                     // ... but the acknowledgement is lost too
	a.M.Lost("connection lost")
	b.M.Lost("connection lost")
	if !strings.Contains(a.U.Last(), "connection lost") {
		t.Fatalf("a %q", a.U.Last())
	}
	bsnt, ok := b.M.BSNT()
	if !ok || bsnt != 2 {
		t.Fatalf("b BSNT %d %v, want 2", bsnt, ok)
	}
	got := a.M.Retrieve(bsnt, true)
	if len(got) != 2 || !bytes.Equal(got[0], f.MSU(3)) || !bytes.Equal(got[1], f.MSU(4)) {
		t.Fatalf("retrieved %x, want MSUs 3 and 4", got)
	}
	if again := a.M.Retrieve(bsnt, true); len(again) != 0 {
		t.Fatalf("second retrieval %x", again)
	}
}

func busyT6(t *testing.T, f Framing) {
	c := l2test.New()
	a, _ := AlignPair(t, c, f)
	_ = a.M.Send(0, f.MSU(1))
	a.Take()
	busy := Unit{Kind: KindStatus, Status: q703.Busy,
		Header: q703.Header{FSN: f.SeqMask, BSN: f.SeqMask, FIB: true, BIB: true}}
	a.Receive(f.Encode(busy))
	if a.U.Last() != "congested true" {
		t.Fatalf("%q", a.U.Last())
	}
	c.Advance(f.Timers.T7) // T7 is suspended while busy (Q.703 §9.3)
	if a.State() != q703.StInService {
		t.Fatalf("T7 ran while the peer was busy: %q", a.U.Last())
	}
	c.Advance(f.Timers.T6 - f.Timers.T7)
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "T6") {
		t.Fatalf("%v %q", a.State(), a.U.Last())
	}
}

func peerOutOfService(t *testing.T, f Framing) {
	c := l2test.New()
	a, b := AlignPair(t, c, f)
	b.M.Stop()
	Pump(t, a, b)
	if a.State() != q703.StOutOfService || !strings.Contains(a.U.Last(), "peer went out of service") {
		t.Fatalf("%v %q", a.State(), a.U.Last())
	}
	if strings.HasPrefix(b.U.Last(), "out of service") {
		t.Fatal("stop told its own user")
	}
}

// FeedInService aligns a pair, sends one MSU from a, feeds units to a and
// lets a minute pass (fuzzing): nothing may panic, and a's buffers stay
// within window and queue.
func FeedInService(t *testing.T, f Framing, units [][]byte, window, queue int) {
	c := l2test.New()
	a, _ := AlignPair(t, c, f)
	_ = a.M.Send(0, f.MSU(1))
	for _, u := range units {
		a.Receive(u)
	}
	c.Advance(time.Minute)
	if s := a.M.Snapshot(); s.Unacked > window || s.Queued > queue {
		t.Fatalf("%d unacknowledged, %d queued", s.Unacked, s.Queued)
	}
}
