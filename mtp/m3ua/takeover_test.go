package m3ua

import (
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// upAndActive brings a raw ASP to ACTIVE at the SG.
func upAndActive(p *rawPeer, up []byte) {
	p.send(up, 0)
	p.next(classASPSM, 4)
	p.send(marshal(messages.NewAspActive(nil, nil, nil)), 0)
	p.next(classASPTM, 3)
}

// TestSecondAssociationDoesNotReplaceALiveOne: an ASP Up without ASP
// Identifier on a second association from the peer's configured address,
// while the first is alive, is refused with ERR "Refused - Management
// Blocking" (RFC 4666 §3.8.1) and that association closed; the first stays
// ACTIVE and keeps carrying DATA. Once the first is declared dead by the
// heartbeat (fake clock), a newcomer is accepted.
func TestSecondAssociationDoesNotReplaceALiveOne(t *testing.T) {
	clk := newFakeClock()
	sg := start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{2}}}},
		WithClock(clk), WithHeartbeat(time.Second, 2*time.Second))
	up := marshal(messages.NewAspUp(nil, nil))
	first := dialRaw(t, sg.Addr()).quiet()
	upAndActive(first, up)
	waitState(t, sg, "b", "active")

	intruder := dialRaw(t, sg.Addr())
	intruder.send(up, 0)
	if got := errCode(t, intruder.next(classMGMT, 0)); got != ErrRefusedMgmtBlocking {
		t.Fatalf("ERR 0x%02x, want 0x%02x", got, ErrRefusedMgmtBlocking)
	}
	intruder.closed()
	if !sg.Peer("b").Available() || sg.Stats().RefusedTakeovers.Load() != 1 {
		t.Fatalf("available %v, refused takeovers %d", sg.Peer("b").Available(), sg.Stats().RefusedTakeovers.Load())
	}
	if err := sg.Transfer(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: mtp.SIISUP, SLS: 3}, Payload: []byte{7}}); err != nil {
		t.Fatal(err)
	}
	first.next(classTransfer, 1)

	// The first association stops answering: two BEAT periods later it is
	// dead, and the next association from that address is taken.
	clk.Advance(time.Second)
	first.next(classASPSM, 3) // BEAT, not answered
	clk.Advance(2 * time.Second)
	waitState(t, sg, "b", "down")
	second := dialRaw(t, sg.Addr())
	upAndActive(second, up)
	waitState(t, sg, "b", "active")
	if n := sg.Stats().RefusedTakeovers.Load(); n != 1 {
		t.Fatalf("refused takeovers %d", n)
	}
}

// TestSameASPRestartingReplacesItsAssociation: an ASP Up carrying the ASP
// Identifier of the live association's ASP is that ASP restarting: it is
// accepted and the old association ends.
func TestSameASPRestartingReplacesItsAssociation(t *testing.T) {
	sg := openSG(t, Peer{Name: "b", From: lo})
	first := dialRaw(t, sg.Addr())
	upAndActive(first, marshal(messages.NewAspUp(params.NewAspIdentifier(9), nil)))
	waitState(t, sg, "b", "active")

	other := dialRaw(t, sg.Addr())
	other.send(marshal(messages.NewAspUp(params.NewAspIdentifier(10), nil)), 0)
	if got := errCode(t, other.next(classMGMT, 0)); got != ErrRefusedMgmtBlocking {
		t.Fatalf("another ASP Identifier: ERR 0x%02x", got)
	}
	other.closed()

	again := dialRaw(t, sg.Addr())
	upAndActive(again, marshal(messages.NewAspUp(params.NewAspIdentifier(9), nil)))
	first.closed()
	waitEvent(t, sg, "b active again", func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.Peer == "b" && ps.State == "active"
	})
	if !sg.Peer("b").Available() {
		t.Fatal("restarted ASP not available")
	}
}
