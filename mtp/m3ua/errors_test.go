package m3ua

import (
	"context"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

func errCode(t *testing.T, b []byte) ErrorCode {
	t.Helper()
	m, err := messages.ParseError(b)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := u32(m.ErrorCode)
	if !ok {
		t.Fatal("ERR without code")
	}
	return ErrorCode(v)
}

func openSG(t *testing.T, peers ...Peer) *Endpoint {
	if len(peers) == 0 {
		peers = []Peer{{Name: "asp1", From: lo, ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}}}
	}
	return start(t, Config{Role: RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), Peers: peers})
}

// TestMalformedGetERRAndAssociationStays: each bad message gets the ERR
// RFC 4666 names for it and is counted; afterwards the same association
// still completes ASP Up and ASP Active and carries DATA.
func TestMalformedGetERRAndAssociationStays(t *testing.T) {
	sg := openSG(t)
	p := dialRaw(t, sg.Addr())
	data := marshal(messages.NewData(nil, params.NewRoutingContext(100),
		params.NewProtocolData(2, 1, 5, 2, 0, 3, []byte{9, 9}), nil))
	badVersion := append([]byte(nil), data...)
	badVersion[0] = 2
	badLength := append([]byte(nil), data...)
	binary.BigEndian.PutUint32(badLength[4:], uint32(len(data)+4))
	noPD := marshal(messages.NewData(nil, params.NewRoutingContext(100), nil, nil))
	cases := []struct {
		name   string
		b      []byte
		stream uint16
		want   ErrorCode
	}{
		{"version 2", badVersion, 0, ErrInvalidVersion},
		{"class 5", []byte{1, 0, 5, 1, 0, 0, 0, 8}, 0, ErrUnsupportedClass},
		{"class 16 (aliases NTFY in go-m3ua)", []byte{1, 0, 16, 1, 0, 0, 0, 8}, 0, ErrUnsupportedClass},
		{"RKM", []byte{1, 0, 9, 1, 0, 0, 0, 8}, 0, ErrUnsupportedClass},
		{"ASPSM type 7", []byte{1, 0, 3, 7, 0, 0, 0, 8}, 0, ErrUnsupportedType},
		{"length field", badLength, 1, ErrParamField},
		{"DATA on stream 0", data, 0, ErrInvalidStream},
		{"DATA before ASP Active", data, 1, ErrUnexpectedMessage},
		{"ASP Active before ASP Up", marshal(messages.NewAspActive(nil, params.NewRoutingContext(100), nil)), 0, ErrUnexpectedMessage},
		{"DUNA from an ASP", marshal(messages.NewDestinationUnavailable(nil, nil, params.NewAffectedPointCode(5), nil)), 0, ErrUnexpectedMessage},
	}
	for _, c := range cases {
		p.send(c.b, c.stream)
		if got := errCode(t, p.next(classMGMT, 0)); got != c.want {
			t.Fatalf("%s: ERR 0x%02x, want 0x%02x", c.name, got, c.want)
		}
	}
	// Still up: ASP Up, then a DAUD without Affected PC and a DATA without
	// Protocol Data are "missing parameter".
	p.send(marshal(messages.NewAspUp(params.NewAspIdentifier(7), nil)), 0)
	p.next(classASPSM, 4)
	p.send(marshal(messages.NewAspActive(params.NewTrafficModeType(5), params.NewRoutingContext(100), nil)), 0)
	if got := errCode(t, p.next(classMGMT, 0)); got != ErrUnsupportedTrafficMode {
		t.Fatalf("traffic mode 5: ERR 0x%02x", got)
	}
	p.send(marshal(messages.NewAspActive(params.NewTrafficModeType(2), params.NewRoutingContext(100), nil)), 0)
	p.next(classASPTM, 3)
	p.send(marshal(messages.NewDestinationStateAudit(nil, nil, nil, nil)), 0)
	if got := errCode(t, p.next(classMGMT, 0)); got != ErrMissingParam {
		t.Fatalf("DAUD without APC: ERR 0x%02x", got)
	}
	p.send(noPD, 1)
	if got := errCode(t, p.next(classMGMT, 0)); got != ErrMissingParam {
		t.Fatalf("DATA without PD: ERR 0x%02x", got)
	}
	p.send(data, 1)
	select {
	case m := <-sg.Indications():
		if m.OPC != 2 || m.DPC != 1 || m.SLS != 3 || m.Peer != "asp1" {
			t.Fatalf("indication %v", m)
		}
	case <-time.After(waitLimit):
		t.Fatal("no DATA indication after the bad messages")
	}
	st := sg.Stats()
	for _, c := range []ErrorCode{ErrInvalidVersion, ErrUnsupportedType, ErrInvalidStream, ErrUnexpectedMessage, ErrMissingParam} {
		if st.ErrorsSent(c) == 0 {
			t.Fatalf("ERR 0x%02x not counted: %v", c, st.Snapshot())
		}
	}
	if st.ErrorsSent(ErrUnsupportedClass) != 3 || st.Malformed.Load() < 6 || st.Unexpected.Load() < 3 {
		t.Fatalf("counters %v", st.Snapshot())
	}
	// An ERR is never answered with an ERR, even a malformed one.
	p.send([]byte{1, 0, 0, 0, 0, 0, 0, 8}, 0)
	p.send(marshal(messages.NewHeartbeat(params.NewHeartbeatData([]byte("ping")))), 0)
	if b := p.next(classASPSM, 6); string(b[len(b)-4:]) != "ping" {
		t.Fatalf("BEAT ACK %x", b)
	}
	if st.ErrorsSent(ErrParamField) != 1 {
		t.Fatalf("ERR answered: %v", st.Snapshot())
	}
}

// TestUnknownPeersRefused: an address with no configured peer gets no
// association at all (its INIT is dropped by the listener's accept
// filter); an unknown ASP identifier gets ERR 0x0F, a missing one 0x0E and
// an unknown routing context 0x19; each is counted and the first two
// associations are closed.
func TestUnknownPeersRefused(t *testing.T) {
	sg := openSG(t, Peer{Name: "asp1", From: netip.MustParseAddr("127.0.0.1"), ASPID: 7, HasASPID: true, RoutingContexts: []uint32{100}})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	stranger, err := transport.Dial(ctx, transport.KindUDP, sg.Addr(), transport.WithLocalAddr(netip.MustParseAddrPort("127.0.0.2:0")))
	cancel()
	if err == nil {
		_ = stranger.Close()
		t.Fatal("an association from an unconfigured address was set up")
	}

	for _, c := range []struct {
		up   []byte
		want ErrorCode
	}{
		{marshal(messages.NewAspUp(params.NewAspIdentifier(8), nil)), ErrInvalidASPID},
		{marshal(messages.NewAspUp(nil, nil)), ErrASPIDRequired},
	} {
		p := dialRaw(t, sg.Addr())
		p.send(c.up, 0)
		if got := errCode(t, p.next(classMGMT, 0)); got != c.want {
			t.Fatalf("ERR 0x%02x want 0x%02x", got, c.want)
		}
		p.closed()
	}

	p := dialRaw(t, sg.Addr())
	p.send(marshal(messages.NewAspUp(params.NewAspIdentifier(7), nil)), 0)
	p.next(classASPSM, 4)
	p.send(marshal(messages.NewAspActive(nil, params.NewRoutingContext(555), nil)), 0)
	if got := errCode(t, p.next(classMGMT, 0)); got != ErrInvalidRC {
		t.Fatalf("unknown RC: ERR 0x%02x", got)
	}
	if n := sg.Stats().RefusedPeers.Load(); n != 3 {
		t.Fatalf("refused %d, want 3", n)
	}
}

// TestTackRetransmission: a silent SG makes the ASP resend ASP Up when
// T(ack) expires (fake clock, no waiting); once answered it goes on to
// ASP Active and ACTIVE.
func TestTackRetransmission(t *testing.T) {
	ln, err := transport.Listen(transport.KindUDP, netip.AddrPortFrom(lo, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	clk := newFakeClock()
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP,
		Peers: []Peer{{Name: "sg", Dial: ln.Addr(), ASPID: 3, HasASPID: true, RoutingContexts: []uint32{1}}}},
		WithClock(clk), WithTack(2*time.Second))
	ctx, cancel := contextWithTimeout(waitLimit)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := newRawPeer(t, c)
	p.next(classASPSM, 1)
	clk.Advance(2 * time.Second)
	p.next(classASPSM, 1)
	if n := asp.Stats().TackRetransmits.Load(); n != 1 {
		t.Fatalf("retransmits %d", n)
	}
	p.send(marshal(messages.NewAspUpAck(nil, nil)), 0)
	act, err := messages.ParseAspActive(p.next(classASPTM, 1))
	if err != nil {
		t.Fatal(err)
	}
	if rc, _ := u32(act.RoutingContext); rc != 1 {
		t.Fatalf("ASP Active RC %d", rc)
	}
	if tm, _ := u32(act.TrafficModeType); tm != uint32(mtp.Loadshare) {
		t.Fatalf("traffic mode %d", tm)
	}
	p.send(marshal(messages.NewAspActiveAck(nil, params.NewRoutingContext(1), nil)), 0)
	waitState(t, asp, "sg", "active")
}

// TestBeatTimeoutRestartsAssociation: with heartbeat on, a peer that
// answers one BEAT but not the next is declared lost after the timeout
// (fake clock), the association is dropped and counted.
func TestBeatTimeoutRestartsAssociation(t *testing.T) {
	ln, err := transport.Listen(transport.KindUDP, netip.AddrPortFrom(lo, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	clk := newFakeClock()
	asp := start(t, Config{Role: RoleASP, Transport: transport.KindUDP,
		Peers: []Peer{{Name: "sg", Dial: ln.Addr()}}},
		WithClock(clk), WithHeartbeat(time.Second, 2*time.Second))
	ctx, cancel := contextWithTimeout(waitLimit)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := newRawPeer(t, c).quiet()
	p.next(classASPSM, 1)
	p.send(marshal(messages.NewAspUpAck(nil, nil)), 0)
	p.next(classASPTM, 1)
	p.send(marshal(messages.NewAspActiveAck(nil, nil, nil)), 0)
	waitState(t, asp, "sg", "active")

	clk.Advance(time.Second)
	beat, err := messages.ParseHeartbeat(p.next(classASPSM, 3))
	if err != nil {
		t.Fatal(err)
	}
	p.send(marshal(messages.NewHeartbeatAck(beat.HeartbeatData)), 0)
	// Barrier: one reader handles stream 0 in order, so when our own BEAT is
	// answered, the BEAT ACK before it has been processed.
	p.send(marshal(messages.NewHeartbeat(params.NewHeartbeatData([]byte("sync")))), 0)
	p.next(classASPSM, 6)
	clk.Advance(time.Second)
	p.next(classASPSM, 3) // not answered
	clk.Advance(time.Second)
	if asp.Stats().BeatTimeouts.Load() != 0 {
		t.Fatal("timed out early")
	}
	clk.Advance(time.Second)
	ev := waitEvent(t, asp, "down", func(ev mtp.Event) bool {
		ps, ok := ev.(mtp.PeerState)
		return ok && ps.State == "down"
	}).(mtp.PeerState)
	if ev.Reason != "heartbeat timeout" || asp.Stats().BeatTimeouts.Load() != 1 {
		t.Fatalf("%v, timeouts %d", ev, asp.Stats().BeatTimeouts.Load())
	}
	p.closed()
}
