package sprc

import (
	"errors"
	"fmt"
	"time"

	"github.com/isupgw/isupgw/mtp"
)

// Config holds every threshold. Zero fields take the defaults of Default.
type Config struct {
	// PointCodes is how alarm texts write point codes (the configuration's
	// format; zero: numbers).
	PointCodes mtp.PointCodeFormat
	// ProbeInterval is how often a probe goes through each queue (1 s).
	ProbeInterval time.Duration
	// AverageOver is how many probe delays are averaged (10).
	AverageOver int
	// Level1Delay and Level1Average enter level 1 (10 s, 5 s). Level 2 is fixed
	// at 12 s and 6 s (Level2Delay, Level2Average).
	Level1Delay   time.Duration
	Level1Average time.Duration
	// ClearAverage: back to no congestion below this average (1 s).
	ClearAverage time.Duration
	// Level1Outseize is what outbound level 1 does to new outgoing calls:
	// refuse them all (the CSP procedure, the default) or throttle them.
	Level1Outseize Level1Policy
	// ThrottleTarget is the outbound queue wait the throttle keeps: a new
	// call is admitted while the wait is below it (default: halfway between
	// ClearAverage and Level1Average, so the level holds while throttling).
	ThrottleTarget time.Duration

	// Admission is the adaptive limit on calls in set-up (admission.go).
	Admission  AdmissionConfig
	CodeYellow CodeYellowConfig
	ACC        ACCConfig
	MTP        MTPCongestionConfig
	// Availability applies to every destination.
	Availability AvailabilityConfig
	// Constraints limit traffic per destination.
	Constraints []Constraint
}

// Level1Policy is the treatment of new outgoing calls at outbound level 1.
type Level1Policy uint8

// Level-1 policies. Level 2 refuses every new outgoing call under both.
const (
	// Level1RefuseAll refuses every new outgoing call (status 0x0C), as the
	// CSP does. Under a sustained overload the gateway swings between
	// refusing all and admitting all, and idles while the average falls.
	Level1RefuseAll Level1Policy = iota
	// Level1Throttle admits a new outgoing call while the outbound queue's
	// wait is below ThrottleTarget and refuses it (0x0C) otherwise, so the
	// gateway keeps completing calls at the rate it can serve.
	Level1Throttle
)

func (p Level1Policy) String() string {
	if p == Level1Throttle {
		return "throttle"
	}
	return "refuse"
}

// CodeYellowConfig is Cisco's call throttling.
type CodeYellowConfig struct {
	Enabled bool
	// SampleSize is the seconds of consecutive non-zero latency before the
	// average is compared (System Throttle Sample Size, 10).
	SampleSize int
	// EntryLatency enters Code Yellow (20 ms); ExitPercent of it leaves (40).
	EntryLatency time.Duration
	ExitPercent  int
	// Duration in Code Yellow before Code Red (0: never).
	Duration time.Duration
}

// ACCMode says what a received ACL does.
type ACCMode uint8

// ACC modes.
const (
	ACCAuto   ACCMode = iota // tell the host and throttle new calls to the point code
	ACCReport                // only tell the host (the CSP behaviour)
	ACCOff                   // ignore received ACL
)

// ACCConfig is automatic congestion control on received ACL.
type ACCConfig struct {
	Mode ACCMode
	// Admit is the fraction of new outgoing calls admitted at ACL 1, 2 and 3
	// (0.5, 0.1, 0: ANSI level 3 stops new calls).
	Admit [3]float64
	// Duration: control ends this long after the last REL with ACL (5 s).
	Duration time.Duration
}

// MTPCongestionConfig is the Q.764 §2.10 reaction to MTP congestion.
type MTPCongestionConfig struct {
	T29, T30 time.Duration // 500 ms, 8 s
	// Steps are the admitted fractions, full load first; each indication moves
	// one step down, each quiet T30 one step up (1, 0.75, 0.5, 0.25).
	Steps []float64
}

// AvailabilityConfig declares destinations out of service and brings them back.
type AvailabilityConfig struct {
	// T7Failures in a row (IAMs with no backward message) take a destination
	// out of service (3); 0 disables.
	T7Failures int
	// ResumeAfter puts it back in service (30 s), unless Ping is set: then a
	// circuit query every PingInterval (10 s) must be answered first.
	ResumeAfter  time.Duration
	Ping         bool
	PingInterval time.Duration
}

// Constraint limits one destination (the Oracle SBC's session-agent limits).
// Zero fields are unlimited.
type Constraint struct {
	DPC             mtp.PointCode
	MaxCalls        int // concurrent calls, both directions
	MaxOutbound     int // concurrent outgoing calls
	BurstRate       int // outgoing call attempts per BurstWindow
	BurstWindow     time.Duration
	SustainedRate   int // outgoing call attempts per SustainedWindow
	SustainedWindow time.Duration
}

// Default is the configuration of the source documents.
var Default = Config{
	ProbeInterval: time.Second, AverageOver: 10,
	Level1Delay: 10 * time.Second, Level1Average: 5 * time.Second, ClearAverage: time.Second,
	Admission: AdmissionConfig{Enabled: true, Target: 20 * time.Millisecond, InitialLimit: 100, MinLimit: 4, MaxLimit: 10000,
		Smoothing: 0.25, Window: 100 * time.Millisecond, Baseline: 30 * time.Second, FirstProbe: 2 * time.Second, Hold: 2 * time.Second, ClearAfter: time.Second},
	CodeYellow:   CodeYellowConfig{Enabled: true, SampleSize: 10, EntryLatency: 20 * time.Millisecond, ExitPercent: 40},
	ACC:          ACCConfig{Mode: ACCAuto, Admit: [3]float64{0.5, 0.1, 0}, Duration: 5 * time.Second},
	MTP:          MTPCongestionConfig{T29: 500 * time.Millisecond, T30: 8 * time.Second, Steps: []float64{1, 0.75, 0.5, 0.25}},
	Availability: AvailabilityConfig{T7Failures: 3, ResumeAfter: 30 * time.Second, PingInterval: 10 * time.Second},
}

// withDefaults fills zero fields from Default. Booleans and modes are taken as
// given (their zero values are meaningful).
func (c Config) withDefaults() Config {
	d := Default
	setD := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	setD(&c.ProbeInterval, d.ProbeInterval)
	setD(&c.Level1Delay, d.Level1Delay)
	setD(&c.Level1Average, d.Level1Average)
	setD(&c.ClearAverage, d.ClearAverage)
	setD(&c.ThrottleTarget, (c.ClearAverage+c.Level1Average)/2)
	if c.AverageOver == 0 {
		c.AverageOver = d.AverageOver
	}
	a, da := &c.Admission, d.Admission
	setD(&a.Target, da.Target)
	setD(&a.Window, da.Window)
	setD(&a.Baseline, da.Baseline)
	setD(&a.FirstProbe, da.FirstProbe)
	setD(&a.Hold, da.Hold)
	setD(&a.ClearAfter, da.ClearAfter)
	if a.MinLimit == 0 {
		a.MinLimit = da.MinLimit
	}
	if a.MaxLimit == 0 {
		a.MaxLimit = max(da.MaxLimit, a.MinLimit)
	}
	if a.InitialLimit == 0 {
		a.InitialLimit = min(max(da.InitialLimit, a.MinLimit), a.MaxLimit)
	}
	if a.Smoothing == 0 {
		a.Smoothing = da.Smoothing
	}
	y := &c.CodeYellow
	if y.SampleSize == 0 {
		y.SampleSize = d.CodeYellow.SampleSize
	}
	setD(&y.EntryLatency, d.CodeYellow.EntryLatency)
	if y.ExitPercent == 0 {
		y.ExitPercent = d.CodeYellow.ExitPercent
	}
	if c.ACC.Admit == [3]float64{} && c.ACC.Mode != ACCOff {
		c.ACC.Admit = d.ACC.Admit
	}
	setD(&c.ACC.Duration, d.ACC.Duration)
	setD(&c.MTP.T29, d.MTP.T29)
	setD(&c.MTP.T30, d.MTP.T30)
	if len(c.MTP.Steps) == 0 {
		c.MTP.Steps = d.MTP.Steps
	}
	setD(&c.Availability.ResumeAfter, d.Availability.ResumeAfter)
	setD(&c.Availability.PingInterval, d.Availability.PingInterval)
	return c
}

// Validate reports every inconsistent threshold.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Level1Delay > Level2Delay || c.Level1Average > Level2Average {
		bad("level 1 thresholds (%v, average %v) must not exceed the fixed level 2 ones (%v, %v)", c.Level1Delay, c.Level1Average, Level2Delay, Level2Average)
	}
	if c.ClearAverage > c.Level1Average {
		bad("clear average %v is above the level 1 average %v: the level could never clear", c.ClearAverage, c.Level1Average)
	}
	if c.Level1Outseize > Level1Throttle {
		bad("level 1 outseize policy %d: want refuse or throttle", c.Level1Outseize)
	}
	if c.Level1Outseize == Level1Throttle && (c.ThrottleTarget <= c.ClearAverage || c.ThrottleTarget >= Level2Average) {
		bad("throttle target %v must lie above the clear average %v (or the level clears while throttling and flaps) and below the level 2 average %v",
			c.ThrottleTarget, c.ClearAverage, Level2Average)
	}
	if c.AverageOver < 1 || c.AverageOver > 1000 {
		bad("average over %d probes: want 1-1000", c.AverageOver)
	}
	if a := c.Admission; a.MinLimit < 1 || a.MaxLimit < a.MinLimit || a.InitialLimit < a.MinLimit || a.InitialLimit > a.MaxLimit {
		bad("admission limits: minimum %d, initial %d, maximum %d: want 1 <= minimum <= initial <= maximum", a.MinLimit, a.InitialLimit, a.MaxLimit)
	}
	if a := c.Admission; a.FirstProbe < a.Window || a.FirstProbe > a.Baseline {
		bad("admission first_probe %v: want at least one window (%v) and at most the baseline period (%v)", a.FirstProbe, a.Window, a.Baseline)
	}
	if a := c.Admission; a.Smoothing <= 0 || a.Smoothing > 1 {
		bad("admission smoothing %v: want more than 0, at most 1", a.Smoothing)
	}
	if a := c.Admission; a.Target < 0 || a.Window < 0 || a.Baseline < 0 || a.FirstProbe < 0 || a.Hold < 0 || a.ClearAfter < 0 {
		bad("admission durations must not be negative")
	}
	if c.CodeYellow.ExitPercent < 1 || c.CodeYellow.ExitPercent > 100 {
		bad("code yellow exit percent %d: want 1-100", c.CodeYellow.ExitPercent)
	}
	for i, f := range c.ACC.Admit {
		if f < 0 || f > 1 {
			bad("ACC admit fraction for level %d is %v: want 0-1", i+1, f)
		}
	}
	for i, f := range c.MTP.Steps {
		if f < 0 || f > 1 || (i > 0 && f >= c.MTP.Steps[i-1]) {
			bad("MTP congestion steps %v: want falling fractions from 1", c.MTP.Steps)
			break
		}
	}
	if len(c.MTP.Steps) > 0 && c.MTP.Steps[0] != 1 {
		bad("MTP congestion steps must start at full load (1)")
	}
	seen := map[mtp.PointCode]bool{}
	for _, k := range c.Constraints {
		if seen[k.DPC] {
			bad("two constraints for DPC %s", c.PointCodes.Format(k.DPC))
		}
		seen[k.DPC] = true
		if (k.BurstRate > 0) != (k.BurstWindow > 0) || (k.SustainedRate > 0) != (k.SustainedWindow > 0) {
			bad("constraint for DPC %s: a rate needs its window and a window its rate", c.PointCodes.Format(k.DPC))
		}
		if k.MaxCalls < 0 || k.MaxOutbound < 0 || k.BurstRate < 0 || k.SustainedRate < 0 {
			bad("constraint for DPC %s: negative limit", c.PointCodes.Format(k.DPC))
		}
	}
	return errors.Join(errs...)
}
