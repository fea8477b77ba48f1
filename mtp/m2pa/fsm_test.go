package m2pa

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

// recorder is an l2.User that records what it is told.
type recorder struct {
	mu       sync.Mutex
	events   []string
	received [][]byte
}

func (r *recorder) add(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) InService()   { r.add("in service") }
func (r *recorder) OutOfService(reason string) {
	r.add("out of service: " + reason)
}
func (r *recorder) Received(msu []byte) {
	r.mu.Lock()
	r.received = append(r.received, append([]byte(nil), msu...))
	r.mu.Unlock()
}
func (r *recorder) RemoteProcessorOutage(on bool) { r.add(fmt.Sprint("remote processor outage ", on)) }
func (r *recorder) Congested(on bool)             { r.add(fmt.Sprint("congested ", on)) }

func (r *recorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return ""
	}
	return r.events[len(r.events)-1]
}

// end is one machine with what it sent queued for the peer.
type end struct {
	m    *machine
	u    *recorder
	mu   sync.Mutex
	out  [][]byte
	drop bool // lose what it sends (a peer that stopped reading)
	st   Stats
}

func newEnd(c *l2test.Clock, tm Timers) *end {
	e := &end{u: &recorder{}}
	e.m = newMachine(c, tm, &e.st, func(b []byte, _ bool) {
		e.mu.Lock()
		if !e.drop {
			e.out = append(e.out, b)
		}
		e.mu.Unlock()
	})
	return e
}

func (e *end) take() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.out
	e.out = nil
	return o
}

// pump carries messages both ways until both are quiet (bounded).
func pump(t *testing.T, a, b *end) {
	t.Helper()
	for range 1000 {
		oa, ob := a.take(), b.take()
		if len(oa) == 0 && len(ob) == 0 {
			return
		}
		for _, x := range oa {
			b.m.receive(x)
		}
		for _, x := range ob {
			a.m.receive(x)
		}
	}
	t.Fatal("pump: the machines never went quiet")
}

func state(e *end) linkState { s, _, _, _, _, _ := e.m.snapshot(); return s }

func testTimers() Timers {
	tm := DefaultTimers()
	return tm
}

// alignPair starts two machines and proves with the normal period.
func alignPair(t *testing.T, c *l2test.Clock) (*end, *end) {
	t.Helper()
	a, b := newEnd(c, testTimers()), newEnd(c, testTimers())
	a.m.start(a.u)
	b.m.start(b.u)
	pump(t, a, b)
	if state(a) != stProving || state(b) != stProving {
		t.Fatalf("after exchanging Alignment and Proving: %v %v, want proving", state(a), state(b))
	}
	c.Advance(testTimers().T4N - time.Millisecond)
	pump(t, a, b)
	if state(a) != stProving {
		t.Fatalf("in service before the normal proving period ended: %v", state(a))
	}
	c.Advance(time.Millisecond)
	pump(t, a, b)
	if state(a) != stInService || state(b) != stInService || a.u.last() != "in service" || b.u.last() != "in service" {
		t.Fatalf("after T4: %v %v (%q %q)", state(a), state(b), a.u.last(), b.u.last())
	}
	return a, b
}

func TestAlignNormalProving(t *testing.T) {
	alignPair(t, l2test.New())
}

func TestAlignEmergencyProvingUsesT4E(t *testing.T) {
	c := l2test.New()
	a, b := newEnd(c, testTimers()), newEnd(c, testTimers())
	a.m.setEmergency(true) // one side asking is enough (Q.703 §7.3)
	a.m.start(a.u)
	b.m.start(b.u)
	pump(t, a, b)
	c.Advance(testTimers().T4E)
	pump(t, a, b)
	if state(a) != stInService || state(b) != stInService {
		t.Fatalf("after T4E: %v %v", state(a), state(b))
	}
}

func TestAlignWithLateStartingPeer(t *testing.T) {
	c := l2test.New()
	a, b := newEnd(c, testTimers()), newEnd(c, testTimers())
	a.m.start(a.u)
	pump(t, a, b) // b is not started: it answers Out of Service
	if state(a) != stNotAligned {
		t.Fatalf("a %v", state(a))
	}
	c.Advance(5 * time.Second) // a repeats Alignment meanwhile
	b.m.start(b.u)
	pump(t, a, b)
	c.Advance(testTimers().T4N)
	pump(t, a, b)
	if state(a) != stInService || state(b) != stInService {
		t.Fatalf("%v %v", state(a), state(b))
	}
}

func TestT2ExpiresWithoutPeer(t *testing.T) {
	c := l2test.New()
	a := newEnd(c, testTimers())
	a.m.start(a.u)
	c.Advance(testTimers().T2 - time.Millisecond)
	if state(a) != stNotAligned {
		t.Fatalf("failed before T2: %v", state(a))
	}
	c.Advance(time.Millisecond)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T2") {
		t.Fatalf("after T2: %v %q", state(a), a.u.last())
	}
}

func TestT1ExpiresWhenPeerNeverReady(t *testing.T) {
	c := l2test.New()
	tm := testTimers()
	a, b := newEnd(c, tm), newEnd(c, tm)
	tmB := tm
	tmB.T4N = tm.T1 * 10 // b proves for far longer than a waits
	b.m = newMachine(c, tmB, &b.st, b.m.out)
	a.m.start(a.u)
	b.m.start(b.u)
	pump(t, a, b)
	c.Advance(tm.T4N)
	pump(t, a, b)
	if state(a) != stAlignedReady {
		t.Fatalf("a %v", state(a))
	}
	c.Advance(tm.T1)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T1") {
		t.Fatalf("after T1: %v %q", state(a), a.u.last())
	}
}

func TestSequenceNumbersStartAtZeroAndAck(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	for i := range 3 {
		if err := a.m.send(0, []byte{0x85, byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	out := a.take()
	for i, x := range out {
		m, err := Decode(x)
		if err != nil || m.FSN != uint32(i) || m.BSN != SeqInitial {
			t.Fatalf("MSU %d: FSN %d BSN %d err %v; want FSN %d BSN 0xFFFFFF", i, m.FSN, m.BSN, err, i)
		}
		b.m.receive(x)
	}
	if len(b.u.received) != 3 || !bytes.Equal(b.u.received[2], []byte{0x85, 2}) {
		t.Fatalf("b received %v", b.u.received)
	}
	if len(b.take()) != 0 {
		t.Fatal("b acknowledged before AckDelay with nothing to carry it")
	}
	c.Advance(testTimers().AckDelay)
	acks := b.take()
	if len(acks) != 1 {
		t.Fatalf("want one empty User Data, got %d messages", len(acks))
	}
	m, _ := Decode(acks[0])
	if len(acks[0]) != HeaderLen || m.Type != TypeUserData || m.BSN != 2 || m.FSN != SeqInitial {
		t.Fatalf("ack %+v (%d octets)", m, len(acks[0]))
	}
	a.m.receive(acks[0])
	if _, _, _, acked, n, _ := a.m.snapshot(); acked != 2 || n != 0 {
		t.Fatalf("a: acked %d, %d unacknowledged", acked, n)
	}
	// T7 was stopped by the acknowledgement.
	c.Advance(10 * testTimers().T7)
	if state(a) != stInService {
		t.Fatalf("a failed though everything was acknowledged: %q", a.u.last())
	}
}

func TestAckEveryForcesImmediateAck(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	for range testTimers().AckEvery {
		_ = a.m.send(0, []byte{0x85, 1})
	}
	for _, x := range a.take() {
		b.m.receive(x)
	}
	if n := len(b.take()); n != 1 {
		t.Fatalf("after AckEvery MSUs b sent %d messages, want one ack", n)
	}
}

func TestT7FailsWhenPeerStopsAcking(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	b.drop = true
	_ = a.m.send(0, []byte{0x85, 1})
	for _, x := range a.take() {
		b.m.receive(x)
	}
	c.Advance(testTimers().T7)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T7") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
}

func TestRetrieveGivesBackWhatPeerDidNotReceive(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	for i := range 5 {
		_ = a.m.send(0, []byte{0x85, byte(i)})
	}
	out := a.take()
	for _, x := range out[:3] { // the last two are lost with the association
		b.m.receive(x)
	}
	c.Advance(testTimers().AckDelay) // b acknowledges FSN 2 ...
	b.take()                         // ... but the ack is lost too
	a.m.lost("association lost")
	b.m.lost("association lost")
	if !strings.Contains(a.u.last(), "association lost") {
		t.Fatalf("a %q", a.u.last())
	}
	bsnt, ok := b.m.bsnt()
	if !ok || bsnt != 2 {
		t.Fatalf("b BSNT %d %v, want 2", bsnt, ok)
	}
	got := a.m.retrieve(bsnt, true)
	if len(got) != 2 || got[0][1] != 3 || got[1][1] != 4 {
		t.Fatalf("retrieved %v, want MSUs 3 and 4", got)
	}
	if again := a.m.retrieve(bsnt, true); len(again) != 0 {
		t.Fatalf("second retrieval %v", again)
	}
}

func TestFSNGapFailsLink(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	_ = a.m.send(0, []byte{0x85, 1})
	_ = a.m.send(0, []byte{0x85, 2})
	out := a.take()
	b.m.receive(out[1])
	if state(b) != stOutOfService || !strings.Contains(b.u.last(), "FSN") {
		t.Fatalf("%v %q", state(b), b.u.last())
	}
}

func TestBSNBeyondSentFailsLink(t *testing.T) {
	c := l2test.New()
	a, _ := alignPair(t, c)
	bad := Message{Type: TypeUserData, BSN: 7, FSN: SeqInitial}
	a.m.receive(bad.Append(nil))
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "BSN") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
}

func TestMalformedCountedAndIgnored(t *testing.T) {
	c := l2test.New()
	a, _ := alignPair(t, c)
	a.m.receive([]byte{1, 0, 11})
	a.m.receive([]byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	if a.st.Malformed.Load() != 2 || state(a) != stInService {
		t.Fatalf("malformed %d state %v", a.st.Malformed.Load(), state(a))
	}
}

func TestBusyRunsT6(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	_ = a.m.send(0, []byte{0x85, 1})
	a.take()
	busy := Message{Type: TypeLinkStatus, State: StateBusy, BSN: SeqInitial, FSN: SeqInitial}
	a.m.receive(busy.Append(nil))
	if a.u.last() != "congested true" {
		t.Fatalf("%q", a.u.last())
	}
	c.Advance(testTimers().T7) // T7 is suspended while busy
	if state(a) != stInService {
		t.Fatalf("T7 ran while the peer was busy: %q", a.u.last())
	}
	c.Advance(testTimers().T6 - testTimers().T7)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T6") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
	_ = b
}

func TestPeerOutOfServiceFailsLink(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	b.m.stop()
	pump(t, a, b)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "peer went out of service") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
	if strings.HasPrefix(b.u.last(), "out of service") {
		t.Fatal("stop told its own user")
	}
}

// FuzzMachine feeds arbitrary messages to an in-service link: whatever
// comes, nothing panics and the retransmission buffer stays bounded.
func FuzzMachine(f *testing.F) {
	f.Add((&Message{Type: TypeUserData, BSN: 0, FSN: 0, Data: []byte{0x85, 1}}).Append(nil))
	f.Add((&Message{Type: TypeLinkStatus, State: StateBusy}).Append(nil))
	f.Add((&Message{Type: TypeUserData, BSN: 9, FSN: SeqInitial}).Append(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := l2test.New()
		a, _ := alignPair(t, c)
		_ = a.m.send(0, []byte{0x85, 1})
		for len(b) >= HeaderLen {
			n := min(len(b), HeaderLen+int(b[len(b)-1]%32))
			msg := append([]byte(nil), b[:n]...)
			if len(msg) >= 8 {
				msg[0], msg[2] = Version, Class
				msg[4], msg[5], msg[6], msg[7] = 0, 0, 0, byte(len(msg))
			}
			a.m.receive(msg)
			b = b[n:]
		}
		c.Advance(time.Minute)
		if _, _, _, _, n, _ := a.m.snapshot(); n > MaxUnacked {
			t.Fatalf("%d unacknowledged", n)
		}
	})
}
