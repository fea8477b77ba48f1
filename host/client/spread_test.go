package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/app/apptest"
	"github.com/isupgw/isupgw/loadgen"
)

// threeByPointCode starts F (point code 2, the far exchange, answering every
// call) and G1, G3, G4 (point codes 1, 3, 4), each with its own association
// to F (ASP Ids 1, 3, 4) and its own 16 circuits towards it: N gateways by
// point code (docs/deployment.md).
func threeByPointCode(t *testing.T, ctx context.Context) (f *apptest.Gateway, gs []*apptest.Gateway) {
	t.Helper()
	udp := apptest.FreeUDPPort(t)
	pcs := []int{1, 3, 4}
	var peers, groups string
	for _, pc := range pcs {
		peers += fmt.Sprintf(`{name: g%d, accept_from: 127.0.0.1, asp_id: %d, point_codes: [%d]}, `, pc, pc, pc)
		groups += fmt.Sprintf(`{name: g%d, point_code: %d, cics: ["1-16"]}, `, pc, pc)
	}
	f = apptest.Start(t, ctx, fmt.Sprintf(`point_code: 2
m3ua: {transport: udp, listen: "127.0.0.1:2905", udp_port: %d, peers: [%s]}
circuit_groups: [%s]
state_file: ""
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, udp, peers, groups))
	for _, pc := range pcs {
		gs = append(gs, apptest.Start(t, ctx, fmt.Sprintf(`point_code: %d
m3ua: {transport: udp, peers: [{name: f, connect: "127.0.0.1:2905", udp_port: %d, asp_id: %d, point_codes: [2]}]}
circuit_groups: [{name: f, point_code: 2, cics: ["1-16"]}]
state_file: ""
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, pc, udp, pc)))
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, g := range append([]*apptest.Gateway{f}, gs...) {
		for {
			st := g.Gateway.Status()
			ready := st.Circuits["idle"] == 16*len(st.Destinations)
			for _, d := range st.Destinations {
				ready = ready && d.Available
			}
			if ready {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("gateway not ready: %+v", st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return f, gs
}

// TestMultiSpreadsByPointCodeAndMovesALostGatewaysShare: a host attached to
// three gateways by point code spreads its calls to DPC 2 over them (least
// loaded: 4 each of 12); one is stopped with 4 calls up: the host gets a
// GatewayLost for it and a released (cause 41) for each of those 4, and the
// next 12 calls go to the other two; every other call completes. Then the
// far exchange goes: its unavailability (alarm 0x17 from both gateways left)
// stops calls to it at the host.
func TestMultiSpreadsByPointCodeAndMovesALostGatewaysShare(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four gateways")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, gs := threeByPointCode(t, ctx)
	ansCtx, stopAns := context.WithCancel(ctx)
	defer stopAns()
	ready, ansDone := make(chan struct{}), make(chan error, 1)
	go func() {
		ansDone <- loadgen.Answer(ansCtx, loadgen.AnswerOptions{Address: f.HostAddr(), Token: "secret", Out: io.Discard, Quiet: true,
			Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-ansDone:
		t.Fatalf("answering side: %v", err)
	}
	addrs := []string{gs[0].HostAddr(), gs[1].HostAddr(), gs[2].HostAddr()}
	m, err := client.DialMulti(ctx, "tcp", addrs, client.Config{App: "spread", Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := range addrs {
		if !m.Gateways().Available(i, 2) || m.Gateways().Available(i, 7) {
			t.Fatalf("gateway %d: destinations not learned from its circuit groups", i)
		}
	}

	calls := map[client.Call]bool{} // placed and not released
	perGW := make([]int, len(addrs))
	place := func(n int) {
		t.Helper()
		for range n {
			c, err := m.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
			if err != nil {
				t.Fatal(err)
			}
			calls[c] = false
			perGW[c.Gateway]++
		}
		for answered := 0; answered < n; { // each answered before the next step
			ge := next(t, ctx, m)
			switch e := ge.Event.(type) {
			case *client.Answered:
				answered++
			case *client.Released:
				t.Fatalf("call released before the gateway was stopped: %+v", e)
			}
		}
	}
	place(12)
	if perGW[0] != 4 || perGW[1] != 4 || perGW[2] != 4 {
		t.Fatalf("12 calls spread %v over the three, want 4 each", perGW)
	}

	gs[2].Stop() // G4: its 4 calls are lost
	lost, released := false, 0
	for !lost || released < 4 {
		ge := next(t, ctx, m)
		switch e := ge.Event.(type) {
		case *client.GatewayLost:
			if ge.Gateway != 2 || e.Calls != 4 {
				t.Fatalf("lost: gateway %d, %d calls (want gateway 2, 4 calls)", ge.Gateway, e.Calls)
			}
			lost = true
		case *client.Released:
			k := client.Call{Gateway: ge.Gateway, Seized: client.Seized{Call: e.Call, DPC: e.DPC, CIC: e.CIC}}
			if _, ok := calls[k]; !ok || ge.Gateway != 2 || e.Cause != client.CauseGatewayLost || !e.Remote {
				t.Fatalf("released %+v on gateway %d: want one of gateway 2's calls, cause 41", e, ge.Gateway)
			}
			delete(calls, k)
			released++
		}
	}
	if m.Gateways().Available(2, 2) {
		t.Fatal("the stopped gateway is still available")
	}
	place(12)
	if perGW[0] != 10 || perGW[1] != 10 || perGW[2] != 4 {
		t.Fatalf("after the stop, calls per gateway %v, want 10, 10 and the stopped one's 4", perGW)
	}
	// Every call of the two left ends normally when we release it.
	for c := range calls {
		if err := m.Release(ctx, c, 16, 0); err != nil {
			t.Fatal(err)
		}
	}
	for n := 0; n < len(calls); {
		if e, ok := next(t, ctx, m).Event.(*client.Released); ok {
			if e.Cause != 16 || e.Remote {
				t.Fatalf("release: %+v", e)
			}
			n++
		}
	}

	// The far exchange gone: both gateways left report its point code
	// unavailable (alarm 0x17), and a call to it is refused at the host,
	// with no request sent.
	f.Stop()
	unavailable := map[int]bool{}
	for len(unavailable) < 2 {
		ge := next(t, ctx, m)
		if a, ok := ge.Event.(*client.Alarm); ok && a.Number == wire.AlarmDestinationUnavailable && !a.Cleared && a.Data["dpc"] == float64(2) {
			unavailable[ge.Gateway] = true
		}
	}
	if _, err := m.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"}); !errors.Is(err, client.ErrNoActive) {
		t.Fatalf("call to an unavailable destination: %v", err)
	}
}

func next(t *testing.T, ctx context.Context, m *client.Multi) client.GatewayEvent {
	t.Helper()
	select {
	case ge, ok := <-m.Events():
		if !ok {
			t.Fatal("events closed")
		}
		return ge
	case <-ctx.Done():
		t.Fatal("timed out waiting for an event")
	}
	return client.GatewayEvent{}
}
