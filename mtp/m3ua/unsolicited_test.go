package m3ua

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// activeASPOnRawSG brings an ASP to ACTIVE against a hand-driven SG.
func activeASPOnRawSG(t *testing.T) (*Endpoint, *rawPeer) {
	t.Helper()
	ln, err := transport.Listen(transport.KindUDP, netip.AddrPortFrom(lo, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP,
		Peers: []Peer{{Name: "sg", Dial: ln.Addr(), RoutingContexts: []uint32{1}, DPCs: []mtp.PointCode{2}}}})
	ctx, cancel := contextWithTimeout(waitLimit)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := newRawPeer(t, c)
	p.next(classASPSM, 1)
	p.send(marshal(messages.NewAspUpAck(nil, nil)), 0)
	p.next(classASPTM, 1)
	p.send(marshal(messages.NewAspActiveAck(nil, params.NewRoutingContext(1), nil)), 0)
	waitState(t, asp, "sg", "active")
	return asp, p
}

// waitReason waits for the peer "sg" to reach state for reason (earlier
// state events with other reasons stay in the backlog).
func waitReason(t *testing.T, e *Endpoint, state, reason string) {
	t.Helper()
	waitEvent(t, e, state+" by "+reason, func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.Peer == "sg" && ps.State == state && ps.Reason == reason
	})
}

// sendOn sends DATA on one association, bypassing the routing table (whose
// changeover would hold the message).
func sendOn(e *Endpoint, peer string) error {
	return e.Peer(peer).Send(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: mtp.SIISUP, SLS: 1}, Payload: []byte{1, 0, 9}})
}

func transferTo2(e *Endpoint) error {
	return e.Transfer(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: mtp.SIISUP, SLS: 1}, Payload: []byte{1, 0, 9}})
}

// TestUnsolicitedAspInactiveAck: RFC 4666 §4.3.4.4. An ASP Inactive Ack the
// ASP never asked for makes it ASP-INACTIVE: it reports inactive (the MTP
// user pauses the destination), sends no more DATA, and asks for ASP Active
// again; once acknowledged, traffic flows on the same association.
func TestUnsolicitedAspInactiveAck(t *testing.T) {
	asp, p := activeASPOnRawSG(t)
	if err := transferTo2(asp); err != nil {
		t.Fatal(err)
	}
	p.next(classTransfer, 1)

	p.send(marshal(messages.NewAspInactiveAck(params.NewRoutingContext(1), nil)), 0)
	waitReason(t, asp, "inactive", "unsolicited ASP Inactive Ack")
	if err := sendOn(asp, "sg"); !errors.Is(err, ErrNotActive) {
		t.Fatalf("DATA while inactive: %v", err)
	}
	act, err := messages.ParseAspActive(p.next(classASPTM, 1))
	if err != nil {
		t.Fatal(err)
	}
	if rc, _ := u32(act.RoutingContext); rc != 1 {
		t.Fatalf("ASP Active for RC %d", rc)
	}
	p.send(marshal(messages.NewAspActiveAck(nil, params.NewRoutingContext(1), nil)), 0)
	waitState(t, asp, "sg", "active")
	if err := transferTo2(asp); err != nil {
		t.Fatal(err)
	}
	p.next(classTransfer, 1)
	if n := asp.Stats().UnsolicitedAcks.Load(); n != 1 {
		t.Fatalf("unsolicited acks %d", n)
	}
}

// TestUnsolicitedAspDownAck: RFC 4666 §4.3.4.2. An ASP Down Ack the ASP
// never asked for makes it ASP-DOWN: it reports down, sends no DATA, and
// returns to its previous state (ACTIVE) with ASP Up and ASP Active.
func TestUnsolicitedAspDownAck(t *testing.T) {
	asp, p := activeASPOnRawSG(t)
	p.send(marshal(messages.NewAspDownAck(nil)), 0)
	waitReason(t, asp, "down", "unsolicited ASP Down Ack")
	if asp.Peer("sg").Available() {
		t.Fatal("still available after ASP Down Ack")
	}
	if err := sendOn(asp, "sg"); !errors.Is(err, ErrNotActive) {
		t.Fatalf("DATA while down: %v", err)
	}
	p.next(classASPSM, 1)
	p.send(marshal(messages.NewAspUpAck(nil, nil)), 0)
	p.next(classASPTM, 1)
	p.send(marshal(messages.NewAspActiveAck(nil, params.NewRoutingContext(1), nil)), 0)
	waitState(t, asp, "sg", "active")
	if err := transferTo2(asp); err != nil {
		t.Fatal(err)
	}
	p.next(classTransfer, 1)
	if asp.Stats().Reconnects.Load() != 0 {
		t.Fatal("the association was replaced; it should have stayed")
	}
}
