package m3ua

import (
	"net/netip"
	"testing"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// TestOverrideTakeover: two ASPs serve routing context 100 in override
// mode. When the second goes active, the SG makes the first inactive with
// NTFY "alternate ASP active"; the first ASP reports itself inactive and
// the SG's traffic to the AS goes to the second only.
func TestOverrideTakeover(t *testing.T) {
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), RouteMode: mtp.Override,
		Peers: []Peer{
			{Name: "asp-a", From: lo, ASPID: 1, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
			{Name: "asp-b", From: lo, ASPID: 2, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{2}},
		}})
	peer := func(id uint32) Peer {
		return Peer{Name: "sg", Dial: sg.Addr(), ASPID: id, HasASPID: true, RoutingContexts: []uint32{100},
			TrafficMode: mtp.Override, DPCs: []mtp.PointCode{1}}
	}
	a := start(t, Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{peer(1)}})
	waitState(t, a, "sg", "active")
	waitState(t, sg, "asp-a", "active")
	b := start(t, Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{peer(2)}})
	waitState(t, b, "sg", "active")
	waitState(t, sg, "asp-b", "active")
	waitEvent(t, a, "asp a inactive by takeover", func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.State == "inactive" && ps.Reason == "alternate ASP active"
	})
	waitEvent(t, sg, "SG sees asp-a inactive", func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.Peer == "asp-a" && ps.State == "inactive" && ps.Reason == "alternate ASP active"
	})
	if a.Peer("sg").Available() {
		t.Fatal("taken-over ASP still offers traffic")
	}
	if sg.Peer("asp-a").Available() || !sg.Peer("asp-b").Available() {
		t.Fatal("SG availability wrong after takeover")
	}
	for sls := range 8 {
		if err := sg.Transfer(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: 5, SLS: uint8(sls)}, Payload: []byte{byte(sls)}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		if m := <-b.Indications(); m.Peer != "sg" {
			t.Fatalf("%v", m)
		}
	}
	if n := len(a.Indications()); n != 0 {
		t.Fatalf("inactive ASP got %d messages", n)
	}
}
