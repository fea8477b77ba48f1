package stack

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
)

// TestStoppedTimersDoNotPileUp: calls that stop their long timers (T7, T9)
// leave stale entries; the queue must not keep them all until they would have
// expired (at thousands of calls a second it grew to millions of entries and
// each doubling stalled the loop), and a timer that is still running must
// fire at its deadline through the sweeps.
func TestStoppedTimersDoNotPileUp(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	c := h.c
	const keep = 5 // circuit index whose T9 keeps running
	c.startTimer(keep, tT9)
	deadline := h.now.Add(c.cfg.Timers.T9)
	const rounds = 200_000
	for i := range rounds {
		ci := int32(i % len(c.circuits))
		if ci == keep {
			continue
		}
		c.startTimer(ci, tT7)
		c.startTimer(ci, tT9)
		c.stopTimer(ci, tT7)
		c.stopTimer(ci, tT9)
		// Without sweeping it would hold 2 entries per round.
		if max := 2*c.pendingTimers() + 4096 + 1; len(c.timerq) > max {
			t.Fatalf("after %d stopped pairs the timer queue holds %d entries for %d running timers (want at most %d)",
				i+1, len(c.timerq), c.pendingTimers(), max)
		}
	}
	if n := c.pendingTimers(); n != 1 {
		t.Fatalf("%d timers running, want only the kept T9", n)
	}
	h.advance(deadline.Sub(h.now) - time.Millisecond)
	if c.stats.TimerExpiries[tT9] != 0 {
		t.Fatal("T9 fired before its deadline")
	}
	h.advance(time.Millisecond)
	if c.stats.TimerExpiries[tT9] != 1 || c.stats.TimerExpiries[tT7] != 0 {
		t.Fatalf("expiries T9 %d T7 %d, want 1 and 0 (stopped timers must stay stopped)", c.stats.TimerExpiries[tT9], c.stats.TimerExpiries[tT7])
	}
}

// BenchmarkTimerStartStop is the cost of a call's start and stop of T7.
func BenchmarkTimerStartStop(b *testing.B) {
	h := newHarness(b, testConfig(isup.ITU))
	c := h.c
	n := int32(len(c.circuits))
	var i int32
	for b.Loop() {
		c.startTimer(i%n, tT7)
		c.stopTimer(i%n, tT7)
		i++
	}
}

// TestTimerHeapOrder: entries come out by deadline, equal deadlines in start
// order, after pushes, pops and a rebuild mixed at random.
func TestTimerHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h timerHeap
	var ord uint64
	var out []timerEntry
	for i := range 3000 {
		switch {
		case r.IntN(3) > 0 || len(h) == 0:
			ord++
			h.push(timerEntry{at: int64(r.IntN(50)), ord: ord})
		default:
			out = append(out, h.pop())
		}
		if i%1000 == 999 {
			h.init()
		}
		for c := 1; c < len(h); c++ {
			if h.less(c, (c-1)/2) {
				t.Fatalf("step %d: entry %d sorts before its parent", i, c)
			}
		}
	}
	for len(h) > 0 {
		out = append(out, h.pop())
	}
	if int(ord) != len(out) {
		t.Fatalf("pushed %d, popped %d", ord, len(out))
	}
	// Between pushes the popped sequence is only locally ordered; check the
	// invariant directly on a fresh heap drained in one go.
	for i := range 1000 {
		h.push(timerEntry{at: int64(r.IntN(20)), ord: uint64(i)})
	}
	prev := h.pop()
	for len(h) > 0 {
		e := h.pop()
		if e.at < prev.at || e.at == prev.at && e.ord < prev.ord {
			t.Fatalf("popped %+v after %+v", e, prev)
		}
		prev = e
	}
}
