package gateway

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

// udpRelay forwards SCTP-over-UDP datagrams between its clients and a target.
// With drop set it is a black hole: to each side the other has hung.
type udpRelay struct {
	ln     *net.UDPConn
	target *net.UDPAddr
	drop   atomic.Bool
	mu     sync.Mutex
	up     map[netip.AddrPort]*net.UDPConn
}

func newUDPRelay(t *testing.T, target netip.AddrPort) *udpRelay {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &udpRelay{ln: ln, target: net.UDPAddrFromAddrPort(target), up: map[netip.AddrPort]*net.UDPConn{}}
	t.Cleanup(func() {
		_ = ln.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.up {
			_ = c.Close()
		}
	})
	go r.run()
	return r
}

func (r *udpRelay) addr() netip.AddrPort { return r.ln.LocalAddr().(*net.UDPAddr).AddrPort() }

func (r *udpRelay) run() {
	buf := make([]byte, 65536)
	for {
		n, from, err := r.ln.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if r.drop.Load() {
			continue
		}
		r.mu.Lock()
		c := r.up[from]
		if c == nil {
			if c, err = net.DialUDP("udp", nil, r.target); err != nil {
				r.mu.Unlock()
				continue
			}
			r.up[from] = c
			go r.back(c, from)
		}
		r.mu.Unlock()
		_, _ = c.Write(buf[:n])
	}
}

func (r *udpRelay) back(c *net.UDPConn, client netip.AddrPort) {
	buf := make([]byte, 65536)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if !r.drop.Load() {
			_, _ = r.ln.WriteToUDPAddrPort(buf[:n], client)
		}
	}
}

// TestHungPeerPausesItsDestination: two gateways on the default liveness
// settings, B reaching A through a relay. When the relay stops passing
// anything (B hung, as seen from A), A declares B down within seconds,
// pauses B's point code and refuses an outseize to it with "destination
// unavailable" before any IAM; when traffic passes again, B reconnects, the
// destination resumes and a call to it completes.
func TestHungPeerPausesItsDestination(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	mk := func(own, peer mtp.PointCode, m3 m3ua.Config) *testGateway {
		ev := make(chan stack.Event, 4096)
		cfg := Config{Stack: stack.Config{OPC: own, NI: 2, ResetOnStart: true,
			Groups: []stack.Group{{Name: "peer", DPC: peer, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 8}}}}},
			M3UA: m3}
		g, err := New(cfg, func(e stack.Event) { ev <- e }, WithM3UAOptions(m3ua.WithBackoff(50*time.Millisecond, 500*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = g.Wait() }()
		return &testGateway{Gateway: g, events: ev}
	}
	a := mk(1, 2, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []m3ua.Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{2}}}})
	relay := newUDPRelay(t, a.Endpoint.Addr())
	b := mk(2, 1, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP,
		Peers: []m3ua.Peer{{Name: "a", Dial: relay.addr(), DPCs: []mtp.PointCode{1}}}})
	for _, g := range []*testGateway{a, b} {
		g.waitAlarm(t, func(al stack.Alarm) bool { return al.Kind == stack.AlarmDestinationUnavailable && al.Cleared })
		g.waitState(t, "idle", 8)
	}
	stopB := b.drain()
	defer stopB()
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")

	relay.drop.Store(true)
	t0 := time.Now()
	a.waitAlarm(t, func(al stack.Alarm) bool {
		return al.Kind == stack.AlarmDestinationUnavailable && !al.Cleared && al.PC == 2
	})
	detected := time.Since(t0)
	t.Logf("hung peer: destination paused after %v", detected.Round(time.Millisecond))
	if detected > 8*time.Second {
		t.Errorf("paused after %v; the defaults promise 3 to 4 s", detected)
	}
	a.Stack.Submit(stack.Outseize{Tag: 1, DPC: 2, Called: called})
	if r := a.result(t, 1); r.Status != stack.StatusDestinationUnavailable {
		t.Fatalf("outseize to the paused destination: status %v", r.Status)
	}

	relay.drop.Store(false)
	t1 := time.Now()
	a.waitAlarm(t, func(al stack.Alarm) bool {
		return al.Kind == stack.AlarmDestinationUnavailable && al.Cleared && al.PC == 2
	})
	t.Logf("resumed %v after the peer answered again", time.Since(t1).Round(time.Millisecond))
	a.Stack.Submit(stack.Outseize{Tag: 2, DPC: 2, Called: called})
	if r := a.result(t, 2); r.Status != stack.StatusOK {
		t.Fatalf("outseize after resume: status %v", r.Status)
	}
	for {
		if _, ok := a.next(t).(stack.Answered); ok {
			break
		}
	}
}
