package m3ua

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp/transport"
)

// TestReconnectBackoffDoubles: an ASP whose SG is not there waits 100, 200,
// 400, 400 ms between attempts (fake clock: each wait is a timer the test
// fires), then connects once the SG listens.
func TestReconnectBackoffDoubles(t *testing.T) {
	// A port that refuses: bind it, note it, free it.
	uc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	target := uc.LocalAddr().(*net.UDPAddr).AddrPort()
	_ = uc.Close()

	clk := newFakeClock()
	clk.added = make(chan time.Duration, 16)
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{{Name: "sg", Dial: target}}},
		WithClock(clk), WithBackoff(100*time.Millisecond, 400*time.Millisecond))
	for _, want := range []time.Duration{100, 200, 400, 400} {
		select {
		case d := <-clk.added:
			if d != want*time.Millisecond {
				t.Fatalf("backoff %v, want %v", d, want*time.Millisecond)
			}
			clk.Advance(d)
		case <-time.After(waitLimit):
			t.Fatal("no reconnect attempt")
		}
	}
	// Now the SG appears on that port; the next attempt succeeds.
	start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: target,
		Peers: []Peer{{Name: "asp", From: netip.MustParseAddr("127.0.0.1")}}})
	for {
		select {
		case d := <-clk.added:
			if d == DefaultTack { // the ASP Up's T(ack): connected
				waitState(t, asp, "sg", "active")
				return
			}
			clk.Advance(d)
		case <-time.After(waitLimit):
			t.Fatal("did not connect")
		}
	}
}
