package host_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
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
	ga.g.Control.OutgoingCallStarted(2, 1, 0) // the limit is reached
	r := ga.raw(b, "tcp", nil)
	if m := r.roundTrip(`{"type":"hello","seq":0,"version":1,"token":"` + token + `"}`); m.Type != wire.TypeAck {
		b.Fatalf("hello: %+v", m)
	}
	const batch = 256
	var lines []byte
	ends := make([]int, batch) // where each line ends
	for i := range batch {
		lines = fmt.Appendf(lines, `{"type":"outseize","seq":%d,"dpc":2,"called":"4930123456"}`+"\n", i+1)
		ends[i] = len(lines)
	}
	before := ga.g.Control.Snapshot().Refused[sprc.RefuseAdmission]
	b.ReportAllocs()
	b.ResetTimer()
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
			continue // the admission's level, raised while it refuses
		}
		if i++; !bytes.Contains(line, []byte(`"nak"`)) || !bytes.Contains(line, []byte(`"status":12`)) {
			b.Fatalf("not a 0x0C nak: %s", line)
		}
	}
	b.StopTimer()
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	// A few may be refused for the host's share instead (also 0x0C).
	if got, share := ga.g.Control.Snapshot().Refused[sprc.RefuseAdmission]-before, ga.srv.Metrics().ShareRefused; got+share < uint64(b.N) {
		b.Fatalf("the admission counted %d refusals and the share %d, of %d", got, share, b.N)
	}
}
