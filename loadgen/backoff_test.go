package loadgen

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

// TestBackoffFollowsRefusals: against a gateway that admits a fixed number
// of calls a window and refuses the rest with 0x0C, the cooperative host's
// placed calls settle near what is admitted; other refusals do not slow it;
// without refusals it returns to placing every call.
func TestBackoffFollowsRefusals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b := newBackoff(func() time.Time { return now })
	const due, admitted = 500, 100 // per window: five times the capacity
	var placed int
	for range 100 {
		placed = 0
		for range due {
			if b.allow() {
				placed++
				if placed > admitted {
					b.refusal(wire.StatusOutboundCongestion)
				}
			}
		}
		now = now.Add(backoffWindow)
	}
	if placed < admitted*8/10 || placed > admitted*13/10 {
		t.Errorf("placed %d a window against %d admitted, want near it (share %.3f)", placed, admitted, b.Share())
	}
	for range 1000 {
		b.refusal(wire.StatusNoCircuit) // not congestion: no backoff
	}
	for range 200 { // no congestion refusals: back to full load
		for range due {
			b.allow()
		}
		now = now.Add(backoffWindow)
	}
	if s := b.Share(); s != 1 {
		t.Errorf("share %.3f after the refusals stopped, want 1", s)
	}
}
