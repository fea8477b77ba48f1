package mtp

import (
	"errors"
	"testing"
	"time"
)

type testLink struct {
	name string
	up   bool
	sent []uint8
	tags []byte // first payload octet of each message sent
}

func (l *testLink) Name() string    { return l.name }
func (l *testLink) Available() bool { return l.up }
func (l *testLink) Send(m *Message) error {
	l.sent = append(l.sent, m.SLS)
	l.tags = append(l.tags, m.Payload...)
	return nil
}

type manualNow struct{ t time.Time }

func (c *manualNow) now() time.Time { return c.t }

// TestLoadshareSpreadsAndSticks: SLS spreads over both links; an SLS stays
// on its link while it is up; a failed link's SLSs move at once.
func TestLoadshareSpreadsAndSticks(t *testing.T) {
	a, b := &testLink{name: "a", up: true}, &testLink{name: "b", up: true}
	clk := &manualNow{t: time.Unix(0, 0)}
	tab := NewTable(WithNow(clk.now), WithRerouteDelay(time.Second))
	tab.Add(7, Loadshare, a, b)
	for sls := range 16 {
		if err := tab.Transfer(&Message{Label: Label{DPC: 7, SLS: uint8(sls)}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.sent) != 8 || len(b.sent) != 8 {
		t.Fatalf("spread %d/%d", len(a.sent), len(b.sent))
	}
	a.up = false
	for sls := range 16 {
		l, err := tab.Select(7, uint8(sls))
		if err != nil || l != b {
			t.Fatalf("failover: SLS %d on %v (%v)", sls, l, err)
		}
	}
	// a returns: SLSs that were sent within the reroute delay stay on b...
	a.up = true
	clk.t = clk.t.Add(500 * time.Millisecond)
	if l, _ := tab.Select(7, 0); l != b {
		t.Fatal("SLS 0 moved back while recently used")
	}
	// ...and move back once idle for the delay, so no message overtakes one
	// still in flight on the other association.
	clk.t = clk.t.Add(time.Second)
	if l, _ := tab.Select(7, 0); l != a {
		t.Fatal("SLS 0 did not return to its preferred link after the delay")
	}
}

// TestOverrideAndProhibited: override sends everything on the first
// available link; DUNA on it moves traffic to the next; with none left the
// destination is unavailable; DAVA over a range restores it.
func TestOverrideAndProhibited(t *testing.T) {
	a, b := &testLink{name: "a", up: true}, &testLink{name: "b", up: true}
	tab := NewTable(WithRerouteDelay(0))
	tab.Add(0x100, Override, a, b)
	for sls := range 8 {
		if l, _ := tab.Select(0x100, uint8(sls)); l != a {
			t.Fatal("override did not use the first link")
		}
	}
	tab.SetProhibited("a", 0x100, 0, true)
	if l, _ := tab.Select(0x100, 1); l != b {
		t.Fatal("prohibited link still chosen")
	}
	tab.SetProhibited("b", 0x1ff, 8, true) // a DUNA for the whole 0x100-0x1ff range
	if _, err := tab.Select(0x100, 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
	tab.SetProhibited("b", 0x100, 8, false)
	if l, err := tab.Select(0x100, 1); l != b || err != nil {
		t.Fatalf("after DAVA: %v %v", l, err)
	}
	if _, err := tab.Select(0x200, 1); !errors.Is(err, ErrNoRoute) {
		t.Fatalf("unknown DPC: %v", err)
	}
	tab.SetDefault(Loadshare, a)
	tab.ClearProhibited("a")
	if l, _ := tab.Select(0x200, 1); l != a {
		t.Fatal("default route not used")
	}
}

// TestStreamForSLS: with two streams or more every SLS maps into 1..n-1 (never
// stream 0); with a single stream (or none reported), onto stream 0, the only
// one that exists (issue 13: it picked stream 1).
func TestStreamForSLS(t *testing.T) {
	for _, n := range []uint16{0, 1, 2, 3, 16, 300} {
		for sls := range 256 {
			s := StreamForSLS(uint8(sls), n)
			if n < 2 && s != 0 || n >= 2 && (s == 0 || s >= n) {
				t.Fatalf("n=%d sls=%d -> %d", n, sls, s)
			}
		}
	}
}

// TestChangeoverHoldsThenSendsInOrder: when an SLS's link fails, messages
// for it are held until the changeover delay since its last send has
// passed, then go out in order on the new link, with later ones queued
// behind; SLSs idle long enough move at once.
func TestChangeoverHoldsThenSendsInOrder(t *testing.T) {
	a, b := &testLink{name: "a", up: true}, &testLink{name: "b", up: true}
	clk := &manualNow{t: time.Unix(0, 0)}
	var pending func()
	var wait time.Duration
	tab := NewTable(WithNow(clk.now), WithRerouteDelay(time.Second),
		WithAfterFunc(func(d time.Duration, f func()) { wait, pending = d, f }))
	tab.Add(7, Loadshare, a, b)
	send := func(sls uint8, tag byte) {
		t.Helper()
		if err := tab.Transfer(&Message{Label: Label{DPC: 7, SLS: sls}, Payload: []byte{tag}}); err != nil {
			t.Fatal(err)
		}
	}
	send(0, 1) // SLS 0 -> a
	send(2, 1) // SLS 2 -> a, then idle
	clk.t = clk.t.Add(1500 * time.Millisecond)
	send(0, 2)
	a.up = false
	clk.t = clk.t.Add(300 * time.Millisecond)
	send(0, 3)
	send(0, 4)
	if len(b.sent) != 0 || tab.Held.Load() != 2 || pending == nil || wait != 700*time.Millisecond {
		t.Fatalf("not held: b=%v held=%d wait=%v", b.sent, tab.Held.Load(), wait)
	}
	send(2, 9) // idle for 1.8 s: moves to b at once
	if len(b.sent) != 1 {
		t.Fatalf("idle SLS held: %v", b.sent)
	}
	clk.t = clk.t.Add(wait)
	pending()
	send(0, 5)
	if string(b.tags) != string([]byte{9, 3, 4, 5}) || tab.Dropped.Load() != 0 {
		t.Fatalf("after changeover b got tags %v, dropped %d", b.tags, tab.Dropped.Load())
	}
}
