package m3ua

import (
	"context"
	"net/netip"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/wmnsk/go-m3ua/messages"
)

const waitLimit = 20 * time.Second // generous bound for event-driven waits

var lo = netip.MustParseAddr("127.0.0.1")

func kinds(t *testing.T) []transport.Kind {
	k := []transport.Kind{transport.KindUDP}
	if os.Geteuid() == 0 {
		k = append(k, transport.KindRaw)
	} else {
		t.Log("not root: raw transport not tested")
	}
	return k
}

func start(t *testing.T, cfg Config, opts ...Option) *Endpoint {
	t.Helper()
	e, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Close(ctx)
	})
	return e
}

// backlog keeps events a waitEvent passed over, for later waits.
var (
	backlogMu sync.Mutex
	backlog   = map[*Endpoint][]mtp.Event{}
)

// waitEvent returns the first event (oldest first) for which match is
// true, failing after waitLimit. Events that do not match are kept.
func waitEvent(t *testing.T, e *Endpoint, what string, match func(mtp.Event) bool) mtp.Event {
	t.Helper()
	backlogMu.Lock()
	for i, ev := range backlog[e] {
		if match(ev) {
			backlog[e] = append(backlog[e][:i:i], backlog[e][i+1:]...)
			backlogMu.Unlock()
			return ev
		}
	}
	backlogMu.Unlock()
	deadline := time.After(waitLimit)
	for {
		select {
		case ev := <-e.Events():
			if match(ev) {
				return ev
			}
			backlogMu.Lock()
			backlog[e] = append(backlog[e], ev)
			backlogMu.Unlock()
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
			return nil
		}
	}
}

func waitState(t *testing.T, e *Endpoint, peer, state string) {
	t.Helper()
	waitEvent(t, e, peer+" "+state, func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.Peer == peer && ps.State == state
	})
}

// sgAndASP brings up an SG with one configured ASP and that ASP, both
// ACTIVE. SG point code 1, ASP point code 2.
func sgAndASP(t *testing.T, kind transport.Kind, aspOpts ...Option) (sg, asp *Endpoint) {
	t.Helper()
	sg = start(t, Config{Role: RoleSG, Transport: kind, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{{Name: "asp1", From: lo, ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}}}},
		WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	asp = start(t, Config{Role: RoleASP, Transport: kind,
		Peers: []Peer{{Name: "sg", Dial: sg.Addr(), ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{1}}}},
		append([]Option{WithBackoff(10*time.Millisecond, 100*time.Millisecond)}, aspOpts...)...)
	waitState(t, asp, "sg", "active")
	waitState(t, sg, "asp1", "active")
	return sg, asp
}

// sendSeq sends n messages per SLS (0..slsCount-1) with a sequence number
// in the payload, retrying while a failover leaves no active association.
func sendSeq(t *testing.T, e *Endpoint, opc, dpc mtp.PointCode, slsCount, n int, onHalf func()) {
	t.Helper()
	for i := 0; i < n; i++ {
		if i == n/2 && onHalf != nil {
			onHalf()
		}
		for sls := 0; sls < slsCount; sls++ {
			m := &mtp.Message{Label: mtp.Label{OPC: opc, DPC: dpc, SI: mtp.SIISUP, NI: 2, SLS: uint8(sls)},
				Payload: []byte{byte(sls), byte(i >> 8), byte(i), 0xAA, 0xBB}}
			deadline := time.Now().Add(waitLimit)
			for {
				err := e.Transfer(m)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("transfer %d/%d: %v", sls, i, err)
					return
				}
				time.Sleep(time.Millisecond) // waiting for a reconnect; no event to wait on per message
			}
		}
	}
}

// collectSeq reads indications until every SLS has delivered its last
// sequence number, checking labels and strict per-SLS increase. It returns
// how many messages arrived.
func collectSeq(t *testing.T, e *Endpoint, opc, dpc mtp.PointCode, slsCount, n int, allowGaps bool) int {
	t.Helper()
	last := map[int]int{}
	got := 0
	deadline := time.After(waitLimit)
	for len(last) < slsCount || !allDone(last, n) {
		select {
		case m := <-e.Indications():
			if m.OPC != opc || m.DPC != dpc || m.SI != mtp.SIISUP || m.NI != 2 || len(m.Payload) != 5 {
				t.Fatalf("bad indication %v %x", m.Label, m.Payload)
			}
			sls := int(m.SLS)
			if int(m.Payload[0]) != sls {
				t.Fatalf("payload SLS %d under label SLS %d", m.Payload[0], sls)
			}
			seq := int(m.Payload[1])<<8 | int(m.Payload[2])
			prev, seen := last[sls]
			if !seen {
				prev = -1
			}
			if seq <= prev || (!allowGaps && seq != prev+1) {
				t.Fatalf("SLS %d: seq %d after %d", sls, seq, prev)
			}
			last[sls] = seq
			got++
		case <-deadline:
			keys := make([]int, 0, len(last))
			for k := range last {
				keys = append(keys, k)
			}
			sort.Ints(keys)
			t.Fatalf("timed out: got %d messages; last per SLS %v", got, last)
		}
	}
	return got
}

func allDone(last map[int]int, n int) bool {
	for _, v := range last {
		if v != n-1 {
			return false
		}
	}
	return true
}

// fakeClock fires timers only when Advance is called.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan time.Duration // if set, told each timer's duration
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	if c.added != nil {
		select {
		case c.added <- d:
		default: // nobody is watching any more
		}
	}
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves time forward and runs, in order, the timers that fall due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}

// rawPeer is a hand-driven M3UA peer on a bare transport association, for
// tests that need a peer misbehaving in a precise way.
type rawPeer struct {
	t    *testing.T
	c    transport.Conn
	msgs chan rawMsg
	// silent: BEATs are not answered (by default they are, as a live peer
	// does, so that the endpoint's heartbeat keeps the association up).
	silent atomic.Bool
}

// quiet stops the automatic BEAT ACKs (tests of the heartbeat itself).
func (p *rawPeer) quiet() *rawPeer { p.silent.Store(true); return p }

type rawMsg struct {
	b      []byte
	stream uint16
}

func newRawPeer(t *testing.T, c transport.Conn) *rawPeer {
	p := &rawPeer{t: t, c: c, msgs: make(chan rawMsg, 64)}
	go func() {
		defer close(p.msgs)
		buf := make([]byte, 65536)
		for {
			n, st, _, err := c.ReadMsg(buf)
			if err != nil {
				return
			}
			b := append([]byte(nil), buf[:n]...)
			if n >= 4 && b[2] == classASPSM && b[3] == messages.MsgTypeHeartbeat && !p.silent.Load() {
				if m, err := messages.ParseHeartbeat(b); err == nil {
					_ = c.WriteMsg(marshal(messages.NewHeartbeatAck(m.HeartbeatData)), st, transport.PPIDM3UA)
				}
			}
			p.msgs <- rawMsg{b, st}
		}
	}()
	t.Cleanup(func() { _ = c.Close() })
	return p
}

func (p *rawPeer) send(b []byte, stream uint16) {
	p.t.Helper()
	if err := p.c.WriteMsg(b, stream, transport.PPIDM3UA); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next message of class/type, skipping others (NTFY etc.).
func (p *rawPeer) next(class, typ uint8) []byte {
	p.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("association closed while waiting for class %d type %d", class, typ)
			}
			if m.b[2] == class && m.b[3] == typ {
				return m.b
			}
		case <-deadline:
			p.t.Fatalf("timed out waiting for class %d type %d", class, typ)
		}
	}
}

// closed waits for the peer to end the association.
func (p *rawPeer) closed() {
	p.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case _, ok := <-p.msgs:
			if !ok {
				return
			}
		case <-deadline:
			p.t.Fatal("association not closed")
		}
	}
}

func dialRaw(t *testing.T, to netip.AddrPort, opts ...transport.Option) *rawPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := transport.Dial(ctx, transport.KindUDP, to, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return newRawPeer(t, c)
}
