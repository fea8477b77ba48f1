package libss7

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Event is one JSON line printed by farend. Dir is "rx" or "tx" for ISUP
// messages libss7 delivered or farend sent, "wire_rx"/"wire_tx" for signal
// units seen on the socket (with --wire), "local" for farend's own events
// (START, MTP2_UP, SS7_UP, READY, DONE, DUAL_SEIZURE, EXIT, ...) and "log"
// for libss7's own messages.
type Event struct {
	T          int64  `json:"t"`
	Dir        string `json:"dir"`
	Msg        string `json:"msg"`
	CIC        int    `json:"cic"` // -1 when the line has none
	Called     string `json:"called"`
	Calling    string `json:"calling"`
	CalledNAI  int    `json:"called_nai"`
	CallingNAI int    `json:"calling_nai"`
	Cause      int    `json:"cause"`
	Range      int    `json:"range"`
	Type       int    `json:"type"`
	Status     string `json:"status"`
	States     string `json:"states"`
	Event      int    `json:"event"`
	Text       string `json:"text"`
	Hex        string `json:"hex"`

	// Line is the line as printed, for fields not named above (the
	// counters of EXIT, DONE's figures).
	Line string `json:"-"`
}

// UnmarshalJSON keeps CIC at -1 when the line carries none.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	p := plain{CIC: -1}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Event(p)
	e.Line = string(b)
	return nil
}

// Int reads a numeric field of the line by name (0 when absent).
func (e Event) Int(name string) int {
	var m map[string]any
	if json.Unmarshal([]byte(e.Line), &m) != nil {
		return 0
	}
	if f, ok := m[name].(float64); ok {
		return int(f)
	}
	return 0
}

// Counters reads one of EXIT's counter objects ("rx", "tx", "wire_rx",
// "wire_tx"): message name to count.
func (e Event) Counters(name string) map[string]int {
	var m map[string]json.RawMessage
	out := map[string]int{}
	if json.Unmarshal([]byte(e.Line), &m) != nil {
		return out
	}
	_ = json.Unmarshal(m[name], &out)
	return out
}

func (e Event) String() string {
	if e.Line != "" {
		return e.Line
	}
	return fmt.Sprintf("%s %s cic=%d %s", e.Dir, e.Msg, e.CIC, e.Text)
}

// Match selects events.
type Match func(Event) bool

// Msg matches dir and msg, and the CIC unless cic is negative.
func Msg(dir, msg string, cic int) Match {
	return func(e Event) bool {
		return e.Dir == dir && e.Msg == msg && (cic < 0 || e.CIC == cic)
	}
}

// Log collects farend's events as they arrive and lets a test wait for
// them, always bounded by a timeout.
type Log struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{}
	closed  bool
}

func newLog() *Log {
	return &Log{changed: make(chan struct{})}
}

func (l *Log) add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

func (l *Log) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.changed)
		l.changed = make(chan struct{})
	}
	l.mu.Unlock()
}

// All returns a copy of every event so far.
func (l *Log) All() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Mark is the number of events so far; pass it to WaitAfter to wait only
// for what comes next.
func (l *Log) Mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Count counts the matching events so far.
func (l *Log) Count(m Match) int {
	n := 0
	for _, e := range l.All() {
		if m(e) {
			n++
		}
	}
	return n
}

// Select returns the matching events so far, in order.
func (l *Log) Select(m Match) []Event {
	var out []Event
	for _, e := range l.All() {
		if m(e) {
			out = append(out, e)
		}
	}
	return out
}

// Wait returns the first matching event, already seen or still to come.
func (l *Log) Wait(timeout time.Duration, m Match) (Event, error) {
	return l.WaitAfter(0, timeout, m)
}

// WaitAfter returns the first matching event at index mark or later.
func (l *Log) WaitAfter(mark int, timeout time.Duration, m Match) (Event, error) {
	evs, err := l.waitN(mark, 1, timeout, m)
	if err != nil {
		return Event{}, err
	}
	return evs[0], nil
}

// WaitCount waits until n events match (counting from the start) and
// returns them.
func (l *Log) WaitCount(n int, timeout time.Duration, m Match) ([]Event, error) {
	return l.waitN(0, n, timeout, m)
}

func (l *Log) waitN(mark, n int, timeout time.Duration, m Match) ([]Event, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		var found []Event
		for i := mark; i < len(l.events) && len(found) < n; i++ {
			if m(l.events[i]) {
				found = append(found, l.events[i])
			}
		}
		changed, closed := l.changed, l.closed
		l.mu.Unlock()
		if len(found) >= n {
			return found, nil
		}
		if closed {
			return nil, fmt.Errorf("farend exited after %d of %d matching events; last lines:\n%s", len(found), n, l.tail(15))
		}
		select {
		case <-changed:
		case <-deadline.C:
			return nil, fmt.Errorf("timed out after %v with %d of %d matching events; last lines:\n%s", timeout, len(found), n, l.tail(15))
		}
	}
}

func (l *Log) tail(n int) string {
	all := l.All()
	if len(all) > n {
		all = all[len(all)-n:]
	}
	var b strings.Builder
	for _, e := range all {
		b.WriteString("  ")
		b.WriteString(e.String())
		b.WriteString("\n")
	}
	return b.String()
}
