package loadgen

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

// TestBackoffFollowsRefusals: against a gateway that admits a fixed number
// of calls a window and refuses the rest with 0x0C, the cooperative host's
// placed calls settle near what is admitted; other refusals do not slow it;
// without refusals it returns to placing every call within 2 s.
func TestBackoffFollowsRefusals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b := newBackoff(func() time.Time { return now })
	const due, admitted = 500, 100 // per window: five times the capacity
	total := 0
	for w := range 100 {
		placed := 0
		for range due {
			if b.allow() {
				placed++
				if placed > admitted {
					b.refusal(wire.StatusOutboundCongestion)
				}
			}
		}
		if w >= 50 {
			total += placed
		}
		now = now.Add(backoffWindow)
	}
	if mean := total / 50; mean < admitted*9/10 || mean > admitted*13/10 {
		t.Errorf("placed %d a window on average against %d admitted, want near it (share %.3f)", mean, admitted, b.Share())
	}
	for range 1000 {
		b.refusal(wire.StatusNoCircuit) // not congestion: no backoff
	}
	for range 20 { // no congestion refusals: back to full load within 2 s
		for range due {
			b.allow()
		}
		now = now.Add(backoffWindow)
	}
	if s := b.Share(); s != 1 {
		t.Errorf("share %.3f after the refusals stopped, want 1", s)
	}
}

// TestBackoffToleratesStrayRefusals: a gateway whose admission refuses a
// stray call in two hundred even below its capacity (a burst meeting its
// limit) must not talk the host down to a fraction of what it admits: only
// a refused share above backoffTolerance is taken as congestion.
func TestBackoffToleratesStrayRefusals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b := newBackoff(func() time.Time { return now })
	const due, admitted = 5000, 1000 // per window: five times the capacity
	total, n := 0, 0
	for w := range 200 {
		placed := 0
		for range due {
			if !b.allow() {
				continue
			}
			placed++
			if placed > admitted || placed%200 == 0 {
				b.refusal(wire.StatusOutboundCongestion)
			}
		}
		if w >= 100 {
			total += min(placed, admitted) - min(placed, admitted)/200
			n++
		}
		now = now.Add(backoffWindow)
	}
	if carried := total / n; carried < admitted*95/100 {
		t.Errorf("carried %d a window on average against %d admitted, want at least 95 %% (share %.3f)", carried, admitted, b.Share())
	}
}
