package gateway

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

// testSTP is the repository's SG-side M3UA with a relay that routes every
// received DATA by its DPC: A1 and A2 (ASP Ids 1 and 2) are one AS, routing
// context 100, point code 1, in override mode; B (ASP Id 3) is AS 200, point
// code 2.
func testSTP(t *testing.T, ctx context.Context) *m3ua.Endpoint {
	t.Helper()
	sg, err := m3ua.New(m3ua.Config{Role: m3ua.RoleSG, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0), RouteMode: mtp.Override,
		Peers: []m3ua.Peer{
			{Name: "a1", From: lo, ASPID: 1, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{1}},
			{Name: "a2", From: lo, ASPID: 2, HasASPID: true, RoutingContexts: []uint32{100}, DPCs: []mtp.PointCode{1}},
			{Name: "b", From: lo, ASPID: 3, HasASPID: true, RoutingContexts: []uint32{200}, DPCs: []mtp.PointCode{2}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case m := <-sg.Indications():
				_ = sg.Transfer(&m) // no active ASP for the DPC: lost, as at an STP after T(r)
			case <-sg.Events():
			}
		}
	}()
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = sg.Close(c)
	})
	return sg
}

type pairNode struct {
	*testGateway
	cancel context.CancelFunc
	done   chan struct{}
}

func startNode(t *testing.T, cfg Config) *pairNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ev := make(chan stack.Event, 4096)
	g, err := New(cfg, func(e stack.Event) { ev <- e }, WithM3UAOptions(m3ua.WithBackoff(20*time.Millisecond, 200*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	n := &pairNode{testGateway: &testGateway{Gateway: g, events: ev}, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(n.done); _ = g.Wait() }()
	t.Cleanup(func() { n.cancel(); <-n.done })
	return n
}

// kill ends a node as kill -9 would: its associations are aborted at once.
func (n *pairNode) kill() {
	n.Endpoint.Abort()
	n.cancel()
	<-n.done
}

func (n *pairNode) waitRole(t *testing.T, role string) {
	t.Helper()
	waitFor(t, "role "+role, func() (struct{}, bool) { return struct{}{}, n.Redundancy().Role == role })
}

// TestActiveStandbyFailover is issue 20's pair in process: A1 and A2 (point
// code 1, CICs 1-31 towards B, one state file) are standby-capable ASPs of one
// AS at the in-repo SG; B (point code 2) is behind it. Calls go through A1
// while A2 refuses outseizes (0x0120); A1 blocks CIC 5. A1 killed, the SG
// sends AS-Pending, A2 activates, resets the group with GRS (the call B had
// through A1 ends at B), re-announces the block, and completes a call; A1
// restarted comes back as standby and A2 stays active.
func TestActiveStandbyFailover(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sg := testSTP(t, ctx)
	stateFile := filepath.Join(t.TempDir(), "blocks.json")
	aCfg := func(id uint32) Config {
		return Config{Stack: stack.Config{OPC: 1, NI: 2, ResetOnStart: true, StateFile: stateFile,
			Groups: []stack.Group{{Name: "b", DPC: 2, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 31}}}}},
			M3UA: m3ua.Config{Role: m3ua.RoleASP, Transport: transport.KindUDP, Peers: []m3ua.Peer{{Name: "stp", Dial: sg.Addr(),
				ASPID: id, HasASPID: true, RoutingContexts: []uint32{100}, TrafficMode: mtp.Override, Standby: true, DPCs: []mtp.PointCode{2}}}}}
	}
	a1 := startNode(t, aCfg(1))
	a1.waitRole(t, RoleActive)
	a2 := startNode(t, aCfg(2))
	waitFor(t, "a2's association inactive", func() (struct{}, bool) { return struct{}{}, a2.PeerStates()["stp"] == "inactive" })
	b := startNode(t, Config{Stack: stack.Config{OPC: 2, NI: 2, ResetOnStart: true,
		Groups: []stack.Group{{Name: "a", DPC: 1, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 31}}}}},
		M3UA: m3ua.Config{Role: m3ua.RoleASP, Transport: transport.KindUDP, Peers: []m3ua.Peer{{Name: "stp", Dial: sg.Addr(),
			ASPID: 3, HasASPID: true, RoutingContexts: []uint32{200}, DPCs: []mtp.PointCode{1}}}}})
	// B's start-up GRS goes out at its MTP resume; A1's went out before B was
	// there (this SG sends no DUNA/DAVA for it): A1 resets again.
	b.waitAlarm(t, func(al stack.Alarm) bool { return al.Kind == stack.AlarmDestinationUnavailable && al.Cleared })
	b.waitState(t, "idle", 31)
	a1.Stack.Submit(stack.Maintenance{Tag: 6, Op: stack.OpReset, DPC: 2, CIC: 1, Range: 30})
	a1.waitState(t, "idle", 31)
	if a2.Redundancy().Role != RoleStandby {
		t.Fatalf("a2 role %q", a2.Redundancy().Role)
	}

	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	a2.Stack.Submit(stack.Outseize{Tag: 7, DPC: 2, Called: called})
	if r := a2.result(t, 7); r.Status != stack.StatusStandby {
		t.Fatalf("outseize at the standby: %v", r.Status)
	}

	a1.Stack.Submit(stack.Maintenance{Tag: 8, Op: stack.OpBlock, DPC: 2, CIC: 5})
	b.waitState(t, "idle, remotely blocked", 1)
	waitFor(t, "the block in the shared state file", func() (struct{}, bool) {
		data, _ := os.ReadFile(stateFile)
		return struct{}{}, strings.Contains(string(data), `"cic": 5`)
	})
	stopB := b.drain()
	a1.calls(t, 2, 10)
	stopB()
	stopA := a1.drain()
	b.calls(t, 1, 10)
	// One call B->A stays up through A1: it is in progress at the kill.
	b.Stack.Submit(stack.Outseize{Tag: 9, DPC: 1, Called: called})
	up := b.result(t, 9)
	if up.Status != stack.StatusOK {
		t.Fatalf("outseize: %v", up.Status)
	}
	for {
		if e, ok := b.next(t).(stack.Answered); ok && e.Call == up.Call {
			break
		}
	}
	stopA()

	t0 := time.Now()
	a1.kill()
	a2.waitRole(t, RoleActive)
	tActive := time.Since(t0)
	// B hears of the lost call from A2's group reset.
	for {
		if e, ok := b.next(t).(stack.Released); ok && e.Call == up.Call {
			break
		}
	}
	stopB = b.drain()
	var first time.Duration
	for i := 0; first == 0; i++ {
		if i == 200 {
			t.Fatal("no call completed through a2")
		}
		tag := uint64(100 + i)
		a2.Stack.Submit(stack.Outseize{Tag: tag, DPC: 2, Called: called})
		r := a2.result(t, tag)
		if r.Status != stack.StatusOK {
			time.Sleep(5 * time.Millisecond) // circuits still under the GRS: no event per refusal to wait on
			continue
		}
		for first == 0 {
			switch e := a2.next(t).(type) {
			case stack.Answered:
				if e.Call == r.Call {
					first = time.Since(t0)
				}
			case stack.Released:
				if e.Call == r.Call {
					t.Fatalf("first call through a2 released: %+v", e)
				}
			}
		}
		a2.Stack.Submit(stack.Release{Call: r.Call})
	}
	t.Logf("failover: a2 active %v after the kill, first call answered through a2 %v after it", tActive.Round(time.Millisecond), first.Round(time.Millisecond))
	stopB()
	// The block set on A1 is in force after the failover, at both ends.
	a2.waitState(t, "idle, locally blocked", 1)
	b.waitState(t, "idle, remotely blocked", 1)
	a2.Stack.Submit(stack.Outseize{Tag: 10, DPC: 2, CIC: 5, HasCIC: true, Called: called})
	if r := a2.result(t, 10); r.Status != stack.StatusCircuitUnavailable {
		t.Fatalf("outseize on the blocked CIC 5: %v", r.Status)
	}
	stopB = b.drain()
	a2.calls(t, 2, 10)
	stopB()

	changes := a2.Redundancy().Changes
	a1 = startNode(t, aCfg(1))
	waitFor(t, "restarted a1 inactive", func() (struct{}, bool) { return struct{}{}, a1.PeerStates()["stp"] == "inactive" })
	stopB = b.drain()
	a2.calls(t, 2, 5) // traffic stays on a2
	stopB()
	if a1.Redundancy().Role != RoleStandby || a2.Redundancy().Role != RoleActive || a2.Redundancy().Changes != changes {
		t.Fatalf("after a1's restart: a1 %+v, a2 %+v", a1.Redundancy(), a2.Redundancy())
	}
	if st := a1.Endpoint.Stats().StandbyTakeovers.Load(); st != 0 {
		t.Fatalf("restarted a1 sent ASP Active %d times", st)
	}
}
