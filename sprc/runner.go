package sprc

import (
	"context"
	"sync"
	"time"
)

// Prober puts a probe into a queue; done gets the time it waited.
type Prober func(dir Direction, done func(time.Duration))

// Runner sends a probe through each queue every probe interval and gives the
// controller one delay per queue and period: the worst of the probes that came
// back and the age of the oldest still waiting, so a queue that has stopped
// moving shows up within one period rather than when its probe finally returns.
type Runner struct {
	c     *Controller
	probe Prober
	now   func() time.Time

	mu          sync.Mutex
	outstanding [2][]time.Time // send times, oldest first (queues are FIFO)
	worst       [2]time.Duration
	got         [2]bool
}

// NewRunner ties a controller to the queues it measures.
func NewRunner(c *Controller, probe Prober, now func() time.Time) *Runner {
	return &Runner{c: c, probe: probe, now: now}
}

// Period closes a probe period (recording each queue's delay) and sends the
// next probes. Outbound is recorded first so that Code Yellow, sampled with the
// inbound delay, sees both queues of the same period.
func (r *Runner) Period() {
	now := r.now()
	for _, dir := range []Direction{Outbound, Inbound} {
		r.mu.Lock()
		sample, have := r.worst[dir], r.got[dir]
		if q := r.outstanding[dir]; len(q) > 0 {
			sample, have = max(sample, now.Sub(q[0])), true
		}
		r.worst[dir], r.got[dir] = 0, false
		r.outstanding[dir] = append(r.outstanding[dir], now)
		r.mu.Unlock()
		if have {
			r.c.Probe(dir, sample)
		}
		r.probe(dir, func(d time.Duration) { r.back(dir, d) })
	}
}

func (r *Runner) back(dir Direction, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.outstanding[dir]; len(q) > 0 {
		r.outstanding[dir] = q[1:]
	}
	r.worst[dir], r.got[dir] = max(r.worst[dir], d), true
}

// Run calls Period every probe interval and the controller's Tick ten times as
// often, until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	interval := r.c.Config().ProbeInterval
	period := time.NewTicker(interval)
	tick := time.NewTicker(max(interval/10, time.Millisecond))
	defer period.Stop()
	defer tick.Stop()
	r.Period()
	for {
		select {
		case <-ctx.Done():
			return
		case <-period.C:
			r.Period()
		case <-tick.C:
			r.c.Tick()
		}
	}
}
