package replay

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

var lo = netip.MustParseAddr("127.0.0.1")

// host decides what the gateway's host does with an incoming call.
type host func(g *gateway.Gateway, in stack.Incoming)

// alertAnswer is the host of the issue: ACM then ANM for every call.
func alertAnswer(g *gateway.Gateway, in stack.Incoming) {
	g.Stack.Submit(stack.Alert{Call: in.Call})
	g.Stack.Submit(stack.Answer{Call: in.Call})
}

// startGateway runs a gateway with point code own, one circuit group of CICs
// 1..lastCIC towards peer, listening for an IPSP on loopback (SCTP over UDP).
func startGateway(t *testing.T, own, peer mtp.PointCode, lastCIC uint16, h host, opts ...gateway.Option) *gateway.Gateway {
	t.Helper()
	return startGatewayWith(t, own, peer, lastCIC, h, nil, opts...)
}

// startGatewayWith is startGateway with a change to the configuration.
func startGatewayWith(t *testing.T, own, peer mtp.PointCode, lastCIC uint16, h host, change func(*gateway.Config), opts ...gateway.Option) *gateway.Gateway {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var g *gateway.Gateway
	var wg sync.WaitGroup
	events := make(chan stack.Event, 4096)
	cfg := gateway.Config{
		Stack: stack.Config{OPC: own, NI: 2,
			Groups: []stack.Group{{Name: "peer", DPC: peer, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: lastCIC}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
			Peers: []m3ua.Peer{{Name: "replayer", From: lo, DPCs: []mtp.PointCode{peer}}}},
	}
	if change != nil {
		change(&cfg)
	}
	g, err := gateway.New(cfg, func(e stack.Event) { events <- e }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := g.Wait(); err != nil {
			t.Errorf("gateway: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-events:
				if in, ok := e.(stack.Incoming); ok {
					h(g, in)
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return g
}

// waitIdle waits until the gateway has no call left (bounded; Inspect is a
// query, there is no event for "all calls gone").
func waitIdle(t *testing.T, g *gateway.Gateway, circuits int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := g.Stack.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.Calls == 0 && snap.CircuitsByState["idle"] == circuits {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not idle: %d calls, circuits %v", snap.Calls, snap.CircuitsByState)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLiveM3UAISUP is the acceptance test: acting as point code 1 of
// m3ua_isup.cap against a gateway with point code 2 whose host alerts and
// answers, as fast as causality allows, every one of the 94 calls gets ACM,
// ANM and (after our REL) RLC: no CIC differs, and the gateway ends idle.
// The replayer's own capture of the session decodes to the same 94 calls.
func TestLiveM3UAISUP(t *testing.T) {
	c, err := Load(sharedCapture(t, "m3ua_isup.cap"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, 2, 1, 100, alertAnswer)
	var pcap bytes.Buffer
	w, err := capture.NewWriter(&pcap)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	res, err := Live(context.Background(), LiveConfig{Addr: g.Endpoint.Addr(), As: 1, Speed: 0, Log: &log,
		M3UAOptions: []m3ua.Option{m3ua.WithCapture(w)}}, c.Msgs)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out bytes.Buffer
	if err := WriteLive(&out, res); err != nil {
		t.Fatal(err)
	}
	if len(res.CICs) != 94 || res.Differ() != 0 || res.Sent != 188 || res.Received != 282 || len(res.Unsolicited) != 0 {
		t.Fatalf("%d CICs, %d differ, sent %d, received %d, unsolicited %v:\n%s", len(res.CICs), res.Differ(), res.Sent, res.Received, res.Unsolicited, out.String())
	}
	for _, r := range res.CICs {
		if got := strings.Join(typeNames(r.Got), " "); got != "ACM ANM RLC" || len(r.Notes) != 0 {
			t.Errorf("cic %d: gateway sent %q, notes %v", r.CIC, got, r.Notes)
		}
	}
	if !strings.Contains(out.String(), "94 CICs, 94 match, 0 differ; sent 188, received 282") {
		t.Errorf("output:\n%s", out.String())
	}
	waitIdle(t, g, 100)

	// Our capture of the live session: the same calls, now between 1 and 2.
	lc, err := Read(bytes.NewReader(pcap.Bytes()), "live.pcap", Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Analyze(lc, isup.ITU)
	rep := a.Report()
	if len(rep.Calls) != 94 || rep.Answered != 94 || len(rep.Violations) != 0 {
		t.Errorf("live capture: %d calls, %d answered, violations %v", len(rep.Calls), rep.Answered, rep.Violations)
	}
	for _, typ := range []isup.MessageType{isup.IAM, isup.ACM, isup.ANM, isup.REL, isup.RLC} {
		if n := rep.Count(typ); n != 94 {
			t.Errorf("live capture: %d %s", n, typ)
		}
	}
}

// TestLiveDifferences: a gateway whose host refuses every call (REL cause
// 17) differs from the capture on every CIC; the replayer answers each REL
// with RLC, stops that CIC's script, and the gateway ends with every circuit
// idle. Running at a high --speed exercises the timed path.
func TestLiveDifferences(t *testing.T) {
	msgs := synthCall(t, []uint16{5, 6, 7})
	busy := func(g *gateway.Gateway, in stack.Incoming) {
		g.Stack.Submit(stack.Release{Call: in.Call, Cause: isup.CauseUserBusy})
	}
	g := startGateway(t, 2, 1, 16, busy)
	res, err := Live(context.Background(), LiveConfig{Addr: g.Endpoint.Addr(), As: 1, Speed: 1000}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteLive(&out, res)
	if len(res.CICs) != 3 || res.Differ() != 3 {
		t.Fatalf("want 3 differing CICs:\n%s", out.String())
	}
	for _, r := range res.CICs {
		if got := strings.Join(typeNames(r.Got), " "); got != "REL" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "answered RLC") {
			t.Errorf("cic %d: got %q notes %v", r.CIC, got, r.Notes)
		}
		if sent := strings.Join(typeNames(r.Sent), " "); sent != "IAM" {
			t.Errorf("cic %d: sent %q after the gateway's REL", r.CIC, sent)
		}
	}
	if !strings.Contains(out.String(), "cic=5     DIFFER sent IAM; capture ACM CPG ANM RLC; gateway REL(17 user busy); gateway sent REL where the capture has ACM") {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "differing CICs released by the gateway with cause 17 user busy: 3\n") {
		t.Errorf("the report does not name the cause:\n%s", out.String())
	}
	waitIdle(t, g, 16)
}

// A freshly started gateway resets its circuits (GRS) as soon as the
// association is up; the replay answers those resets before it sends its
// first IAM, so no call meets a circuit still awaiting its GRA.
func TestLiveAnswersStartupReset(t *testing.T) {
	c, err := Load(sharedCapture(t, "m3ua_isup.cap"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := startGatewayWith(t, 2, 1, 100, alertAnswer, func(cfg *gateway.Config) { cfg.Stack.ResetOnStart = true })
	var log bytes.Buffer
	res, err := Live(context.Background(), LiveConfig{Addr: g.Endpoint.Addr(), As: 1, Speed: 0, Log: &log, Settle: time.Minute}, c.Msgs)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out bytes.Buffer
	WriteLive(&out, res)
	if res.Differ() != 0 || len(res.CICs) != 94 {
		t.Fatalf("%d of %d CICs differ:\n%s", res.Differ(), len(res.CICs), out.String())
	}
	// GRS of at most 32 circuits each (Q.763 3.43): 1-32, 33-64, 65-96 before
	// the replay (they cover the capture's CICs 1-94), 97-100 then or later.
	if res.StartupResets < 96 || len(res.Unsolicited) != 4 || !strings.HasPrefix(res.Unsolicited[0], "GRS on cic=1 ") {
		t.Errorf("start-up resets %d, unsolicited %q", res.StartupResets, res.Unsolicited)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("answered the gateway's start-up resets of %d CICs before replaying", res.StartupResets)) {
		t.Errorf("output:\n%s", out.String())
	}
	waitIdle(t, g, 100)
}

// TestLiveUnsolicitedAndTimeout: the gateway's host blocks CIC 21 before
// alerting the call on CIC 5 (same SLS, so the BLO arrives first); the
// replayer, which has no BLO in its script, acknowledges it with BLA and
// the gateway's circuit 21 ends locally blocked, not awaiting BLA. A capture
// that expects an answer the gateway never sends (a CPG) times out after
// --wait and the script goes on.
func TestLiveUnsolicitedAndTimeout(t *testing.T) {
	msgs := synthCall(t, []uint16{5})
	blockFirst := func(g *gateway.Gateway, in stack.Incoming) {
		g.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 1, CIC: 21})
		alertAnswer(g, in)
	}
	g := startGateway(t, 2, 1, 32, blockFirst)
	res, err := Live(context.Background(), LiveConfig{Addr: g.Endpoint.Addr(), As: 1, Speed: 0, Wait: 300 * time.Millisecond}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteLive(&out, res)
	if len(res.Unsolicited) != 1 || res.Unsolicited[0] != "BLO on cic=21, answered BLA" {
		t.Errorf("unsolicited %q", res.Unsolicited)
	}
	r := res.CICs[0]
	if got := strings.Join(typeNames(r.Got), " "); got != "ACM ANM RLC" || r.Match() {
		t.Errorf("got %q match %v", got, r.Match())
	}
	if sent := strings.Join(typeNames(r.Sent), " "); sent != "IAM REL" {
		t.Errorf("sent %q", sent)
	}
	if len(r.Notes) != 1 || r.Notes[0] != "after 300ms only 2 of the 3 answers the capture shows before REL; went on" {
		t.Errorf("notes %v\n%s", r.Notes, out.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := g.Stack.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// BLA received: T12 and T13 stopped, no timer left.
		if snap.CircuitsByState["idle, locally blocked"] == 1 && snap.Calls == 0 && snap.PendingTimers == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("circuits %v calls %d timers %d", snap.CircuitsByState, snap.Calls, snap.PendingTimers)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
