package m3ua

import (
	"testing"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
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
