package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/app/apptest"
)

// Two gateways in this process over M3UA on SCTP-over-UDP: the generator's
// calls are answered by the answering side through B, and A refuses the calls
// beyond its per-destination limit of 3 outgoing calls: the report has both.
func TestEndToEndCompletesAndReportsRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two gateways")
	}
	udp := apptest.FreeUDPPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := apptest.Start(t, ctx, fmt.Sprintf(`point_code: 1
m3ua: {transport: udp, listen: "127.0.0.1:2905", udp_port: %d, peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]}
circuit_groups: [{name: b, point_code: 2, cics: ["1-16"]}]
state_file: ""
timers: {t22: 300ms}
congestion: {constraints: [{point_code: 2, max_outbound: 3}]}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, udp))
	b := apptest.Start(t, ctx, fmt.Sprintf(`point_code: 2
m3ua: {transport: udp, peers: [{name: a, connect: "127.0.0.1:2905", udp_port: %d, point_codes: [1]}]}
circuit_groups: [{name: a, point_code: 1, cics: ["1-16"]}]
state_file: ""
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`, udp))
	// Both sides up, every circuit idle (the start-up resets are done).
	deadline := time.Now().Add(20 * time.Second)
	for {
		sa, sb := a.Gateway.Status(), b.Gateway.Status()
		if sa.Circuits["idle"] == 16 && sb.Circuits["idle"] == 16 && len(sa.Destinations) == 1 && sa.Destinations[0].Available {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateways not ready: A %+v B %+v", sa, sb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var ansOut bytes.Buffer
	ansCtx, stopAns := context.WithCancel(ctx)
	ansReady := make(chan struct{})
	ansDone := make(chan error, 1)
	go func() {
		ansDone <- Answer(ansCtx, AnswerOptions{Address: b.Host.TCPAddr().String(), Token: "secret", Out: &ansOut, JSON: true,
			Ready: func() { close(ansReady) }})
	}()
	select {
	case <-ansReady:
	case err := <-ansDone:
		t.Fatalf("answering side: %v", err)
	}
	called, _ := ParsePattern("4930XXXX")
	var out bytes.Buffer
	fin, err := Run(ctx, Options{Address: a.Host.TCPAddr().String(), Token: "secret", Schedule: Constant(50, 1500*time.Millisecond),
		Hold: 200 * time.Millisecond, DPCs: []uint32{2}, Called: called, Out: &out, JSON: true, Drain: 10 * time.Second})
	stopAns()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ansDone; err != nil {
		t.Fatalf("answering side: %v", err)
	}
	t.Logf("final: offered %d admitted %d completed %d refused %v causes %v", fin.Offered, fin.Admitted, fin.Completed, fin.Refused, fin.Causes)
	if fin.Completed == 0 || fin.Setup.N == 0 {
		t.Fatalf("no call completed: %+v", fin)
	}
	if fin.Refused["constraint_violation"] == 0 {
		t.Fatalf("no refusal for the constraint: %+v", fin.Refused)
	}
	if fin.Offered != fin.Asked || fin.Unfinished != 0 || fin.Completed+fin.Failed+fin.RefusedTotal()+fin.Errors != fin.Offered {
		t.Fatalf("calls unaccounted for: %+v", fin)
	}
	// The JSON report parses back to the same final report.
	secs, parsed, err := ParseReport(&out)
	if err != nil || len(secs) == 0 || parsed.Completed != fin.Completed {
		t.Fatalf("report: %d seconds, %+v, %v", len(secs), parsed, err)
	}
}
