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
}

func (l *testLink) Name() string          { return l.name }
func (l *testLink) Available() bool       { return l.up }
func (l *testLink) Send(m *Message) error { l.sent = append(l.sent, m.SLS); return nil }

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

// TestStreamForSLSNeverZero: every SLS maps into 1..n-1.
func TestStreamForSLSNeverZero(t *testing.T) {
	for _, n := range []uint16{0, 1, 2, 3, 16, 300} {
		for sls := range 256 {
			s := StreamForSLS(uint8(sls), n)
			if s == 0 || (n >= 2 && s >= n) {
				t.Fatalf("n=%d sls=%d -> %d", n, sls, s)
			}
		}
	}
}
