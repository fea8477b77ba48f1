package sprc

import "time"

// Level is a congestion level: 0 none, 1 or 2.
type Level uint8

// Level-2 thresholds are fixed by the CSP's definition; only level 1 and the
// clearing threshold are configurable.
const (
	Level2Delay   = 12 * time.Second
	Level2Average = 6 * time.Second
)

// Direction is one of the two monitored queues.
type Direction uint8

// Directions.
const (
	Inbound Direction = iota
	Outbound
)

func (d Direction) String() string {
	if d == Inbound {
		return "inbound"
	}
	return "outbound"
}

// levelMachine is the congestion state of one direction.
type levelMachine struct {
	level   Level
	window  []time.Duration // the last AverageOver probe delays, ring buffer
	next    int
	sum     time.Duration
	last    time.Duration
	average time.Duration
}

func newLevelMachine(n int) levelMachine { return levelMachine{window: make([]time.Duration, n)} }

// record adds a probe delay and returns the new level. The window starts as
// zeros (an idle gateway), so the average is always over the last N periods.
func (m *levelMachine) record(d time.Duration, cfg *Config) Level {
	m.sum += d - m.window[m.next]
	m.window[m.next] = d
	m.next = (m.next + 1) % len(m.window)
	m.last, m.average = d, m.sum/time.Duration(len(m.window))
	m.level = m.nextLevel(cfg)
	return m.level
}

// nextLevel applies the diagram in the package comment.
func (m *levelMachine) nextLevel(cfg *Config) Level {
	l2 := m.last >= Level2Delay || m.average >= Level2Average
	l1 := m.last >= cfg.Level1Delay || m.average >= cfg.Level1Average
	switch {
	case l2:
		return 2
	case m.level == 0 && l1:
		return 1
	case m.level > 0 && m.average < cfg.ClearAverage:
		return 0
	case m.level == 2:
		return 1 // neither level-2 condition holds any more
	}
	return m.level
}
