package gateway

import (
	"context"
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

// benchGateway is a gateway that is not started: a refused outseize never
// reaches its loop, so Submit measures the whole refusal path up to the sink.
// Its destination is resumed first (the stack's loop runs only for that):
// the edge leaves calls to an unavailable one to the loop.
func benchGateway(b *testing.B, cfg sprc.Config) *Gateway {
	b.Helper()
	gc := Config{
		Stack: stack.Config{OPC: 1, Groups: []stack.Group{{Name: "b", DPC: 2, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 32}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.MustParseAddrPort("127.0.0.1:0"),
			Peers: []m3ua.Peer{{Name: "b", From: netip.MustParseAddr("127.0.0.1"), DPCs: []mtp.PointCode{2}}}},
	}
	g, err := New(gc, func(stack.Event) {}, WithCongestionControl(cfg, nil, nil))
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = g.Stack.Run(ctx) }()
	g.Stack.MTPEvent(mtp.Resume{PC: 2})
	// A probe behind it in the same inbound queue: once it is through, the
	// loop has taken the resume.
	through := make(chan struct{})
	g.Stack.Probe(stack.Inbound, func(time.Duration) { close(through) })
	<-through
	stop()
	<-done
	if g.Stack.Closed(2, "") {
		b.Fatal("point code 2 not resumed")
	}
	return g
}

// BenchmarkRefusedOutseize is the cost of one outseize refused at the edge
// (go test ./gateway -run '^$' -bench RefusedOutseize -benchmem): at outbound
// level 2 (every call refused, the probes' levels), and by the adaptive
// admission (calls in set-up at the limit), through Submit and through
// Screen. The whole host API path is host's BenchmarkRefusedOutseizeHost.
func BenchmarkRefusedOutseize(b *testing.B) {
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	var req stack.Request = stack.Outseize{Tag: 1, DPC: 2, Called: called}
	run := func(b *testing.B, g *Gateway) {
		before := g.Control.Snapshot().Refused
		b.ReportAllocs()
		for b.Loop() {
			g.Stack.Submit(req)
		}
		if after := g.Control.Snapshot().Refused; after == before {
			b.Fatal("nothing was refused")
		}
	}
	b.Run("level2", func(b *testing.B) {
		g := benchGateway(b, sprc.Config{})
		g.Control.Probe(sprc.Outbound, 12*time.Second)
		g.refreshEdge()
		run(b, g)
	})
	admission := func(b *testing.B) *Gateway {
		g := benchGateway(b, sprc.Config{Admission: sprc.AdmissionConfig{Enabled: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1}})
		g.Control.OutgoingCallStarted(2, 1) // one call in set-up: the limit is reached
		return g
	}
	b.Run("admission", func(b *testing.B) { run(b, admission(b)) })
	// What the host API does: Screen answers the refusal to its caller, with
	// no Result through the sink.
	b.Run("admission-screen", func(b *testing.B) {
		g := admission(b)
		o := req.(stack.Outseize)
		b.ReportAllocs()
		for b.Loop() {
			if _, st := g.Stack.Screen(o); st != stack.StatusOutboundCongestion {
				b.Fatalf("screened: %v", st)
			}
		}
	})
}
