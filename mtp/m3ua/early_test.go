package m3ua

import (
	"net/netip"
	"testing"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
)

// TestDataBeforeActiveAck: a peer sends DATA right after its ASP Active Ack, on
// another stream, so the DATA may arrive first. It is held, not refused, and
// delivered in order once the Ack is in.
func TestDataBeforeActiveAck(t *testing.T) {
	ln, err := transport.Listen(transport.KindUDP, netip.AddrPortFrom(lo, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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
	data := func(sls uint8) []byte {
		return appendData(nil, &mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: 5, SLS: sls}, Payload: []byte{sls, 0, 0x09, 0}}, 1, true, 0, false)
	}
	for i := uint8(1); i <= 3; i++ {
		p.send(data(i), 1) // overtakes the Ack
	}
	// A BEAT on the same stream is handled after those DATA: its BEAT ACK proves
	// the ASP has seen them before the ASP Active Ack is sent.
	p.send(marshal(messages.NewHeartbeat(params.NewHeartbeatData([]byte("order")))), 1)
	p.next(classASPSM, 6)
	p.send(marshal(messages.NewAspActiveAck(nil, params.NewRoutingContext(1), nil)), 0)
	for i := uint8(4); i <= 5; i++ {
		p.send(data(i), 1)
	}
	for want := uint8(1); want <= 5; want++ {
		select {
		case m := <-asp.Indications():
			if m.SLS != want || m.OPC != 2 {
				t.Fatalf("indication %d: got %+v", want, m.Label)
			}
		case <-ctx.Done():
			t.Fatalf("DATA %d never delivered (ERR sent: %d)", want, asp.Stats().ErrorsSent(ErrUnexpectedMessage))
		}
	}
	if n := asp.Stats().ErrorsSent(ErrUnexpectedMessage); n != 0 {
		t.Fatalf("%d DATA refused as unexpected", n)
	}
}
