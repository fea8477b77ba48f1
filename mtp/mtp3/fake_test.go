package mtp3

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/mtp3/l2"
	"github.com/isupgw/isupgw/mtp/mtp3/l2/l2test"
)

// fakeLink is a level 2 with the behaviour MTP3 relies on: MSUs numbered,
// kept until acknowledged, delivered in order; a cut loses what is in
// flight, and Retrieve gives back what the peer's BSNT says it lacks.
type fakeLink struct {
	name string
	mu   sync.Mutex
	peer *fakeLink
	user l2.User

	inService bool
	starts    int
	stops     int
	fsn       uint32 // last sent
	bsn       uint32 // last delivered to us
	rtb       []fakeEntry
	inflight  []fakeEntry // sent, not yet delivered to the peer
	acked     uint32
	noSLTA    bool // drop SLTA sent through it (a peer that fails the test)
}

type fakeEntry struct {
	fsn uint32
	msu []byte
}

var errFakeDown = errors.New("fake link not in service")

func fakePair(name string) (*fakeLink, *fakeLink) {
	a := &fakeLink{name: name + "-a", fsn: 0xFFFFFF, bsn: 0xFFFFFF, acked: 0xFFFFFF}
	b := &fakeLink{name: name + "-b", fsn: 0xFFFFFF, bsn: 0xFFFFFF, acked: 0xFFFFFF}
	a.peer, b.peer = b, a
	return a, b
}

func (f *fakeLink) Name() string { return f.name }
func (f *fakeLink) Start(u l2.User) {
	f.mu.Lock()
	f.user = u
	f.starts++
	f.inService = false
	f.fsn, f.bsn, f.acked, f.rtb, f.inflight = 0xFFFFFF, 0xFFFFFF, 0xFFFFFF, nil, nil
	f.mu.Unlock()
}
func (f *fakeLink) Stop() {
	f.mu.Lock()
	f.stops++
	f.inService = false
	f.mu.Unlock()
}
func (f *fakeLink) Emergency(bool) {}
func (f *fakeLink) Outstanding() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.rtb)
}
func (f *fakeLink) SeqMask() uint32 { return 0xFFFFFF }
func (f *fakeLink) Send(_ uint8, msu []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.inService {
		return errFakeDown
	}
	if f.noSLTA && len(msu) > 5 && msu[0]&0x0F == SISLT && msu[5] == SLTA {
		return nil
	}
	f.fsn = (f.fsn + 1) & 0xFFFFFF
	e := fakeEntry{f.fsn, append([]byte(nil), msu...)}
	f.rtb = append(f.rtb, e)
	f.inflight = append(f.inflight, e)
	return nil
}
func (f *fakeLink) BSNT() (uint32, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bsn, true
}
func (f *fakeLink) Retrieve(fsnc uint32, ok bool) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, e := range f.rtb {
		if !ok || (e.fsn-fsnc)&0xFFFFFF <= 0x7FFFFF && e.fsn != fsnc {
			out = append(out, e.msu)
		}
	}
	f.rtb = nil
	return out
}

// up brings both ends into service (alignment done).
func (f *fakeLink) up() {
	for _, x := range []*fakeLink{f, f.peer} {
		x.mu.Lock()
		x.inService = true
		u := x.user
		x.mu.Unlock()
		u.InService()
	}
}

// cut fails both ends; what is in flight is lost (but stays in the
// senders' retransmission buffers, unacknowledged).
func (f *fakeLink) cut() {
	for _, x := range []*fakeLink{f, f.peer} {
		x.mu.Lock()
		x.inService = false
		x.inflight = nil
		u := x.user
		x.mu.Unlock()
		u.OutOfService("cut")
	}
}

// deliver moves up to max in-flight MSUs to the peer (all if max < 0);
// acknowledgement follows only with ack.
func (f *fakeLink) deliver(max int, ack bool) int {
	f.mu.Lock()
	if !f.inService {
		f.mu.Unlock()
		return 0
	}
	q := f.inflight
	if max >= 0 && len(q) > max {
		q = q[:max]
	}
	f.inflight = f.inflight[len(q):]
	f.mu.Unlock()
	p := f.peer
	for _, e := range q {
		p.mu.Lock()
		p.bsn = e.fsn
		u := p.user
		p.mu.Unlock()
		u.Received(e.msu)
	}
	if ack && len(q) > 0 {
		f.mu.Lock()
		last := q[len(q)-1].fsn
		for len(f.rtb) > 0 && f.rtb[0].fsn != (last+1)&0xFFFFFF {
			done := f.rtb[0].fsn == last
			f.rtb = f.rtb[1:]
			if done {
				break
			}
		}
		f.acked = last
		f.mu.Unlock()
	}
	return len(q)
}

// net is two nodes joined by fake links, on one fake clock.
type net struct {
	t     *testing.T
	clock *l2test.Clock
	a, b  *Node
	links []*fakeLink // the a-side ends
	// ackOff keeps MSUs unacknowledged (so a cut has something to retrieve).
	ackOff bool
}

func newNet(t *testing.T, nlinks int, v Variant) *net {
	t.Helper()
	c := l2test.New()
	w := &net{t: t, clock: c}
	var la, lb []LinkConfig
	for i := range nlinks {
		x, y := fakePair(string(rune('0' + i)))
		w.links = append(w.links, x)
		la = append(la, LinkConfig{SLC: uint8(i), Link: x})
		lb = append(lb, LinkConfig{SLC: uint8(i), Link: y})
	}
	mk := func(opc, adj mtp.PointCode, links []LinkConfig) *Node {
		n, err := New(Config{Variant: v, OPC: opc, NI: 2, Clock: c, InlineControl: true,
			Linksets: []LinksetConfig{{Name: "ls", Adjacent: adj, Links: links}},
			Routes:   []Route{{DPC: adj + 100, Linkset: "ls", Priority: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Close)
		return n
	}
	w.a = mk(1, 2, la)
	w.b = mk(2, 1, lb)
	return w
}

// pump delivers everything in flight on every link, both ways, until
// quiet (bounded).
func (w *net) pump() {
	w.t.Helper()
	for range 10000 {
		moved := 0
		for _, l := range w.links {
			moved += l.deliver(-1, !w.ackOff) + l.peer.deliver(-1, !w.ackOff)
		}
		if moved == 0 {
			return
		}
	}
	w.t.Fatal("pump: never quiet")
}

func (w *net) start() {
	w.a.Start()
	w.b.Start()
	for _, l := range w.links {
		l.up()
	}
	w.pump()
}

func waitEvent(t *testing.T, n *Node, want func(mtp.Event) bool, what string) mtp.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-n.Events():
			if want(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s", what)
			return nil
		}
	}
}

func isResume(pc mtp.PointCode) func(mtp.Event) bool {
	return func(e mtp.Event) bool { r, ok := e.(mtp.Resume); return ok && r.PC == pc }
}

func isPause(pc mtp.PointCode) func(mtp.Event) bool {
	return func(e mtp.Event) bool { r, ok := e.(mtp.Pause); return ok && r.PC == pc }
}

// collect reads n indications (bounded in time).
func collect(t *testing.T, n *Node, count int) []mtp.Message {
	t.Helper()
	var out []mtp.Message
	deadline := time.After(10 * time.Second)
	for len(out) < count {
		select {
		case m := <-n.Indications():
			out = append(out, m)
		case <-deadline:
			t.Fatalf("received %d of %d messages", len(out), count)
		}
	}
	return out
}

// noMore checks nothing else arrives once the queue has drained: the
// fifo goroutine has handed over everything pushed before the call.
func noMore(t *testing.T, n *Node) {
	t.Helper()
	select {
	case m := <-n.Indications():
		t.Fatalf("unexpected extra message %v %x", m.Label, m.Payload)
	case <-time.After(50 * time.Millisecond):
	}
}
