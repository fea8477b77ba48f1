package m3ua

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// silentAddr is a loopback UDP address nothing listens on (SCTP over UDP
// there gets no answer): a peer configured at a wrong address.
func silentAddr(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// waitCounter polls a counter until it reaches n (bounded: the dial
// timeout is 5 s an attempt, so allow several).
func waitCounter(t *testing.T, what string, get func() uint64, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); get() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed at %d, want %d", what, get(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An association that never comes up is retried, and every retry counts as
// a reconnect: the counter shows a peer at a wrong address.
func TestFailedFirstDialsCountAsReconnects(t *testing.T) {
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP,
		Peers: []Peer{{Name: "sg", Dial: silentAddr(t), ASPID: 7, HasASPID: true, DPCs: []mtp.PointCode{1}}}},
		WithBackoff(10*time.Millisecond, 20*time.Millisecond))
	waitCounter(t, "reconnects", asp.Stats().Reconnects.Load, 2)
	if st := asp.Peer("sg").State(); st != StateDown {
		t.Fatalf("state %s with nobody at the address", st)
	}
}

// Redial moves a peer to a new address: the association comes up there, and
// the endpoint's other association is not disturbed (no state change).
func TestRedialMovesOnePeerOnly(t *testing.T) {
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{{Name: "asp1", From: lo, ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}}}},
		WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	other := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{{Name: "asp1", From: lo, ASPID: 8, HasASPID: true, RoutingContexts: []uint32{200}, DPCs: []mtp.PointCode{2}}}},
		WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	wrong := silentAddr(t)
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{
		{Name: "sg", Dial: wrong, ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{1}},
		{Name: "other", Dial: other.Addr(), ASPID: 8, HasASPID: true, RoutingContexts: []uint32{200}, DPCs: []mtp.PointCode{3}},
	}}, WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	waitState(t, asp, "other", "active")
	backlogMu.Lock()
	backlog[asp] = nil // the events before: "other" coming up
	backlogMu.Unlock()
	waitCounter(t, "reconnects", asp.Stats().Reconnects.Load, 1)
	if got := asp.Peer("sg").DialAddress(); got != wrong {
		t.Fatalf("dial address %s, want %s", got, wrong)
	}

	if err := asp.Redial("sg", sg.Addr()); err != nil {
		t.Fatal(err)
	}
	waitState(t, asp, "sg", "active")
	waitState(t, sg, "asp1", "active")
	if got := asp.Peer("sg").DialAddress(); got != sg.Addr() {
		t.Fatalf("dial address %s after Redial, want %s", got, sg.Addr())
	}
	// The other association saw nothing: no event about it since it came up
	// (those not yet read are taken from the channel too).
	backlogMu.Lock()
	for drained := false; !drained; {
		select {
		case ev := <-asp.Events():
			backlog[asp] = append(backlog[asp], ev)
		default:
			drained = true
		}
	}
	for _, ev := range backlog[asp] {
		if ps, ok := ev.(mtp.PeerState); ok && ps.Peer == "other" {
			t.Errorf("the other association changed: %v", ev)
		}
	}
	backlogMu.Unlock()
	if st := asp.Peer("other").State(); st != StateActive {
		t.Errorf("other association %s", st)
	}

	// The same address again is no change; a peer that connects to us, an
	// unknown one or an invalid address are refused.
	if err := asp.Redial("sg", sg.Addr()); err != nil {
		t.Errorf("redial to the same address: %v", err)
	}
	if asp.Peer("sg").State() != StateActive {
		t.Error("redial to the same address disturbed the association")
	}
	if err := asp.Redial("nobody", sg.Addr()); err == nil {
		t.Error("unknown peer accepted")
	}
	if err := asp.Redial("sg", netip.AddrPort{}); err == nil {
		t.Error("invalid address accepted")
	}
	if err := sg.Redial("asp1", asp.Peer("sg").DialAddress()); err == nil {
		t.Error("a peer that connects to us accepted a dial address")
	}
}
