package loadgen

import (
	"sync"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

// backoff is the cooperative host's throttle: what the CSP asks of hosts on
// 0x0C "Outbound Congestion" and Code Yellow's "high traffic, try later",
// done the way RFC 7339's loss-based overload control has a client do it.
// Once a window, a refused share above backoffTolerance cuts the share of
// due calls it places by that share (by at most half, so a burst of
// refusals does not silence it): it then offers what the gateway admitted.
// A window refused less raises it by a tenth (and a little more, so it
// recovers from near zero within a few seconds). The tolerance keeps the
// stray refusal of a burst meeting the gateway's limit, which comes at any
// load near capacity, from talking the host down a little every window.
// Calls it does not place are counted as skipped.
type backoff struct {
	mu      sync.Mutex
	now     func() time.Time
	window  time.Duration
	start   time.Time
	placed  int
	refused int
	share   float64
	credit  float64 // the share of each due call, spent a whole call at a time
}

// backoffWindow is how often the share is adjusted.
const backoffWindow = 100 * time.Millisecond

// backoffTolerance is the refused share of a window not taken as congestion.
const backoffTolerance = 0.01

func newBackoff(now func() time.Time) *backoff {
	return &backoff{now: now, window: backoffWindow, share: 1}
}

// congestion reports whether a refusal asks the host to throttle.
func congestion(s wire.Status) bool {
	return s == wire.StatusOutboundCongestion || s == wire.StatusHighTraffic
}

// allow says whether a due call is placed: of n due calls at a steady
// share, n x share are, evenly spread.
func (b *backoff) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.start.IsZero() {
		b.start = now
	}
	if now.Sub(b.start) >= b.window {
		switch refused := float64(b.refused) / float64(max(b.placed, 1)); {
		case b.placed == 0 && b.refused > 0:
			// only late answers to the window before: hold
		case refused > backoffTolerance:
			b.share *= max(1-refused, 0.5)
		default:
			b.share = b.share*1.1 + 0.01
		}
		b.share = min(max(b.share, 0.001), 1)
		b.start, b.placed, b.refused = now, 0, 0
	}
	if b.credit += b.share; b.credit < 1 {
		return false
	}
	b.credit--
	b.placed++
	return true
}

// refusal records a refused outseize.
func (b *backoff) refusal(s wire.Status) {
	if !congestion(s) {
		return
	}
	b.mu.Lock()
	b.refused++
	b.mu.Unlock()
}

// Share is the share of due calls placed now.
func (b *backoff) Share() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.share
}
