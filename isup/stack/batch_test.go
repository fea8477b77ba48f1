package stack

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// TestBatchIntervalGathersWorkWhileBusy: with a batch interval the loop
// takes the first item after a quiet spell at once, then waits out the rest
// of the interval; what was queued during the wait is taken in the next
// pass; after a pass longer than the interval it looks again at once, and a
// look that finds nothing lets it go idle without waiting.
// The clock is fake (each item takes 3 ms of it) and the wait is the test's.
func TestBatchIntervalGathersWorkWhileBusy(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	waits := make(chan time.Duration)
	resume := make(chan struct{})
	cfg := testConfig(isup.ITU)
	cfg.BatchInterval = 10 * time.Millisecond
	s, err := New(cfg, func(*mtp.Message) error { return nil }, func(Event) {},
		WithClock(clock),
		WithSlowdown(func() { mu.Lock(); now = now.Add(3 * time.Millisecond); mu.Unlock() }),
		func(s *Stack) { s.sleep = func(d time.Duration) { waits <- d; <-resume } })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	<-s.started

	inspect := func() <-chan struct{} {
		done := make(chan struct{})
		go func() {
			if _, err := s.Inspect(ctx); err == nil {
				close(done)
			}
		}()
		return done
	}
	waitIdle := func() {
		for i := 0; !s.idle.Load(); i++ {
			if i > 1e7 {
				t.Fatal("the loop never went idle")
			}
			runtime.Gosched()
		}
	}

	waitIdle()
	before := s.handled // the idle loop wrote it before its atomic idle flag
	first := inspect()
	if d := <-waits; d != 7*time.Millisecond {
		t.Fatalf("wait after a pass of 3ms: %v, want the rest of 10ms, 7ms", d)
	}
	if n := s.handled - before; n != 1 { // written before the wait was asked for
		t.Fatalf("%d items taken before the first wait, want the one that woke the loop", n)
	}
	<-first
	// Two items arrive while the loop waits: neither is taken until the wait ends.
	second, third := inspect(), inspect()
	for len(s.outbound) != 2 {
		runtime.Gosched()
	}
	resume <- struct{}{}
	if d := <-waits; d != 4*time.Millisecond {
		t.Fatalf("wait after a pass of two items (6ms): %v, want 4ms", d)
	}
	<-second
	<-third
	// Four items arrive during this wait: their pass takes 12ms, longer than
	// the interval, so the loop looks again at once; that look finds nothing,
	// and the loop goes idle without waiting.
	var rest []<-chan struct{}
	for range 4 {
		rest = append(rest, inspect())
	}
	for len(s.outbound) != 4 {
		runtime.Gosched()
	}
	resume <- struct{}{}
	for _, done := range rest {
		<-done
	}
	waitIdle()
	select {
	case d := <-waits:
		t.Fatalf("the loop waited %v after a pass longer than the interval", d)
	default:
	}
}
