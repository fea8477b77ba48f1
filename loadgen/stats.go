package loadgen

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Percentile is the nearest-rank percentile p (0-100) of sorted samples; 0
// without samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999999)
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// Latency summarises setup latencies in milliseconds.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Summarise sorts d in place and returns its percentiles.
func Summarise(d []time.Duration) Latency {
	slices.Sort(d)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	l := Latency{N: len(d)}
	if len(d) > 0 {
		l.P50, l.P90, l.P99, l.Max = ms(Percentile(d, 50)), ms(Percentile(d, 90)), ms(Percentile(d, 99)), ms(d[len(d)-1])
	}
	return l
}

// Counts is what happened to calls over an interval, a phase or the run.
type Counts struct {
	Offered   uint64 `json:"offered"`   // outseizes sent
	Admitted  uint64 `json:"admitted"`  // acked: an IAM went out
	Answered  uint64 `json:"answered"`  // answered (ANM or CON)
	Completed uint64 `json:"completed"` // answered, held and released by us with normal clearing
	Failed    uint64 `json:"failed"`    // admitted, then released by the far end or the network before we released
	Skipped   uint64 `json:"skipped"`   // due but not offered: the concurrency cap was reached
	Errors    uint64 `json:"errors"`    // requests that failed without a nak (connection lost, timeout)
	// With several gateways: Redirected counts outseizes a standby refused
	// (nak 0x0120) that were sent on to another gateway; calls refused
	// because of standby with no other gateway to go to are Refused["standby"].
	// Lost counts admitted calls whose gateway connection ended before
	// their released (also in Failed).
	Redirected uint64 `json:"redirected,omitempty"`
	Lost       uint64 `json:"lost,omitempty"`
	// Refused counts naks of outseize by status name (e.g. outbound_congestion).
	Refused map[string]uint64 `json:"refused,omitempty"`
	// Causes counts released calls by Q.850 cause.
	Causes map[string]uint64 `json:"causes,omitempty"`
	// ACL counts released events that carried an automatic congestion level;
	// MaxACL is the highest seen.
	ACL    uint64  `json:"acl_seen"`
	MaxACL uint8   `json:"max_acl,omitempty"`
	Setup  Latency `json:"setup"` // outseize sent to answered received
}

// RefusedTotal sums the refusals.
func (c Counts) RefusedTotal() uint64 {
	var n uint64
	for _, v := range c.Refused {
		n += v
	}
	return n
}

// bucket accumulates Counts and the raw setup latencies.
type bucket struct {
	c     Counts
	setup []time.Duration
	// firstRefusal is when the first refusal of the bucket came (zero: none).
	firstRefusal time.Time
	maxLag       time.Duration
}

func newBucket() *bucket {
	return &bucket{c: Counts{Refused: map[string]uint64{}, Causes: map[string]uint64{}}}
}

func (b *bucket) counts() Counts {
	c := b.c
	c.Refused, c.Causes = maps.Clone(b.c.Refused), maps.Clone(b.c.Causes)
	c.Setup = Summarise(slices.Clone(b.setup))
	return c
}

// Second is the report of one interval (a line a second).
type Second struct {
	Type string `json:"type"` // "second"
	// T is the end of the interval in seconds since the start of the schedule.
	T float64 `json:"t"`
	// Asked is the rate the schedule asked for at the end of the interval.
	Asked float64 `json:"asked"`
	Counts
	Active int `json:"active"` // calls placed and not yet released
	// LagMS is the largest delay between when a call was due and when its
	// outseize was sent, in this interval.
	LagMS float64 `json:"lag_ms"`
	// FirstRefusal is when the interval's first refusal came, in seconds
	// since the start (absent without refusals).
	FirstRefusal *float64 `json:"first_refusal_s,omitempty"`
}

// Phase is the report of one segment of the schedule; calls count in the
// phase in which they were due.
type Phase struct {
	Index    int     `json:"index"`
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	StartS   float64 `json:"start_s"`
	Duration float64 `json:"duration_s"`
	Counts
	// Rates over the phase's duration (calls/s).
	OfferedRate   float64 `json:"offered_per_s"`
	AdmittedRate  float64 `json:"admitted_per_s"`
	CompletedRate float64 `json:"completed_per_s"`
	MaxLagMS      float64 `json:"max_lag_ms"`
	// FirstRefusal: the phase's first refusal, in seconds since the start.
	FirstRefusal *float64 `json:"first_refusal_s,omitempty"`
}

// Final is the report at the end of a run.
type Final struct {
	Type string `json:"type"` // "final"
	// StartUnixNano is when the schedule started (the wall clock, so that
	// another process on the machine can line up its own observations).
	StartUnixNano int64   `json:"start_unix_ns"`
	DurationS     float64 `json:"duration_s"`
	Asked         uint64  `json:"asked"` // calls the schedule asked for
	Counts
	OfferedRate   float64 `json:"offered_per_s"`
	AdmittedRate  float64 `json:"admitted_per_s"`
	CompletedRate float64 `json:"completed_per_s"`
	Unfinished    int     `json:"unfinished"` // calls still up when the run gave up waiting
	MaxLagMS      float64 `json:"max_lag_ms"`
	// KeptUp is false when the generator could not offer the asked load: its
	// lag went over LagLimit or fewer calls were offered than asked (not
	// counting those skipped by the concurrency cap).
	KeptUp bool    `json:"kept_up"`
	Phases []Phase `json:"phases,omitempty"`
	// Gateways: each gateway's share, with several addresses.
	Gateways []GatewayReport `json:"gateways,omitempty"`
}

// GatewayReport is what one of several gateways carried.
type GatewayReport struct {
	Address     string `json:"address"`
	Admitted    uint64 `json:"admitted"`
	Completed   uint64 `json:"completed"`
	Lost        uint64 `json:"lost"`         // calls in progress when its connection ended
	StandbyNaks uint64 `json:"standby_naks"` // outseizes it refused as standby
	Reconnects  uint64 `json:"reconnects"`   // dialled again after its connections ended
}

// AnswerSecond is a line a second of the answering side.
type AnswerSecond struct {
	Type     string            `json:"type"` // "answer"
	T        float64           `json:"t"`
	Incoming uint64            `json:"incoming"`
	Answered uint64            `json:"answered"`
	Released uint64            `json:"released"`
	Errors   uint64            `json:"errors"`
	Causes   map[string]uint64 `json:"causes,omitempty"`
	Active   int               `json:"active"`
}

// Line is one decoded report line: exactly one of the pointers is set.
type Line struct {
	Second *Second
	Final  *Final
	Answer *AnswerSecond
}

// ParseLine decodes one JSON report line.
func ParseLine(b []byte) (Line, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Line{}, fmt.Errorf("report line: %w", err)
	}
	var l Line
	var v any
	switch head.Type {
	case "second":
		l.Second = &Second{}
		v = l.Second
	case "final":
		l.Final = &Final{}
		v = l.Final
	case "answer":
		l.Answer = &AnswerSecond{}
		v = l.Answer
	default:
		return Line{}, fmt.Errorf("report line: unknown type %q", head.Type)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return Line{}, fmt.Errorf("report line %s: %w", head.Type, err)
	}
	return l, nil
}

// ParseReport reads a stream of JSON report lines (as `isupgw load --json`
// writes them) and returns the seconds and the final report; lines that are
// not JSON objects are skipped.
func ParseReport(r io.Reader) ([]Second, *Final, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var secs []Second
	var fin *Final
	for sc.Scan() {
		l, err := ParseLine(sc.Bytes())
		if err != nil {
			continue
		}
		switch {
		case l.Second != nil:
			secs = append(secs, *l.Second)
		case l.Final != nil:
			fin = l.Final
		}
	}
	if err := sc.Err(); err != nil {
		return secs, fin, err
	}
	if fin == nil {
		return secs, nil, fmt.Errorf("report: no final line")
	}
	return secs, fin, nil
}

// Text formats a second for people.
func (s Second) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%5.0fs asked %6.0f/s offered %6d admitted %6d completed %6d", s.T, s.Asked, s.Offered, s.Admitted, s.Completed)
	fmt.Fprintf(&b, " | refused %5d%s", s.RefusedTotal(), mapText(s.Refused))
	fmt.Fprintf(&b, " | setup ms p50 %.1f p90 %.1f p99 %.1f max %.1f", s.Setup.P50, s.Setup.P90, s.Setup.P99, s.Setup.Max)
	fmt.Fprintf(&b, " | causes%s | ACL %d", mapText(s.Causes), s.ACL)
	fmt.Fprintf(&b, " | active %d lag %.1fms", s.Active, s.LagMS)
	if s.Skipped > 0 {
		fmt.Fprintf(&b, " skipped %d", s.Skipped)
	}
	if s.Errors > 0 {
		fmt.Fprintf(&b, " errors %d", s.Errors)
	}
	if s.Redirected > 0 || s.Lost > 0 {
		fmt.Fprintf(&b, " redirected %d lost %d", s.Redirected, s.Lost)
	}
	return b.String()
}

// Text formats the final report for people.
func (f Final) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nfinal over %.1fs: asked %d calls, offered %d (%.0f/s), admitted %d (%.0f/s), completed %d (%.0f/s), failed %d, unfinished %d\n",
		f.DurationS, f.Asked, f.Offered, f.OfferedRate, f.Admitted, f.AdmittedRate, f.Completed, f.CompletedRate, f.Failed, f.Unfinished)
	fmt.Fprintf(&b, "refused %d%s\n", f.RefusedTotal(), mapText(f.Refused))
	fmt.Fprintf(&b, "setup latency (outseize to answered, %d calls): p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		f.Setup.N, f.Setup.P50, f.Setup.P90, f.Setup.P99, f.Setup.Max)
	fmt.Fprintf(&b, "released causes%s; ACL seen in %d releases (max level %d)\n", mapText(f.Causes), f.ACL, f.MaxACL)
	if f.Skipped > 0 || f.Errors > 0 {
		fmt.Fprintf(&b, "skipped by the concurrency cap %d, request errors %d\n", f.Skipped, f.Errors)
	}
	if n := f.Refused["standby"]; n > 0 || f.Redirected > 0 || f.Lost > 0 {
		fmt.Fprintf(&b, "standby: %d calls refused (no active gateway for them), %d outseizes refused by a standby and sent to another gateway; %d calls lost with their gateway\n",
			n, f.Redirected, f.Lost)
	}
	for _, gw := range f.Gateways {
		fmt.Fprintf(&b, "gateway %s: admitted %d, completed %d, lost %d, standby naks %d, reconnects %d\n", gw.Address, gw.Admitted, gw.Completed, gw.Lost, gw.StandbyNaks, gw.Reconnects)
	}
	if len(f.Phases) > 1 {
		for _, p := range f.Phases {
			fmt.Fprintf(&b, "phase %d (%.0f->%.0f/s, %.0fs at %.0fs): offered %.0f/s, admitted %.0f/s, completed %.0f/s, refused %d%s, setup p99 %.1f ms\n",
				p.Index, p.From, p.To, p.Duration, p.StartS, p.OfferedRate, p.AdmittedRate, p.CompletedRate, p.RefusedTotal(), mapText(p.Refused), p.Setup.P99)
		}
	}
	if f.KeptUp {
		fmt.Fprintf(&b, "the generator kept up with the asked load (max lag %.1f ms)\n", f.MaxLagMS)
	} else {
		fmt.Fprintf(&b, "THE GENERATOR COULD NOT KEEP UP with the asked load: offered %d of %d asked calls (%d skipped by the cap), max lag %.1f ms\n",
			f.Offered, f.Asked, f.Skipped, f.MaxLagMS)
	}
	return b.String()
}

// Text formats an answering-side second.
func (a AnswerSecond) Text() string {
	return fmt.Sprintf("%5.0fs incoming %6d answered %6d released %6d errors %d active %d | causes%s",
		a.T, a.Incoming, a.Answered, a.Released, a.Errors, a.Active, mapText(a.Causes))
}

func mapText(m map[string]uint64) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Collect(maps.Keys(m))
	sort.Slice(keys, func(i, j int) bool {
		a, errA := strconv.Atoi(keys[i])
		b, errB := strconv.Atoi(keys[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return " (" + strings.Join(parts, " ") + ")"
}
