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

// TestAspUpFromActiveASPGetsAckAndUnexpected: RFC 4666 §4.3.4.1. An ASP Up
// from an ASP the SG holds ACTIVE is answered with ASP Up Ack and ERR
// "Unexpected Message", and the ASP is inactive at the SG from then on.
func TestAspUpFromActiveASPGetsAckAndUnexpected(t *testing.T) {
	sg := openSG(t)
	p := dialRaw(t, sg.Addr())
	up := marshal(messages.NewAspUp(params.NewAspIdentifier(7), nil))
	p.send(up, 0)
	p.next(classASPSM, 4)
	p.send(marshal(messages.NewAspActive(nil, params.NewRoutingContext(100), nil)), 0)
	p.next(classASPTM, 3)
	waitState(t, sg, "asp1", "active")
	if n := sg.Stats().ErrorsSent(ErrUnexpectedMessage); n != 0 {
		t.Fatalf("ERR unexpected sent %d times before the second ASP Up", n)
	}

	p.send(up, 0)
	p.next(classASPSM, 4)
	if got := errCode(t, p.next(classMGMT, 0)); got != ErrUnexpectedMessage {
		t.Fatalf("ERR 0x%02x, want 0x%02x", got, ErrUnexpectedMessage)
	}
	waitState(t, sg, "asp1", "inactive")
	if sg.Peer("asp1").Available() {
		t.Fatal("the SG still sends DATA to an ASP that said ASP Up")
	}
	// From ASP-INACTIVE an ASP Up is only acknowledged (no further action).
	p.send(up, 0)
	p.next(classASPSM, 4)
	p.send(marshal(messages.NewHeartbeat(params.NewHeartbeatData([]byte("sync")))), 0)
	p.next(classASPSM, 6)
	if n := sg.Stats().ErrorsSent(ErrUnexpectedMessage); n != 1 {
		t.Fatalf("ERR unexpected sent %d times, want 1", n)
	}
}

// TestRoutingContextCheckedWhenNoneConfigured: RFC 4666 §3.8.1. With no
// routing context configured, DATA without one is delivered, but DATA naming
// one the peer never established is refused with ERR "Invalid Routing
// Context" carrying that RC, on the SG side (nothing can be established:
// ASP Active with an RC is refused) and on the ASP side (only the RCs of the
// SG's ASP Active Ack are valid).
func TestRoutingContextCheckedWhenNoneConfigured(t *testing.T) {
	data := func(rc uint32, hasRC bool) []byte {
		return appendData(nil, &mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: 5, SLS: 3}, Payload: []byte{1, 0, 9}}, rc, hasRC, 0, false)
	}
	errRC := func(t *testing.T, b []byte) uint32 {
		t.Helper()
		m, err := messages.ParseError(b)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := u32(m.ErrorCode); ErrorCode(v) != ErrInvalidRC {
			t.Fatalf("ERR 0x%02x, want 0x%02x", v, ErrInvalidRC)
		}
		rc, ok := u32(m.RoutingContext)
		if !ok {
			t.Fatal("ERR Invalid Routing Context without the RC")
		}
		return rc
	}
	t.Run("sg", func(t *testing.T) {
		sg := openSG(t, Peer{Name: "b", From: lo})
		p := dialRaw(t, sg.Addr())
		upAndActive(p, marshal(messages.NewAspUp(nil, nil)))
		p.send(data(55, true), 1)
		if rc := errRC(t, p.next(classMGMT, 0)); rc != 55 {
			t.Fatalf("ERR names RC %d", rc)
		}
		p.send(data(0, false), 1)
		if m := nextIndication(t, sg); m.SLS != 3 || m.Peer != "b" {
			t.Fatalf("indication %+v", m)
		}
	})
	t.Run("asp", func(t *testing.T) {
		ln, err := transport.Listen(transport.KindUDP, netip.AddrPortFrom(lo, 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP, Peers: []Peer{{Name: "sg", Dial: ln.Addr()}}})
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
		p.send(marshal(messages.NewAspActiveAck(nil, params.NewRoutingContext(9), nil)), 0)
		waitState(t, asp, "sg", "active")
		p.send(data(10, true), 1)
		if rc := errRC(t, p.next(classMGMT, 0)); rc != 10 {
			t.Fatalf("ERR names RC %d", rc)
		}
		p.send(data(9, true), 1)
		if m := nextIndication(t, asp); m.SLS != 3 {
			t.Fatalf("indication %+v", m)
		}
	})
}

func nextIndication(t *testing.T, e *Endpoint) mtp.Message {
	t.Helper()
	select {
	case m := <-e.Indications():
		return m
	case <-time.After(waitLimit):
		t.Fatal("no indication")
		return mtp.Message{}
	}
}
