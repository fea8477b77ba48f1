package app

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
)

const benchM3UAA = `point_code: 1
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: %d
  peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]
circuit_groups: [{name: b, point_code: 2, cics: ["1-128"]}]
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
log: {level: warn}
`

const benchM3UAB = `point_code: 2
m3ua:
  transport: udp
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
circuit_groups: [{name: a, point_code: 1, cics: ["1-128"]}]
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
log: {level: warn}
`

const benchM2PA = `point_code: %d
mtp3:
  transport: udp
  emergency_alignment: true
  linksets:
    - name: peer
      adjacent: %d
      links:
        - {slc: 0, type: m2pa, %s: "127.0.0.1:%d"}
        - {slc: 1, type: m2pa, %s: "127.0.0.1:%d"}
circuit_groups: [{name: peer, point_code: %d, cics: ["1-128"]}]
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
log: {level: warn}
`

// BenchmarkCalls measures full calls (IAM, ACM, ANM, REL, RLC) per second
// between two in-process gateways, over M3UA and over the own MTP3 on two
// M2PA links, both on SCTP over UDP on loopback, in the same run:
//
//	go test -run '^$' -bench Calls -benchtime 400x ./internal/app/
func BenchmarkCalls(b *testing.B) {
	for _, mode := range []string{"m3ua", "m2pa"} {
		b.Run(mode, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ya, yb string
			if mode == "m3ua" {
				udp := freeUDPPort(b)
				ya, yb = fmt.Sprintf(benchM3UAA, udp), fmt.Sprintf(benchM3UAB, udp)
			} else {
				p0, p1 := freeUDPPort(b), freeUDPPort(b)
				ya = fmt.Sprintf(benchM2PA, 1, 2, "listen", p0, "listen", p1, 2)
				yb = fmt.Sprintf(benchM2PA, 2, 1, "connect", p0, "connect", p1, 1)
			}
			pa, pb := start(b, ctx, ya), start(b, ctx, yb)
			for _, p := range []*proc{pa, pb} {
				deadline := time.Now().Add(20 * time.Second)
				for st := p.run.Gateway.Status(); len(st.Destinations) != 1 || !st.Destinations[0].Available || st.Circuits["idle"] != 128; st = p.run.Gateway.Status() {
					if time.Now().After(deadline) {
						b.Fatalf("%s: gateways not ready: %+v", mode, st.Destinations)
					}
					time.Sleep(20 * time.Millisecond) // polling readiness, outside the measured part
				}
			}
			hostB := dial(b, pb, true)
			answerCtx, stopAnswer := context.WithCancel(ctx)
			go answerAll(answerCtx, hostB)
			defer stopAnswer()
			const workers = 16
			hosts := make([]*client.Client, workers)
			for i := range hosts {
				hosts[i] = dial(b, pa, false)
			}
			var next atomic.Int64
			var failed atomic.Int64
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for _, h := range hosts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						if !oneCall(ctx, h) {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			if f := failed.Load(); f > 0 {
				b.Fatalf("%s: %d of %d calls failed", mode, f, b.N)
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "calls/s")
		})
	}
}

// oneCall places a call, waits for the answer and releases it.
func oneCall(ctx context.Context, c *client.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := c.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
	if err != nil {
		return false
	}
	for {
		select {
		case e := <-c.Events():
			switch x := e.(type) {
			case *client.Answered:
				if x.Call == s.Call {
					return c.Release(ctx, s.Call, 16, 1) == nil
				}
			case *client.Released:
				if x.Call == s.Call {
					return false
				}
			}
		case <-ctx.Done():
			return false
		}
	}
}
