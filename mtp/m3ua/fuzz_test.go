package m3ua

import (
	"bytes"
	"context"
	"net/netip"
	"sync"
	"testing"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// sinkConn is a transport.Conn that records what is written and never
// delivers anything: the fuzz target calls the receive path directly.
type sinkConn struct {
	mu  sync.Mutex
	out [][]byte
}

func (c *sinkConn) ReadMsg([]byte) (int, uint16, uint32, error) { select {} }
func (c *sinkConn) WriteMsg(b []byte, _ uint16, _ uint32) error {
	c.mu.Lock()
	if len(c.out) < 64 {
		c.out = append(c.out, append([]byte(nil), b...))
	}
	c.mu.Unlock()
	return nil
}
func (c *sinkConn) OutboundStreams() uint16        { return 16 }
func (c *sinkConn) LocalAddr() netip.AddrPort      { return netip.MustParseAddrPort("127.0.0.1:2905") }
func (c *sinkConn) RemoteAddr() netip.AddrPort     { return netip.MustParseAddrPort("127.0.0.1:2906") }
func (c *sinkConn) Shutdown(context.Context) error { return nil }
func (c *sinkConn) Close() error                   { return nil }
func (c *sinkConn) Kind() transport.Kind           { return transport.KindUDP }

// fuzzSession builds a session in the role and state picked by sel.
func fuzzSession(t testing.TB, sel byte) (*session, *sinkConn) {
	role := []Role{RoleASP, RoleSG, RoleIPSP}[int(sel)%3]
	e, err := New(Config{Role: role, Peers: []Peer{{Name: "p", From: lo, ASPID: 1, HasASPID: sel&8 != 0,
		RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{1}}}}, WithQueues(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	e.cancel() // indications and events are dropped instead of blocking
	c := &sinkConn{}
	s := newSession(e, c, sel&16 != 0)
	s.peer.Store(e.peers[0])
	st := State(int(sel/32) % 3)
	s.local, s.remote = st, st
	s.mu.Lock()
	s.updateTrafficLocked("")
	s.mu.Unlock()
	return s, c
}

func seedMessages() [][]byte {
	pd := params.NewProtocolData(1, 2, 5, 2, 0, 7, []byte{1, 2, 3, 4, 5})
	rc := params.NewRoutingContext(100)
	apc := params.NewAffectedPointCode(1, 0x01000002)
	ms := []messages.M3UA{
		messages.NewData(nil, rc, pd, nil),
		messages.NewData(params.NewNetworkAppearance(3), nil, pd, params.NewCorrelationID(9)),
		messages.NewAspUp(params.NewAspIdentifier(1), nil),
		messages.NewAspUpAck(nil, nil),
		messages.NewAspActive(params.NewTrafficModeType(2), rc, nil),
		messages.NewAspActiveAck(params.NewTrafficModeType(1), rc, nil),
		messages.NewAspInactive(rc, nil),
		messages.NewAspDown(nil),
		messages.NewHeartbeat(params.NewHeartbeatData([]byte{0, 0, 0, 1})),
		messages.NewHeartbeatAck(params.NewHeartbeatData([]byte{0, 0, 0, 1})),
		messages.NewDestinationUnavailable(nil, rc, apc, nil),
		messages.NewDestinationAvailable(nil, nil, apc, nil),
		messages.NewDestinationRestricted(nil, nil, apc, nil),
		messages.NewDestinationStateAudit(nil, rc, apc, nil),
		messages.NewSignallingCongestion(nil, nil, apc, nil, params.NewCongestionIndications(2), nil),
		messages.NewDestinationUserPartUnavailable(nil, nil, apc, params.NewUserCause(5, 2), nil),
		messages.NewNotify(params.NewStatus(0x00020002), nil, rc, nil),
		messages.NewError(params.NewErrorCode(9), nil, nil, nil, params.NewDiagnosticInformation([]byte{1})),
	}
	var out [][]byte
	for _, m := range ms {
		out = append(out, marshal(m))
	}
	return out
}

// FuzzReceive feeds arbitrary bytes to the M3UA receive path (decode and
// dispatch) in every role and state. It must not panic; every message
// either gets handled or is counted; and the DATA fast path must agree
// with go-m3ua's decoder whenever it accepts a message.
func FuzzReceive(f *testing.F) {
	for i, b := range seedMessages() {
		f.Add(byte(i*37), uint16(i%3), b)
	}
	f.Add(byte(0), uint16(0), []byte{1, 0, 0x10, 1, 0, 0, 0, 8}) // class 16 aliases NTFY in messages.Parse
	f.Fuzz(func(t *testing.T, sel byte, stream uint16, b []byte) {
		s, _ := fuzzSession(t, sel)
		before := s.e.stats.Snapshot()
		s.handle(b, stream, transport.PPIDM3UA)
		after := s.e.stats.Snapshot()
		if after["bytes_in"] != before["bytes_in"]+uint64(len(b)) {
			t.Fatalf("bytes not counted")
		}
		checkDataAgainstReference(t, b)
	})
}

func checkDataAgainstReference(t *testing.T, b []byte) {
	class, typ, err := checkHeader(b)
	if err != nil || class != classTransfer || typ != 1 {
		return
	}
	var d dataFields
	mine := decodeData(b, &d)
	ref, theirs := messages.ParseData(b)
	if mine != nil {
		return // stricter than the reference is allowed
	}
	if theirs != nil {
		t.Fatalf("fast path accepted what go-m3ua rejects (%v): %x", theirs, b)
	}
	if ref.ProtocolData == nil {
		t.Fatalf("fast path found Protocol Data go-m3ua did not: %x", b)
	}
	pd, err := ref.ProtocolData.ProtocolData()
	if err != nil {
		t.Fatalf("reference PD: %v", err)
	}
	if uint32(d.OPC) != pd.OriginatingPointCode || uint32(d.DPC) != pd.DestinationPointCode ||
		d.SI != pd.ServiceIndicator || d.NI != pd.NetworkIndicator || d.MP != pd.MessagePriority ||
		d.SLS != pd.SignalingLinkSelection || !bytes.Equal(d.Payload, pd.Data) {
		t.Fatalf("fast path %+v, reference %+v", d, pd)
	}
}
