// Package loadgen drives calls through isupgw gateways over the host API: the
// calling side places calls at a scheduled rate (constant, ramped or in steps),
// holds answered calls and releases them, and the answering side takes
// incoming calls and alerts and answers them. Both report once a second and
// at the end (text or JSON lines); `isupgw load` runs them and `isupgw bench`
// reads their JSON.
package loadgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Segment is a stretch of the schedule whose rate goes linearly from From to
// To calls/s over Dur (From == To: a constant rate).
type Segment struct {
	From, To float64
	Dur      time.Duration
}

// Schedule is the offered load: segments one after the other.
type Schedule []Segment

// Constant is a constant rate for d.
func Constant(rate float64, d time.Duration) Schedule { return Schedule{{rate, rate, d}} }

// ParseRamp reads "FROM:TO:DURATION" (e.g. 100:5000:60s), a linear ramp.
func ParseRamp(s string) (Schedule, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("ramp %q: want FROM:TO:DURATION, e.g. 100:5000:60s", s)
	}
	from, err1 := strconv.ParseFloat(parts[0], 64)
	to, err2 := strconv.ParseFloat(parts[1], 64)
	d, err3 := time.ParseDuration(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || from < 0 || to < 0 || d <= 0 {
		return nil, fmt.Errorf("ramp %q: want FROM:TO:DURATION with rates >= 0 and a positive duration, e.g. 100:5000:60s", s)
	}
	return Schedule{{from, to, d}}, nil
}

// ParseSteps reads "RATE:DURATION,RATE:DURATION,..." (e.g. 2000:5s,6000:10s,600:10s):
// constant rates one after the other. A step "A-B:DURATION" ramps from A to B.
func ParseSteps(s string) (Schedule, error) {
	var out Schedule
	for _, step := range strings.Split(s, ",") {
		r, ds, ok := strings.Cut(strings.TrimSpace(step), ":")
		if !ok {
			return nil, fmt.Errorf("step %q: want RATE:DURATION (or FROM-TO:DURATION), e.g. 2000:5s", step)
		}
		from, to := r, r
		if a, b, ramp := strings.Cut(r, "-"); ramp {
			from, to = a, b
		}
		f, err1 := strconv.ParseFloat(from, 64)
		t, err2 := strconv.ParseFloat(to, 64)
		d, err3 := time.ParseDuration(ds)
		if err1 != nil || err2 != nil || err3 != nil || f < 0 || t < 0 || d <= 0 {
			return nil, fmt.Errorf("step %q: want RATE:DURATION with a rate >= 0 and a positive duration, e.g. 2000:5s", step)
		}
		out = append(out, Segment{f, t, d})
	}
	return out, nil
}

// Duration is the length of the whole schedule.
func (s Schedule) Duration() time.Duration {
	var d time.Duration
	for _, g := range s {
		d += g.Dur
	}
	return d
}

// segmentAt returns the index of the segment t falls in and t relative to its
// start; past the end, the last segment and its length.
func (s Schedule) segmentAt(t time.Duration) (int, time.Duration) {
	for i, g := range s {
		if t < g.Dur || i == len(s)-1 {
			return i, min(t, g.Dur)
		}
		t -= g.Dur
	}
	return 0, 0
}

// RateAt is the asked rate (calls/s) at t from the start.
func (s Schedule) RateAt(t time.Duration) float64 {
	if len(s) == 0 || t < 0 || t >= s.Duration() {
		return 0
	}
	i, in := s.segmentAt(t)
	g := s[i]
	return g.From + (g.To-g.From)*in.Seconds()/g.Dur.Seconds()
}

// Phase is the index of the segment t falls in (the last one past the end).
func (s Schedule) Phase(t time.Duration) int {
	i, _ := s.segmentAt(t)
	return i
}

// cum is the number of calls a segment asks for in its first t.
func (g Segment) cum(t time.Duration) float64 {
	x := t.Seconds()
	return g.From*x + (g.To-g.From)*x*x/(2*g.Dur.Seconds())
}

// Due is how many calls the schedule asks for by t (a real number; the n-th
// call is due when Due reaches n).
func (s Schedule) Due(t time.Duration) float64 {
	var n float64
	for _, g := range s {
		if t <= 0 {
			break
		}
		n += g.cum(min(t, g.Dur))
		t -= g.Dur
	}
	return n
}

// TimeOf is when the n-th call (1-based) is due; ok is false if the schedule
// never asks for n calls.
func (s Schedule) TimeOf(n float64) (time.Duration, bool) {
	var base time.Duration
	for _, g := range s {
		total := g.cum(g.Dur)
		if n > total+1e-9 {
			n -= total
			base += g.Dur
			continue
		}
		a, T := g.From, g.Dur.Seconds()
		var x float64
		if k := (g.To - g.From) / (2 * T); math.Abs(k) < 1e-12 {
			x = n / a
		} else {
			// k x^2 + a x - n = 0, the root in [0, T].
			x = (-a + math.Sqrt(a*a+4*k*n)) / (2 * k)
		}
		x = math.Max(0, math.Min(x, T))
		return base + time.Duration(math.Ceil(x*float64(time.Second))), true
	}
	return 0, false
}

// Total is how many calls the whole schedule asks for.
func (s Schedule) Total() uint64 { return uint64(s.Due(s.Duration()) + 1e-9) }

// pacer hands out call numbers as they fall due.
type pacer struct {
	sched  Schedule
	total  uint64
	issued uint64
}

func newPacer(s Schedule) *pacer { return &pacer{sched: s, total: s.Total()} }

// next returns the call numbers (first..last, 1-based) due by elapsed that were
// not handed out yet; first > last when none is.
func (p *pacer) next(elapsed time.Duration) (first, last uint64) {
	due := min(uint64(p.sched.Due(elapsed)+1e-9), p.total)
	first, last = p.issued+1, due
	if due > p.issued {
		p.issued = due
	}
	return first, last
}

// done reports whether every call of the schedule was handed out.
func (p *pacer) done() bool { return p.issued >= p.total }
