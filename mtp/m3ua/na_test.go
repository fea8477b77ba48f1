package m3ua

import (
	"testing"

	"github.com/isupgw/isupgw/mtp"
	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// TestWrongNetworkAppearance: DATA with an NA other than the configured one
// gets ERR 0x15 (unit test on the receive path with a recording conn).
func TestWrongNetworkAppearance(t *testing.T) {
	e, err := New(Config{Role: RoleSG, NetworkAppearance: 3, HasNetworkAppearance: true,
		Peers: []Peer{{Name: "p", From: lo, DPCs: []mtp.PointCode{1}}}}, WithQueues(4, 4))
	if err != nil {
		t.Fatal(err)
	}
	c := &sinkConn{}
	s := newSession(e, c, false)
	s.peer.Store(e.peers[0])
	s.remote = StateActive
	s.updateTrafficLocked("")
	pd := params.NewProtocolData(2, 1, 5, 2, 0, 1, []byte{1})
	s.handle(marshal(messages.NewData(params.NewNetworkAppearance(9), nil, pd, nil)), 1, 3)
	s.handle(marshal(messages.NewData(params.NewNetworkAppearance(3), nil, pd, nil)), 1, 3)
	if len(c.out) != 1 || errCode(t, c.out[0]) != ErrInvalidNA {
		t.Fatalf("written %x", c.out)
	}
	if m := <-e.Indications(); m.OPC != 2 || m.DPC != 1 {
		t.Fatalf("%v", m)
	}
}
