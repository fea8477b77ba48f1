package gateway

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
)

var lo = netip.MustParseAddr("127.0.0.1")

// testGateway is a running gateway with a host goroutine that answers incoming
// calls and forwards every other event to the test.
type testGateway struct {
	*Gateway
	events chan stack.Event
}

func startPair(t *testing.T) (a, b *testGateway) {
	t.Helper()
	return startPairWith(t, nil, nil)
}

// startPairWith starts A (point code 1, listening) and B (point code 2, dialling)
// with extra options for each.
func startPairWith(t *testing.T, optsA, optsB []Option) (a, b *testGateway) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	run := func(g *testGateway) {
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.Wait(); err != nil {
				t.Errorf("gateway: %v", err)
			}
		}()
	}
	mk := func(own, peer mtp.PointCode, m3 m3ua.Config, extra []Option) *testGateway {
		ev := make(chan stack.Event, 4096)
		cfg := Config{
			Stack: stack.Config{OPC: own, NI: 2, ResetOnStart: true,
				Groups: []stack.Group{{Name: "peer", DPC: peer, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 32}}}}},
			M3UA: m3,
		}
		opts := append([]Option{WithM3UAOptions(m3ua.WithHeartbeat(time.Second, 3*time.Second))}, extra...)
		g, err := New(cfg, func(e stack.Event) { ev <- e }, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return &testGateway{Gateway: g, events: ev}
	}
	a = mk(1, 2, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []m3ua.Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{2}}}}, optsA)
	run(a)
	addr := a.Endpoint.Addr()
	b = mk(2, 1, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP,
		Peers: []m3ua.Peer{{Name: "a", Dial: addr, DPCs: []mtp.PointCode{1}}}}, optsB)
	run(b)
	for _, g := range []*testGateway{a, b} {
		g.waitAlarm(t, func(al stack.Alarm) bool { return al.Kind == stack.AlarmDestinationUnavailable && al.Cleared })
	}
	// The start-up group resets complete.
	for _, g := range []*testGateway{a, b} {
		g.waitState(t, "idle", 32)
	}
	return a, b
}

// waitFor polls cond until it holds or 10 s pass (there is no signal for these
// conditions; the loop is bounded).
func waitFor[T any](t *testing.T, what string, cond func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, ok := cond(); ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (g *testGateway) waitState(t *testing.T, state string, n int) {
	t.Helper()
	var last map[string]int
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := g.Stack.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.CircuitsByState[state] == n {
			return
		}
		last = snap.CircuitsByState
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d circuits %q; circuits: %v", n, state, last)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// next returns the next event the test cares about, answering incoming calls on
// the way.
func (g *testGateway) next(t *testing.T) stack.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-g.events:
			if in, ok := e.(stack.Incoming); ok {
				g.Stack.Submit(stack.Alert{Call: in.Call})
				g.Stack.Submit(stack.Answer{Call: in.Call})
				continue
			}
			return e
		case <-timeout:
			t.Fatal("no event within 10 s")
		}
	}
}

// result returns the Result of the request with this tag, skipping other
// events.
func (g *testGateway) result(t *testing.T, tag uint64) stack.Result {
	t.Helper()
	for {
		if r, ok := g.next(t).(stack.Result); ok && r.Tag == tag {
			return r
		}
	}
}

func (g *testGateway) waitAlarm(t *testing.T, match func(stack.Alarm) bool) {
	t.Helper()
	for {
		if al, ok := g.next(t).(stack.Alarm); ok && match(al) {
			return
		}
	}
}

// drain answers incoming calls in the background until stopped.
func (g *testGateway) drain() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case e := <-g.events:
				if in, ok := e.(stack.Incoming); ok {
					g.Stack.Submit(stack.Alert{Call: in.Call})
					g.Stack.Submit(stack.Answer{Call: in.Call})
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// callTags is the first tag of the outseizes calls places.
const callTags = 1 << 32

// calls places n calls from g to dpc one after another; each is answered and
// then released by g. It returns the CICs used. Results of other requests
// (their tags are below callTags) are skipped.
func (g *testGateway) calls(t *testing.T, dpc mtp.PointCode, n int) map[uint16]int {
	t.Helper()
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	used := map[uint16]int{}
	for i := 0; i < n; i++ {
		tag := callTags + uint64(i)
		g.Stack.Submit(stack.Outseize{Tag: tag, DPC: dpc, Called: called})
		r := g.result(t, tag)
		if r.Status != stack.StatusOK {
			t.Fatalf("outseize %d refused: %s %s", i, r.Status, r.Detail)
		}
		id := r.Call
		used[r.CIC]++
		for answered := false; !answered; {
			switch e := g.next(t).(type) {
			case stack.Answered:
				answered = e.Call == id
			case stack.Released:
				if e.Call == id {
					t.Fatalf("call %d released before answer: %+v", i, e)
				}
			}
		}
		g.Stack.Submit(stack.Release{Call: id})
		for released := false; !released; {
			if e, ok := g.next(t).(stack.Released); ok && e.Call == id {
				released = true
			}
		}
	}
	return used
}

func TestTwoGatewaysOverM3UA(t *testing.T) {
	a, b := startPair(t)

	stopB := b.drain()
	usedAB := a.calls(t, 2, 50)
	stopB()
	stopA := a.drain()
	b.calls(t, 1, 50)
	stopA()
	if len(usedAB) < 2 {
		t.Errorf("50 calls used only CICs %v", usedAB)
	}

	// A blocks CIC 3; B sees it remotely blocked; A's calls avoid it.
	a.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 3})
	b.waitState(t, "idle, remotely blocked", 1)
	a.waitState(t, "idle, locally blocked", 1)
	stopB = b.drain()
	if used := a.calls(t, 2, 20); used[3] != 0 {
		t.Errorf("a blocked circuit carried %d calls", used[3])
	}
	stopB()
	a.Stack.Submit(stack.Maintenance{Op: stack.OpUnblock, DPC: 2, CIC: 3})
	b.waitState(t, "idle", 32)
	a.waitState(t, "idle", 32)

	// B blocks 10..17 as a group (hardware); A sees eight remotely blocked.
	b.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 1, CIC: 10, Range: 7, Hardware: true})
	a.waitState(t, "idle, remotely blocked", 8)
	b.Stack.Submit(stack.Maintenance{Op: stack.OpUnblock, DPC: 1, CIC: 10, Range: 7, Hardware: true})
	a.waitState(t, "idle", 32)

	// A call up on CIC-whatever, then A resets the whole group: the call ends on
	// both sides and every circuit is idle again.
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	stopB = b.drain()
	a.Stack.Submit(stack.Outseize{DPC: 2, Called: called})
	for {
		if _, ok := a.next(t).(stack.Answered); ok {
			break
		}
	}
	stopB()
	a.Stack.Submit(stack.Maintenance{Op: stack.OpReset, DPC: 2, CIC: 1, Range: 31})
	b.waitState(t, "idle", 32)
	a.waitState(t, "idle", 32)
	for _, g := range []*testGateway{a, b} {
		snap, err := g.Stack.Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Nothing was lost: not even the start-up GRS, which may overtake the
		// ASP Active Ack (M3UA holds such DATA until the Ack is in).
		if snap.Calls != 0 || snap.TransferErrors != 0 {
			t.Errorf("calls %d, transfer errors %d", snap.Calls, snap.TransferErrors)
		}
	}
}
