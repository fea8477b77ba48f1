// Package l2test has a fake clock for the link and MTP3 tests.
package l2test

import (
	"sort"
	"sync"
	"time"

	"github.com/isupgw/isupgw/mtp/mtp3/l2"
)

// Clock is a fake l2.Clock: time moves only in Advance, which runs the
// timers that fall due, in order, on the caller's goroutine.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*timer
}

type timer struct {
	c       *Clock
	at      time.Time
	seq     int
	f       func()
	stopped bool
}

// New returns a fake clock at a fixed instant.
func New() *Clock { return &Clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// Now is the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run when Advance passes now+d.
func (c *Clock) AfterFunc(d time.Duration, f func()) l2.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Pending is how many timers are armed.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// Advance moves time forward by d, firing due timers in time order (those
// armed by a firing timer too, if they fall within d).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	c.AdvanceTo(end)
}

// AdvanceTo moves time forward to t (never back).
func (c *Clock) AdvanceTo(end time.Time) {
	for {
		c.mu.Lock()
		live := c.timers[:0]
		for _, t := range c.timers {
			if !t.stopped {
				live = append(live, t)
			}
		}
		c.timers = live
		sort.Slice(live, func(i, j int) bool {
			if !live[i].at.Equal(live[j].at) {
				return live[i].at.Before(live[j].at)
			}
			return live[i].seq < live[j].seq
		})
		if len(live) == 0 || live[0].at.After(end) {
			if end.After(c.now) {
				c.now = end
			}
			c.mu.Unlock()
			return
		}
		t := live[0]
		t.stopped = true
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
	}
}
