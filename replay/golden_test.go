package replay

import (
	"bytes"
	"context"
	"net/netip"
	"path/filepath"
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

// committedLinks are the synthetic captures kept under testdata/replay: the
// link types the shared folder lacks, written by capture.Writer.
var committedLinks = []string{"sctp-over-udp", "sll", "sll2-ipv6-udp", "null", "m3ua-draft", "mtp2", "mtp2-phdr", "mtp3", "mtp3-ansi"}

// violationTraffic breaks one rule per CIC (see TestCheckerProcedures for
// each rule on its own).
func violationTraffic() []step {
	return []step{
		{1, iam(1, "1001")}, {2, acm(1)}, {2, acm(1)}, {2, anm(1)}, {1, rel(1, 16)}, {2, rlc(1)},
		{1, iam(2, "1002")}, {2, iam(2, "2002")}, {1, rel(2, 34)}, {2, rlc(2)},
		{1, iam(3, "1003")}, {2, anm(3)}, {1, rel(3, 16)}, {1, iam(3, "1003")}, {2, anm(3)}, {1, rel(3, 16)}, {2, rlc(3)},
		{1, simple(isup.BLO, 4)}, {2, simple(isup.BLA, 4)}, {2, iam(4, "2004")}, {1, rel(4, 21)}, {2, rlc(4)}, {1, simple(isup.UBL, 4)},
		{1, grs(isup.GRS, 10, 7)}, {2, grs(isup.GRA, 10, 5)},
		{2, cgb(isup.CGB, 20, 3, 0, 1)}, {1, cgb(isup.CGBA, 20, 3, 0)},
		{1, simple(isup.RSC, 30)}, {2, rlc(30)}, {2, rlc(30)},
		{1, iam(31, "1031")}, {2, sus(isup.SUS, 31)}, {2, rel(31, 16)},
	}
}

func writeViolations(t testing.TB) []byte {
	return writeCapture(t, linkCase{name: "violations", link: capture.LinkEthernet}, encode(t, violationTraffic(), isup.ITU))
}

// TestGoldenSynthetic: the committed synthetic captures are exactly what the
// encoder and capture.Writer produce today, and their flow, summary and
// check outputs are the committed ones.
func TestGoldenSynthetic(t *testing.T) {
	byName := map[string]linkCase{}
	for _, lc := range linkCases {
		byName[lc.name] = lc
	}
	type gen struct {
		name string
		v    isup.Variant
		data func(t testing.TB) []byte
	}
	var gens []gen
	for _, n := range committedLinks {
		lc := byName[n]
		gens = append(gens, gen{n, lc.variant(), func(t testing.TB) []byte { return writeCapture(t, lc, lc.traffic(t)) }})
	}
	gens = append(gens, gen{"violations", isup.ITU, writeViolations})
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join(testdataDir, g.name+".pcap")
			data := g.data(t)
			golden(t, path, data)
			checkGoldenOutputs(t, path, g.v)
		})
	}
}

// checkGoldenOutputs loads a committed capture and compares its outputs.
func checkGoldenOutputs(t *testing.T, path string, v isup.Variant) Report {
	t.Helper()
	c, err := Load(path, Options{Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	c.File = filepath.Base(path)
	flow, check := render(t, c, v)
	golden(t, path+".golden", []byte(flow))
	golden(t, path+".check.golden", []byte(check))
	a, _ := Analyze(c, v)
	return a.Report()
}

// TestGoldenViolations: the violations capture reports each broken rule.
func TestGoldenViolations(t *testing.T) {
	r := checkGoldenOutputs(t, filepath.Join(testdataDir, "violations.pcap"), isup.ITU)
	kinds := map[Kind]int{}
	for _, v := range r.Violations {
		kinds[v.Kind]++
	}
	want := map[Kind]int{KindState: 3, KindTwoCalls: 1, KindMissingRLC: 2, KindBlocked: 1, KindUnanswered: 1, KindMismatch: 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s: %d, want %d (all: %v)", k, kinds[k], n, r.Violations)
		}
	}
}

// TestGoldenLive checks the captures two live gateways and a live replay
// wrote with the M3UA capture option (regenerate with -update, which runs
// them again): their outputs are the committed ones, every call and
// supervision procedure completes, and tshark counts the same message types.
func TestGoldenLive(t *testing.T) {
	for _, name := range []string{"gateways", "replayer"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(testdataDir, name+".pcap")
			if *update {
				var data []byte
				if name == "gateways" {
					data = genGateways(t)
				} else {
					data = genReplayer(t)
				}
				golden(t, path, data)
			}
			r := checkGoldenOutputs(t, path, isup.ITU)
			if len(r.Violations) != 0 || r.InProgress != 0 || len(r.Calls) == 0 {
				t.Errorf("violations %v, %d calls, %d in progress", r.Violations, len(r.Calls), r.InProgress)
			}
			want := tsharkTypes(t, path)
			for _, tc := range r.ByType {
				if want[int(tc.Type)] != tc.Count {
					t.Errorf("%s: %d, tshark %d", tc.Type, tc.Count, want[int(tc.Type)])
				}
			}
			if name == "gateways" {
				for _, typ := range []isup.MessageType{isup.GRS, isup.GRA, isup.BLO, isup.BLA, isup.UBL, isup.UBA, isup.CGB, isup.CGBA,
					isup.CGU, isup.CGUA, isup.CQM, isup.CQR, isup.RSC} {
					if r.Count(typ) == 0 {
						t.Errorf("no %s in the gateways' capture", typ)
					}
				}
			}
		})
	}
}

// node is a live gateway with its events.
type node struct {
	g      *gateway.Gateway
	events chan stack.Event
	host   host
}

// next returns the next event other than Incoming (which a pump goroutine
// hands to the node's host as soon as it comes).
func (n *node) next(t *testing.T) stack.Event {
	t.Helper()
	select {
	case e := <-n.events:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return nil
}

func (n *node) until(t *testing.T, f func(stack.Event) bool) {
	t.Helper()
	for !f(n.next(t)) {
	}
}

func (n *node) waitState(t *testing.T, state string, count int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := n.g.Stack.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.CircuitsByState[state] == count && snap.PendingTimers == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %d %q: %v, %d timers", count, state, snap.CircuitsByState, snap.PendingTimers)
		}
		time.Sleep(5 * time.Millisecond) // Inspect is a query; there is no signal for a state

	}
}

// genGateways runs two gateways over M3UA (SCTP over UDP on loopback), point
// codes 1 and 2 with CICs 1..32, and captures gateway 1's traffic: the
// start-up group resets, calls both ways (answered, and refused busy), a
// blocking, a group blocking, a circuit query and a reset.
func genGateways(t *testing.T) []byte {
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	mk := func(own, peer mtp.PointCode, m3 m3ua.Config, h host, opts ...gateway.Option) *node {
		n := &node{events: make(chan stack.Event, 4096), host: h}
		raw := make(chan stack.Event, 4096)
		cfg := gateway.Config{Stack: stack.Config{OPC: own, NI: 2, ResetOnStart: true, Timers: stack.Timers{T22: 300 * time.Millisecond},
			Groups: []stack.Group{{Name: "peer", DPC: peer, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 32}}}}}, M3UA: m3}
		g, err := gateway.New(cfg, func(e stack.Event) { raw <- e }, opts...)
		if err != nil {
			t.Fatal(err)
		}
		n.g = g
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() { defer wg.Done(); _ = g.Wait() }()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case e := <-raw:
					if in, ok := e.(stack.Incoming); ok {
						n.host(n.g, in)
						continue
					}
					select {
					case n.events <- e:
					default: // nobody is waiting for this kind; the test polls states
					}
				}
			}
		}()
		return n
	}
	refuse := func(g *gateway.Gateway, in stack.Incoming) {
		g.Stack.Submit(stack.Release{Call: in.Call, Cause: isup.CauseUserBusy})
	}
	a := mk(1, 2, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []m3ua.Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{2}}}}, refuse, gateway.WithM3UAOptions(m3ua.WithCapture(w)))
	b := mk(2, 1, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP,
		Peers: []m3ua.Peer{{Name: "a", Dial: a.g.Endpoint.Addr(), DPCs: []mtp.PointCode{1}}}}, alertAnswer)
	defer func() { cancel(); wg.Wait() }()
	for _, n := range []*node{a, b} {
		n.until(t, func(e stack.Event) bool {
			al, ok := e.(stack.Alarm)
			return ok && al.Kind == stack.AlarmDestinationUnavailable && al.Cleared
		})
	}
	a.waitState(t, "idle", 32)
	b.waitState(t, "idle", 32)

	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	call := func(from, to *node, dpc mtp.PointCode, answered bool) {
		from.g.Stack.Submit(stack.Outseize{DPC: dpc, Called: called})
		var id stack.CallID
		from.until(t, func(e stack.Event) bool {
			r, ok := e.(stack.Result)
			if ok && r.Status != stack.StatusOK {
				t.Fatalf("outseize: %v", r.Status)
			}
			id = r.Call
			return ok
		})
		if !answered {
			from.until(t, func(e stack.Event) bool { r, ok := e.(stack.Released); return ok && r.Call == id })
			return
		}
		from.until(t, func(e stack.Event) bool { r, ok := e.(stack.Answered); return ok && r.Call == id })
		from.g.Stack.Submit(stack.Release{Call: id, Cause: isup.CauseNormalClearing})
		from.until(t, func(e stack.Event) bool { r, ok := e.(stack.Released); return ok && r.Call == id })
	}
	for i := 0; i < 3; i++ {
		call(a, b, 2, true)
		b.waitState(t, "idle", 32)
	}
	for i := 0; i < 2; i++ {
		call(b, a, 1, false)
		a.waitState(t, "idle", 32)
	}
	b.waitState(t, "idle", 32)
	a.g.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 3})
	a.waitState(t, "idle, locally blocked", 1)
	a.g.Stack.Submit(stack.Maintenance{Op: stack.OpUnblock, DPC: 2, CIC: 3})
	a.waitState(t, "idle", 32)
	b.waitState(t, "idle", 32)
	b.g.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 1, CIC: 10, Range: 7})
	b.waitState(t, "idle, locally blocked", 8)
	b.g.Stack.Submit(stack.Maintenance{Op: stack.OpUnblock, DPC: 1, CIC: 10, Range: 7})
	b.waitState(t, "idle", 32)
	a.waitState(t, "idle", 32)
	a.g.Stack.Submit(stack.Maintenance{Op: stack.OpQuery, DPC: 2, CIC: 1, Range: 3})
	a.until(t, func(e stack.Event) bool { al, ok := e.(stack.Alarm); return ok && al.Kind == stack.AlarmQueryResult })
	a.g.Stack.Submit(stack.Maintenance{Op: stack.OpReset, DPC: 2, CIC: 5})
	a.waitState(t, "idle", 32)
	b.waitState(t, "idle", 32)
	cancel()
	wg.Wait()
	return buf.Bytes()
}

// genReplayer replays five plain calls as point code 1 against a gateway
// that alerts and answers, capturing the replayer's side.
func genReplayer(t *testing.T) []byte {
	var steps []step
	for cic := uint16(1); cic <= 5; cic++ {
		steps = append(steps, step{1, iam(cic, "4930123456")}, step{2, acm(cic)}, step{2, anm(cic)}, step{1, rel(cic, 16)}, step{2, rlc(cic)})
	}
	g := startGateway(t, 2, 1, 8, alertAnswer)
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.WithSCTPOverUDP(capture.DefaultSCTPOverUDPPort))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Live(context.Background(), LiveConfig{Addr: g.Endpoint.Addr(), As: 1, Speed: 100,
		M3UAOptions: []m3ua.Option{m3ua.WithCapture(w)}}, encode(t, steps, isup.ITU))
	if err != nil || res.Differ() != 0 {
		t.Fatalf("live: %v, %d differ", err, res.Differ())
	}
	waitIdle(t, g, 8)
	return buf.Bytes()
}
