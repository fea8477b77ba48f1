package mtp2

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

type recorder struct {
	mu       sync.Mutex
	events   []string
	received [][]byte
}

func (r *recorder) add(s string)               { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) InService()                 { r.add("in service") }
func (r *recorder) OutOfService(reason string) { r.add("out of service: " + reason) }
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

type end struct {
	m    *machine
	u    *recorder
	mu   sync.Mutex
	out  [][]byte
	drop func(SU) bool // lose what matches on the way out
	st   Stats
}

func newEnd(c *l2test.Clock) *end {
	e := &end{u: &recorder{}}
	e.m = newMachine(c, DefaultTimers(), &e.st, func(b []byte) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.drop != nil {
			if su, err := Decode(b); err == nil && e.drop(su) {
				return
			}
		}
		e.out = append(e.out, b)
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
	t.Fatal("pump: never quiet")
}

func state(e *end) linkState { s, _, _, _, _, _ := e.m.snapshot(); return s }

func alignPair(t *testing.T, c *l2test.Clock) (*end, *end) {
	t.Helper()
	a, b := newEnd(c), newEnd(c)
	a.m.start(a.u)
	b.m.start(b.u)
	pump(t, a, b)
	if state(a) != stProving || state(b) != stProving {
		t.Fatalf("after SIO and SIN: %v %v", state(a), state(b))
	}
	c.Advance(DefaultTimers().T4N - time.Millisecond)
	pump(t, a, b)
	if state(a) != stProving {
		t.Fatalf("proving ended early: %v", state(a))
	}
	c.Advance(time.Millisecond)
	pump(t, a, b)
	if state(a) != stInService || state(b) != stInService {
		t.Fatalf("after T4: %v %v", state(a), state(b))
	}
	return a, b
}

func TestAlignNormal(t *testing.T) { alignPair(t, l2test.New()) }

func TestAlignEmergencyOneSide(t *testing.T) {
	c := l2test.New()
	a, b := newEnd(c), newEnd(c)
	b.m.setEmergency(true)
	a.m.start(a.u)
	b.m.start(b.u)
	pump(t, a, b)
	c.Advance(DefaultTimers().T4E)
	pump(t, a, b)
	if state(a) != stInService || state(b) != stInService {
		t.Fatalf("%v %v", state(a), state(b))
	}
}

func TestT2WithoutPeer(t *testing.T) {
	c := l2test.New()
	a := newEnd(c)
	a.m.start(a.u)
	c.Advance(DefaultTimers().T2)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T2") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
	// It said so with SIOS.
	out := a.take()
	su, _ := Decode(out[len(out)-1])
	if su.Kind != LSSU || su.Status != SIOS {
		t.Fatalf("last SU %+v", su)
	}
}

func TestFSNFromZeroAndFISUAck(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	for i := range 3 {
		if err := a.m.send([]byte{0x85, byte(i), 0, 0}); err != nil {
			t.Fatal(err)
		}
	}
	for i, x := range a.take() {
		su, _ := Decode(x)
		if su.Kind != MSU || int(su.FSN) != i || !su.FIB || su.BSN != 127 {
			t.Fatalf("MSU %d: %+v", i, su)
		}
		b.m.receive(x)
	}
	c.Advance(DefaultTimers().AckDelay)
	acks := b.take()
	if len(acks) != 1 {
		t.Fatalf("%d SUs for the acknowledgement", len(acks))
	}
	su, _ := Decode(acks[0])
	if su.Kind != FISU || su.BSN != 2 || !su.BIB {
		t.Fatalf("ack %+v", su)
	}
	a.m.receive(acks[0])
	if _, _, _, acked, n, _ := a.m.snapshot(); acked != 2 || n != 0 {
		t.Fatalf("acked %d unacked %d", acked, n)
	}
	if len(b.u.received) != 3 {
		t.Fatalf("received %d", len(b.u.received))
	}
}

// TestNACKRetransmits: an MSU lost on the way makes the receiver invert
// BIB; the sender inverts FIB and sends again everything after the BSN.
func TestNACKRetransmits(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	dropped := false
	a.drop = func(su SU) bool {
		if su.Kind == MSU && su.FSN == 1 && !dropped {
			dropped = true
			return true
		}
		return false
	}
	for i := range 4 {
		_ = a.m.send([]byte{0x85, byte(i), 0, 0})
	}
	pump(t, a, b)
	c.Advance(DefaultTimers().AckDelay)
	pump(t, a, b)
	if b.st.NACKsSent.Load() != 1 || a.st.Retransmitted.Load() != 3 {
		t.Fatalf("NACKs %d, retransmitted %d", b.st.NACKsSent.Load(), a.st.Retransmitted.Load())
	}
	if len(b.u.received) != 4 {
		t.Fatalf("received %d", len(b.u.received))
	}
	for i, m := range b.u.received {
		if m[1] != byte(i) {
			t.Fatalf("order: %v", b.u.received)
		}
	}
	if _, _, _, _, n, _ := a.m.snapshot(); n != 0 {
		t.Fatalf("%d unacknowledged", n)
	}
}

func TestWindowQueuesBeyond127(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	for i := range 300 {
		if err := a.m.send([]byte{0x85, byte(i), byte(i >> 8), 0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, _, n, q := a.m.snapshot(); n != window || q != 300-window {
		t.Fatalf("unacked %d queued %d", n, q)
	}
	for range 10 {
		pump(t, a, b)
		c.Advance(DefaultTimers().AckDelay)
	}
	if len(b.u.received) != 300 {
		t.Fatalf("received %d", len(b.u.received))
	}
	for i, m := range b.u.received {
		if int(m[1])|int(m[2])<<8 != i {
			t.Fatalf("MSU %d out of order", i)
		}
	}
}

func TestT7WithoutAck(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	b.drop = func(SU) bool { return true }
	_ = a.m.send([]byte{0x85, 1, 0, 0})
	pump(t, a, b)
	c.Advance(DefaultTimers().T7)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T7") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
}

func TestRetrieveAfterBSNT(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	for i := range 5 {
		_ = a.m.send([]byte{0x85, byte(i), 0, 0})
	}
	out := a.take()
	for _, x := range out[:2] {
		b.m.receive(x)
	}
	b.take()
	a.m.lost("socket closed")
	b.m.lost("socket closed")
	bsnt, _ := b.m.bsnt()
	if bsnt != 1 {
		t.Fatalf("BSNT %d", bsnt)
	}
	got := a.m.retrieve(bsnt, true)
	if len(got) != 3 || got[0][1] != 2 || got[2][1] != 4 {
		t.Fatalf("retrieved %v", got)
	}
}

func TestLSSUInServiceFailsLink(t *testing.T) {
	c := l2test.New()
	a, b := alignPair(t, c)
	b.m.stop()
	pump(t, a, b)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "SIOS") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
}

func TestBusyT6(t *testing.T) {
	c := l2test.New()
	a, _ := alignPair(t, c)
	_ = a.m.send([]byte{0x85, 1, 0, 0})
	a.take()
	sib := SU{Kind: LSSU, Status: SIB, BSN: 127, BIB: true, FSN: 127, FIB: true}
	a.m.receive(sib.Append(nil))
	c.Advance(DefaultTimers().T7)
	if state(a) != stInService {
		t.Fatalf("T7 ran while busy: %q", a.u.last())
	}
	c.Advance(DefaultTimers().T6)
	if state(a) != stOutOfService || !strings.Contains(a.u.last(), "T6") {
		t.Fatalf("%v %q", state(a), a.u.last())
	}
}

// FuzzMachine feeds arbitrary signal units to an in-service link: nothing
// panics and the buffers stay bounded.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{0xFF, 0x80, 4, 0x85, 1, 2, 3, 0, 0})
	f.Add([]byte{0x7F, 0xFF, 0, 0, 0})
	f.Add([]byte{0xFF, 0xFF, 1, 5, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := l2test.New()
		a, _ := alignPair(t, c)
		_ = a.m.send([]byte{0x85, 1, 0, 0})
		for len(b) >= FISULen {
			n := min(len(b), FISULen+int(b[len(b)-1]%16))
			a.m.receive(b[:n])
			b = b[n:]
		}
		c.Advance(time.Minute)
		if _, _, _, _, n, q := a.m.snapshot(); n > window || q > MaxQueued {
			t.Fatalf("unacked %d queued %d", n, q)
		}
	})
}
