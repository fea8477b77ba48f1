package host_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/sprc"
)

// BenchmarkRoundTrip measures, between two gateways on loopback (M3UA over
// SCTP over UDP), the time from a host's outseize to its ack (host -> gateway
// A -> stack -> host) and to its answered (IAM to B, B's host alerts and
// answers over its own socket, ACM and ANM back). Each call is then released
// and the next one starts once both hosts have heard the release. It reports
// the median and 99th percentile of both.
//
//	go test -run '^$' -bench RoundTrip -benchtime 2000x ./host/
func BenchmarkRoundTrip(b *testing.B) {
	ga, gb := startPair(b, pairOpts{circuits: 32})
	caller := ga.dial(b, "tcp", client.Config{App: "bench"})
	calleeRel := gb.dial(b, "tcp", client.Config{App: "answer", Incoming: true}).answerer()
	ctx := ctx10(b)
	toAck := make([]time.Duration, 0, b.N)
	toAnswer := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		s, err := caller.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
		if err != nil {
			b.Fatal(err)
		}
		toAck = append(toAck, time.Since(t0))
		for answered := false; !answered; {
			switch e := next[client.Event](caller).(type) {
			case *client.Answered:
				answered = e.Call == s.Call
			case *client.Released:
				b.Fatalf("released before answer: %+v", e)
			}
		}
		toAnswer = append(toAnswer, time.Since(t0))
		b.StopTimer()
		if err := caller.Release(ctx, s.Call, 0, 0); err != nil {
			b.Fatal(err)
		}
		next[*client.Released](caller)
		<-calleeRel
		b.StartTimer()
	}
	b.StopTimer()
	report := func(name string, d []time.Duration) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), name+"-p50-µs")
		b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), name+"-p99-µs")
	}
	report("ack", toAck)
	report("answered", toAnswer)
}

// BenchmarkRefusalRoundTrip is the host API and the stack's loop alone: an
// outseize the stack refuses before any IAM (unknown point code), to its nak.
func BenchmarkRefusalRoundTrip(b *testing.B) {
	ga, _ := startPair(b, pairOpts{})
	caller := ga.dial(b, "tcp", client.Config{App: "bench"})
	ctx := ctx10(b)
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := caller.Outseize(ctx, client.Outseize{DPC: 99, Called: "4930123456"}); err == nil {
			b.Fatal("outseize to an unknown point code accepted")
		}
		d = append(d, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "nak-p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "nak-p99-µs")
}

// BenchmarkRefusedOutseizeHost is a refused outseize through the whole host
// API, the work the gateway does most under overload: a host pipelines
// outseizes that A's adaptive admission refuses at its limit (one call in
// set-up, limit 1), and reads every nak (go test ./host -run '^$' -bench
// RefusedOutseizeHost -benchmem). ns/op is per refusal, the server's
// decoding, refusal and nak and the reading host's work together.
func BenchmarkRefusedOutseizeHost(b *testing.B) {
	control := sprc.Config{Admission: sprc.AdmissionConfig{Enabled: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1}}
	ga, _ := startPair(b, pairOpts{controlA: &control})
	ga.g.Control.OutgoingCallStarted(2, 1) // the limit is reached
	r := ga.raw(b, "tcp", nil)
	if m := r.roundTrip(`{"type":"hello","seq":0,"version":1,"token":"` + token + `"}`); m.Type != wire.TypeAck {
		b.Fatalf("hello: %+v", m)
	}
	before := ga.g.Control.Snapshot().Refused[sprc.RefuseAdmission]
	b.ReportAllocs()
	b.ResetTimer()
	pipelineRefused(b, r, `"status":12`)
	b.StopTimer()
	if got, share := ga.g.Control.Snapshot().Refused[sprc.RefuseAdmission]-before, ga.srv.Metrics().ShareRefused; got+share < uint64(b.N) {
		b.Fatalf("the admission counted %d refusals and the share %d, of %d", got, share, b.N)
	}
}

// BenchmarkNoCircuitOutseizeHost is BenchmarkRefusedOutseizeHost for the
// refusal a flood meets most once the circuits bind: every circuit to the
// destination is busy (here blocked), and each outseize is refused for want
// of a circuit (0x0101) at the edge (go test ./host -run '^$' -bench
// NoCircuitOutseizeHost -benchmem).
func BenchmarkNoCircuitOutseizeHost(b *testing.B) {
	ga, _ := startPair(b, pairOpts{circuits: 2})
	caller := ga.dial(b, "tcp", client.Config{App: "bench"})
	ga.g.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 1})
	ga.g.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 2})
	ctx := ctx10(b)
	for {
		_, err := caller.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
		var nak *client.Nak
		if errors.As(err, &nak) && nak.Status == wire.StatusNoCircuit {
			break
		}
		if err == nil || ctx.Err() != nil {
			b.Fatalf("blocking both circuits: outseize %v", err)
		}
	}
	r := ga.raw(b, "tcp", nil)
	if m := r.roundTrip(`{"type":"hello","seq":0,"version":1,"token":"` + token + `"}`); m.Type != wire.TypeAck {
		b.Fatalf("hello: %+v", m)
	}
	refused := func() uint64 {
		snap, err := ga.g.Stack.Inspect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return snap.Stats.Refused[stack.StatusNoCircuit]
	}
	before := refused()
	b.ReportAllocs()
	b.ResetTimer()
	pipelineRefused(b, r, fmt.Sprintf(`"status":%d`, wire.StatusNoCircuit))
	b.StopTimer()
	if got, share := refused()-before, ga.srv.Metrics().ShareRefused; got+share < uint64(b.N) {
		b.Fatalf("the stack counted %d refusals for want of a circuit and the share %d, of %d", got, share, b.N)
	}
}

// pipelineRefused writes b.N outseizes to DPC 2 on r in batches and reads
// a nak with status (a JSON fragment) for each, skipping alarms. A few may
// be refused for the host's share instead (0x0C), when the writer runs
// ahead of the naks.
func pipelineRefused(b *testing.B, r *rawConn, status string) {
	b.Helper()
	const batch = 256
	var lines []byte
	ends := make([]int, batch) // where each line ends
	for i := range batch {
		lines = fmt.Appendf(lines, `{"type":"outseize","seq":%d,"dpc":2,"called":"4930123456"}`+"\n", i+1)
		ends[i] = len(lines)
	}
	errc := make(chan error, 1)
	go func() {
		var err error
		for sent := 0; sent < b.N && err == nil; sent += batch {
			_, err = r.nc.Write(lines[:ends[min(batch, b.N-sent)-1]])
		}
		errc <- err
	}()
	for i := 0; i < b.N; {
		line, err := r.br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if bytes.Contains(line, []byte(`"type":"alarm"`)) {
			continue // e.g. the admission's level, raised while it refuses
		}
		share := bytes.Contains(line, []byte(`"status":12`)) && bytes.Contains(line, []byte("its share"))
		if i++; !bytes.Contains(line, []byte(`"nak"`)) || !bytes.Contains(line, []byte(status)) && !share {
			b.Fatalf("not a nak with %s nor for the host's share: %s", status, line)
		}
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}
