package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/internal/app/apptest"
)

// activeStandbyPair starts F (point code 2, an SG: the repository's own
// SG-side M3UA, with the pair's AS, routing context 100) and the pair A1, A2
// (point code 1, redundancy active-standby, ASP Ids 1 and 2, one state
// file), A1 first so that it is the active one.
func activeStandbyPair(t *testing.T, ctx context.Context) (f, a1, a2 *apptest.Gateway) {
	t.Helper()
	udp := apptest.FreeUDPPort(t)
	f = apptest.Start(t, ctx, fmt.Sprintf(`point_code: 2
m3ua: {transport: udp, role: sg, listen: "127.0.0.1:2905", udp_port: %d, peers: [
  {name: a1, accept_from: 127.0.0.1, asp_id: 1, routing_contexts: [100], point_codes: [1]},
  {name: a2, accept_from: 127.0.0.1, asp_id: 2, routing_contexts: [100], point_codes: [1]}]}
circuit_groups: [{name: a, point_code: 1, cics: ["1-16"]}]
state_file: ""
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, udp))
	stateFile := filepath.Join(t.TempDir(), "blocks.json")
	node := func(id int) *apptest.Gateway {
		return apptest.Start(t, ctx, fmt.Sprintf(`point_code: 1
redundancy: {mode: active-standby}
state_file: %q
m3ua: {transport: udp, role: asp, peers: [{name: stp, connect: "127.0.0.1:2905", udp_port: %d, asp_id: %d, routing_contexts: [100], traffic_mode: override, point_codes: [2]}]}
circuit_groups: [{name: f, point_code: 2, cics: ["1-16"]}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, stateFile, udp, id))
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out: %s", what)
			}
		}
	}
	a1 = node(1)
	waitUntil("a1 active", func() bool { return a1.Gateway.Redundancy().Role == gateway.RoleActive })
	a2 = node(2)
	waitUntil("a2 standby, its association up", func() bool {
		return a2.Gateway.Redundancy().Role == gateway.RoleStandby && a2.Gateway.PeerStates()["stp"] == "inactive"
	})
	waitUntil("every circuit idle at F and A1", func() bool {
		return f.Gateway.Status().Circuits["idle"] == 16 && a1.Gateway.Status().Circuits["idle"] == 16
	})
	return f, a1, a2
}

// signalWriter calls once when a report line has a completed call.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
	fire func()
}

func (w *signalWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(b, []byte(`"type":"second"`)) && !bytes.Contains(b, []byte(`"completed":0,`)) {
		w.once.Do(w.fire)
	}
	return w.buf.Write(b)
}

// TestLoadFollowsTheActiveOfAPair: the generator is given both gateways of a
// pair, the standby first. Its calls complete through A1, the active one;
// once calls have completed A1 is stopped mid-run, A2 takes over (AS-Pending
// from F, GRS) and the calls go on through A2. Calls in progress on A1 are
// lost with its connection (counted, not left unfinished); A2 lost none.
func TestLoadFollowsTheActiveOfAPair(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three gateways")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f, a1, a2 := activeStandbyPair(t, ctx)
	ansCtx, stopAns := context.WithCancel(ctx)
	defer stopAns()
	ready, ansDone := make(chan struct{}), make(chan error, 1)
	go func() {
		ansDone <- Answer(ansCtx, AnswerOptions{Address: f.HostAddr(), Token: "secret", Out: io.Discard, Quiet: true,
			Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-ansDone:
		t.Fatalf("answering side: %v", err)
	}
	stopped := make(chan struct{})
	out := &signalWriter{fire: func() { go func() { a1.Stop(); close(stopped) }() }}
	called, _ := ParsePattern("4930XXXX")
	fin, err := Run(ctx, Options{Addresses: []string{a2.HostAddr(), a1.HostAddr()}, Token: "secret", Schedule: Constant(40, 4*time.Second),
		Hold: 100 * time.Millisecond, DPCs: []uint32{2}, Called: called, Out: out, JSON: true, Drain: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("A1 was never stopped: no call completed")
	}
	if a2.Gateway.Redundancy().Role != gateway.RoleActive {
		t.Fatalf("a2 did not take over: %+v", a2.Gateway.Redundancy())
	}
	t.Logf("final: offered %d admitted %d completed %d failed %d lost %d redirected %d refused %v gateways %+v",
		fin.Offered, fin.Admitted, fin.Completed, fin.Failed, fin.Lost, fin.Redirected, fin.Refused, fin.Gateways)
	if len(fin.Gateways) != 2 {
		t.Fatalf("gateways %+v", fin.Gateways)
	}
	onA2, onA1 := fin.Gateways[0], fin.Gateways[1]
	if onA1.Completed == 0 || onA2.Completed == 0 {
		t.Fatalf("calls completed through A1 %d and A2 %d: want both before and after the switch", onA1.Completed, onA2.Completed)
	}
	if onA2.Lost != 0 || fin.Lost != onA1.Lost || fin.Lost+onA1.Completed > onA1.Admitted {
		t.Fatalf("lost calls: %+v", fin.Gateways)
	}
	if fin.Offered != fin.Asked || fin.Unfinished != 0 || fin.Completed+fin.Failed+fin.RefusedTotal()+fin.Errors != fin.Offered {
		t.Fatalf("calls unaccounted for: %+v", fin)
	}
	// The JSON report parses back, gateways and all.
	_, parsed, err := ParseReport(&out.buf)
	if err != nil || len(parsed.Gateways) != 2 || parsed.Gateways[0].Completed != onA2.Completed {
		t.Fatalf("report: %+v %v", parsed, err)
	}
}
