package stack

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// pair is two Stacks joined by an in-memory MTP, each with an event channel
// read by its host goroutine.
type pair struct {
	a, b     *Stack
	aEv, bEv chan Event
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

func newPair(tb testing.TB, cics uint16) *pair {
	tb.Helper()
	p := &pair{aEv: make(chan Event, 1<<16), bEv: make(chan Event, 1<<16)}
	group := func(dpc mtp.PointCode) []Group {
		return []Group{{Name: "peer", DPC: dpc, Variant: isup.ITU, CICs: []CICRange{{First: 1, Last: cics}}}}
	}
	// The in-memory MTP copies the payload (the stack reuses its buffer) and
	// delivers to the other stack's inbound queue.
	link := func(to **Stack) Transfer {
		return func(m *mtp.Message) error {
			c := *m
			c.Payload = append([]byte(nil), m.Payload...)
			(*to).Deliver(c)
			return nil
		}
	}
	var err error
	p.a, err = New(Config{OPC: 1, NI: 2, Groups: group(2)}, link(&p.b), func(e Event) { p.aEv <- e })
	if err != nil {
		tb.Fatal(err)
	}
	p.b, err = New(Config{OPC: 2, NI: 2, Groups: group(1)}, link(&p.a), func(e Event) { p.bEv <- e })
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	for _, s := range []*Stack{p.a, p.b} {
		p.done.Add(1)
		go func() { defer p.done.Done(); s.Run(ctx) }()
	}
	return p
}

func (p *pair) stop() {
	p.cancel()
	p.done.Wait()
}

// answerer is B's host: it alerts and answers every incoming call.
func (p *pair) answerer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-p.bEv:
			if in, ok := e.(Incoming); ok {
				p.b.Submit(Alert{Call: in.Call})
				p.b.Submit(Answer{Call: in.Call})
			}
		}
	}
}

// placeCalls runs n full calls from A (IAM, ACM, ANM, REL, RLC) with at most
// window outstanding, and returns how many were answered and released.
func (p *pair) placeCalls(n, window int) (answered, released int) {
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	sent, outstanding := 0, 0
	for released < n {
		for outstanding < window && sent < n {
			p.a.Submit(Outseize{Tag: uint64(sent), DPC: 2, Called: called})
			sent++
			outstanding++
		}
		switch e := (<-p.aEv).(type) {
		case Result:
			if e.Status != StatusOK && e.Call == 0 {
				outstanding-- // refused: no circuit at this instant; try again
				sent--
			}
		case Answered:
			answered++
			p.a.Submit(Release{Call: e.Call})
		case Released:
			if !e.Remote {
				released++
				outstanding--
			}
		}
	}
	return answered, released
}

func TestStacksOverInMemoryMTP(t *testing.T) {
	before := runtime.NumGoroutine()
	p := newPair(t, 64)
	ctx, cancel := context.WithCancel(context.Background())
	go p.answerer(ctx)
	answered, released := p.placeCalls(2000, 32)
	if answered != 2000 || released != 2000 {
		t.Fatalf("answered %d, released %d of 2000", answered, released)
	}
	// The last RLCs may still be in flight: wait for both sides to be quiet.
	deadline := time.Now().Add(10 * time.Second)
	for _, s := range []*Stack{p.a, p.b} {
		for {
			snap, err := s.Inspect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if snap.Calls == 0 && snap.PendingTimers == 0 && snap.CircuitsByState["idle"] == 64 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not quiet: %+v", snap.CircuitsByState)
			}
			runtime.Gosched()
		}
	}
	snapA, _ := p.a.Inspect(context.Background())
	if pub := p.a.Stats(); pub.CircuitsByState == nil {
		t.Fatal("no published snapshot")
	}
	if snapA.Stats.Sent[isup.IAM] != 2000 || snapA.Stats.Received[isup.RLC] != 2000 {
		t.Fatalf("A sent %d IAMs, received %d RLCs", snapA.Stats.Sent[isup.IAM], snapA.Stats.Received[isup.RLC])
	}
	// Probes measure each queue.
	got := make(chan time.Duration, 2)
	p.a.Probe(Inbound, func(d time.Duration) { got <- d })
	p.a.Probe(Outbound, func(d time.Duration) { got <- d })
	for i := 0; i < 2; i++ {
		if d := <-got; d < 0 {
			t.Fatalf("negative probe delay %v", d)
		}
	}
	cancel()
	p.stop()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines leaked: %d > %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

func TestProbeMeasuresBacklog(t *testing.T) {
	// A fake clock advanced one second per processed item: a probe queued behind
	// 20 items waits for those 20 and its own turn, 21 s exactly.
	var clock atomic.Int64
	gate := make(chan struct{})
	s := runStack(t, WithClock(func() time.Time { return time.Unix(clock.Load(), 0) }),
		WithSlowdown(func() { <-gate; clock.Add(1) }))
	for i := 0; i < 20; i++ {
		s.Submit(Accept{Call: 999})
	}
	got := make(chan time.Duration, 1)
	s.Probe(Outbound, func(d time.Duration) { got <- d })
	for i := 0; i < 21; i++ {
		gate <- struct{}{}
	}
	if d := <-got; d != 21*time.Second {
		t.Fatalf("probe delay %v, want 21s", d)
	}
}

// BenchmarkFullCallsInMemory is full calls per second (IAM, ACM, ANM, REL, RLC)
// between two stacks over an in-memory MTP, hosts included.
func BenchmarkFullCallsInMemory(b *testing.B) {
	p := newPair(b, 4000)
	ctx, cancel := context.WithCancel(context.Background())
	go p.answerer(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	p.placeCalls(b.N, 1024)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	b.StopTimer()
	cancel()
	p.stop()
}

// BenchmarkIdleCircuitMemory reports the heap bytes per idle circuit of a stack
// with 100,000 circuits (25 adjacent exchanges of 4,000 CICs).
func BenchmarkIdleCircuitMemory(b *testing.B) {
	groups := make([]Group, 25)
	for i := range groups {
		groups[i] = Group{DPC: mtp.PointCode(100 + i), Variant: isup.ITU, CICs: []CICRange{{First: 1, Last: 4000}}}
	}
	cfg := Config{OPC: 1, Groups: groups}
	var perCircuit float64
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		c := newCore(cfg, time.Now(), func(mtp.Label, []byte) {}, func(Event) {})
		runtime.GC()
		runtime.ReadMemStats(&m1)
		perCircuit = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(len(c.circuits))
		runtime.KeepAlive(c)
	}
	b.ReportMetric(perCircuit, "bytes/circuit")
}

// TestLoopServesNetworkFirst: with both queues backed up, the loop takes up to
// four inbound items for each outbound one, so host requests are never starved
// and network messages go first.
func TestLoopServesNetworkFirst(t *testing.T) {
	gate := make(chan struct{})
	var order []string
	var mu sync.Mutex
	rec := func(q string) func(*core) {
		return func(*core) { mu.Lock(); order = append(order, q); mu.Unlock() }
	}
	s := runStack(t, WithSlowdown(func() { <-gate }))
	s.outbound <- item{fn: rec("first")} // the loop takes it and waits at the gate
	for len(s.outbound) > 0 {
		runtime.Gosched()
	}
	for i := 0; i < 10; i++ {
		s.inbound <- item{fn: rec("in")}
	}
	for i := 0; i < 3; i++ {
		s.outbound <- item{fn: rec("out")}
	}
	for i := 0; i < 14; i++ {
		gate <- struct{}{}
	}
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == 14 {
			break
		}
		runtime.Gosched()
	}
	got := strings.Join(order, " ")
	want := "first in in in in out in in in in out in in out"
	if got != want {
		t.Fatalf("order\n got %s\nwant %s", got, want)
	}
}

// TestOutboundWait: the estimate is the wait of the last host request taken
// from the outbound queue while the loop is busy with others queued, and zero
// once it is idle.
func TestOutboundWait(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	gate := make(chan struct{})
	s := runStack(t, WithClock(clock), WithSlowdown(func() { <-gate }))
	if w := s.OutboundWait(); w != 0 {
		t.Fatalf("idle stack: wait %v", w)
	}
	// Three requests queued at the same instant; 30 ms later the loop takes
	// the first. Once it takes the second (and waits at the gate), the first
	// is done and the third still waits.
	for call := range 3 {
		s.Submit(Release{Call: CallID(call + 1), Cause: isup.CauseNormalClearing})
	}
	mu.Lock()
	now = now.Add(30 * time.Millisecond)
	mu.Unlock()
	gate <- struct{}{}
	for len(s.outbound) != 1 {
		runtime.Gosched()
	}
	if w := s.OutboundWait(); w != 30*time.Millisecond {
		t.Fatalf("one request behind one that waited 30ms: wait %v", w)
	}
	gate <- struct{}{}
	gate <- struct{}{}
	for i := 0; !s.idle.Load(); i++ {
		if i > 1e7 {
			t.Fatal("the loop never went idle")
		}
		runtime.Gosched()
	}
	if w := s.OutboundWait(); w != 0 {
		t.Fatalf("idle loop: wait %v, want 0", w)
	}
}

// runStack starts a stack with the test configuration, no MTP and no host,
// and returns once its loop runs; the loop is told to stop when the test ends
// (not waited for: a failed test may leave it held in a slowdown).
func runStack(t *testing.T, opts ...Option) *Stack {
	t.Helper()
	s, err := New(testConfig(isup.ITU), func(*mtp.Message) error { return nil }, func(Event) {}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Run(ctx)
	<-s.started
	return s
}
