// Package ratelog rate-limits log lines by reason: a flood of refusals (an
// overload sheds thousands of IAMs a second) must not flood the log, yet the
// operator must see that it happens, why, and how often.
package ratelog

import (
	"sync"
	"time"
)

// maxKeys bounds the reasons tracked (the shared overflow entry included);
// further ones share that entry, so a caller that puts unbounded text in its
// keys cannot grow memory.
const maxKeys = 64

// overflowKey is the entry the reasons beyond maxKeys share.
const overflowKey = "(other reasons)"

// Limiter lets one event per key and period through and counts the others.
// The zero value is not usable: call New. Safe for concurrent use.
type Limiter struct {
	period time.Duration
	now    func() time.Time
	mu     sync.Mutex
	keys   map[string]*entry
}

type entry struct {
	last       time.Time
	suppressed uint64
}

// New returns a limiter of one event per key and period; now is the clock
// (nil: time.Now).
func New(period time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{period: period, now: now, keys: map[string]*entry{}}
}

// Allow reports whether the event may be logged now and, if so, how many of
// the same key were suppressed since the last one logged.
func (l *Limiter) Allow(key string) (suppressed uint64, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		if len(l.keys) >= maxKeys-1 {
			key = overflowKey
			e = l.keys[key]
		}
		if e == nil {
			l.keys[key] = &entry{last: now}
			return 0, true
		}
	}
	if now.Sub(e.last) < l.period {
		e.suppressed++
		return 0, false
	}
	n := e.suppressed
	e.last, e.suppressed = now, 0
	return n, true
}
