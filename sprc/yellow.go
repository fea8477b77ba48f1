package sprc

import "time"

// codeYellow is Cisco's call throttling on the same probe delays, in ms.
type codeYellow struct {
	consecutive int // seconds of consecutive non-zero latency sampled
	samples     []time.Duration
	yellow      bool
	since       time.Time
	red         bool
	// sampleActivity is CUCM's ThrottlingSampleActivity: non-zero while
	// non-zero latency is being sampled.
	sampleActivity int
}

// sample adds one probe-period's latency. It reports whether Code Yellow was
// entered (+1), left (-1) or neither (0), and whether Code Red was reached.
func (y *codeYellow) sample(d time.Duration, now time.Time, cfg *CodeYellowConfig) (change int, red bool) {
	if !cfg.Enabled {
		return 0, false
	}
	d = d.Truncate(time.Millisecond) // latency is counted in whole milliseconds
	if d <= 0 {
		y.consecutive, y.samples = 0, y.samples[:0]
	} else {
		y.consecutive++
		y.samples = append(y.samples, d)
		if len(y.samples) > cfg.SampleSize {
			y.samples = y.samples[1:]
		}
	}
	y.sampleActivity = y.consecutive
	avg := time.Duration(0)
	for _, s := range y.samples {
		avg += s
	}
	if len(y.samples) > 0 {
		avg /= time.Duration(len(y.samples))
	}
	switch {
	case !y.yellow && y.consecutive >= cfg.SampleSize && avg > cfg.EntryLatency:
		y.yellow, y.since = true, now
		change = 1
	case y.yellow && avg <= cfg.EntryLatency*time.Duration(cfg.ExitPercent)/100:
		y.yellow = false
		change = -1
	}
	if y.yellow && cfg.Duration > 0 && now.Sub(y.since) > cfg.Duration && !y.red {
		y.red = true
		return change, true
	}
	return change, false
}
