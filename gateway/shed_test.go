package gateway

import (
	"net/netip"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/sprc"
)

// TestEdgeSheddingAtInboundLevel2: the inbound pump drops IAM and SAM before
// they are queued, reading only the type octet, and lets everything else in.
func TestEdgeSheddingAtInboundLevel2(t *testing.T) {
	cfg := Config{
		Stack: stack.Config{OPC: 1, Groups: []stack.Group{{Name: "b", DPC: 2, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 4}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"),
			Peers: []m3ua.Peer{{Name: "b", From: netip.MustParseAddr("127.0.0.1"), DPCs: []mtp.PointCode{2}}}},
	}
	g, err := New(cfg, func(stack.Event) {}, WithCongestionControl(sprc.Default, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	msg := func(typ isup.MessageType, si uint8) mtp.Message {
		return mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: si}, Payload: []byte{1, 0, byte(typ)}}
	}
	if g.shed(msg(isup.IAM, 5)) {
		t.Fatal("shed without congestion")
	}
	g.Control.Probe(sprc.Inbound, 12*time.Second) // inbound level 2
	for typ, want := range map[isup.MessageType]bool{isup.IAM: true, isup.SAM: true, isup.ACM: false, isup.REL: false, isup.RLC: false} {
		if got := g.shed(msg(typ, 5)); got != want {
			t.Errorf("%s shed = %v, want %v", typ, got, want)
		}
	}
	if g.shed(msg(isup.IAM, 3)) || g.shed(mtp.Message{Label: mtp.Label{SI: 5}, Payload: []byte{1}}) {
		t.Fatal("shed a non-ISUP or truncated message instead of passing it on for the stack to count")
	}
	if n := g.Control.Snapshot().InboundShed; n != 2 {
		t.Fatalf("counted %d sheds, want 2", n)
	}
}

// An IAM shed at the edge is reported to OnIAMRefused with its OPC and CIC
// (read from the first two octets, no decode); a SAM shed is not an IAM.
func TestEdgeShedIAMIsReported(t *testing.T) {
	cfg := Config{
		Stack: stack.Config{OPC: 1, Groups: []stack.Group{{Name: "b", DPC: 2, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 400}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"),
			Peers: []m3ua.Peer{{Name: "b", From: netip.MustParseAddr("127.0.0.1"), DPCs: []mtp.PointCode{2}}}},
	}
	var got []stack.RefusedIAM
	g, err := New(cfg, func(stack.Event) {}, WithCongestionControl(sprc.Default, nil, nil),
		OnIAMRefused(func(r stack.RefusedIAM) { got = append(got, r) }))
	if err != nil {
		t.Fatal(err)
	}
	g.Control.Probe(sprc.Inbound, 12*time.Second)                                                             // inbound level 2
	g.shed(mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: 5}, Payload: []byte{0x2C, 0x01, byte(isup.IAM)}}) // CIC 300
	g.shed(mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: 5}, Payload: []byte{1, 0, byte(isup.SAM)}})
	if len(got) != 1 || got[0].OPC != 2 || got[0].CIC != 300 || got[0].Cause != 0 || got[0].Reason == "" {
		t.Fatalf("reported %+v, want one IAM from 2 on CIC 300 without a cause", got)
	}
}

// TestEdgeLeavesAnUnavailableDestinationToTheLoop: at outbound congestion
// the edge refuses new calls with 0x0C whatever their destination, except
// one the loop answers as unavailable (here not yet resumed by MTP): that
// is left to the loop, whose answer is 0x0102, and no congestion refusal
// is counted for it.
func TestEdgeLeavesAnUnavailableDestinationToTheLoop(t *testing.T) {
	cfg := Config{
		Stack: stack.Config{OPC: 1, AwaitResume: true, Groups: []stack.Group{{Name: "b", DPC: 2, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 4}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"),
			Peers: []m3ua.Peer{{Name: "b", From: netip.MustParseAddr("127.0.0.1"), DPCs: []mtp.PointCode{2}}}},
	}
	g, err := New(cfg, func(stack.Event) {}, WithCongestionControl(sprc.Default, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	g.Control.Probe(sprc.Outbound, 12*time.Second) // outbound level 2
	if !g.Stack.Closed(2, "") || !g.Stack.Closed(0, "b") {
		t.Fatal("point code 2 (route b) not closed before MTP resumed it")
	}
	if g.Stack.Closed(3, "") {
		t.Fatal("an unconfigured point code reported closed")
	}
	before := g.Control.Snapshot().Refused[sprc.RefuseOutboundCongestion]
	for _, c := range []struct {
		dpc   mtp.PointCode
		route string
	}{{2, ""}, {0, "b"}} {
		if st, decided, _ := g.edgeAdmit(c.dpc, c.route); decided {
			t.Errorf("edge decided %v for unavailable destination %v/%q; want it left to the loop (0x0102)", st, c.dpc, c.route)
		}
	}
	if after := g.Control.Snapshot().Refused[sprc.RefuseOutboundCongestion]; after != before {
		t.Errorf("congestion refusals counted %d -> %d for calls to an unavailable destination", before, after)
	}
}
