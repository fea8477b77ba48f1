package host_test

import (
	"slices"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
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
