package stack

import (
	"errors"
	"fmt"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// Direction restricts which side may seize the circuits of a group.
type Direction uint8

// Directions.
const (
	BothWay Direction = iota
	IncomingOnly
	OutgoingOnly
)

// Glare selects which CICs this exchange controls in a dual seizure.
type Glare uint8

// Glare rules. GlareITU is the Q.764 §2.9.1.4 rule, also ANSI's default: the
// exchange with the higher point code controls the even CICs.
const (
	GlareITU  Glare = iota
	GlareOdd        // we control odd CICs
	GlareEven       // we control even CICs
	GlareAll        // we control every CIC
	GlareNone       // we control none
)

// CICRange is an inclusive range of circuit identification codes.
type CICRange struct{ First, Last uint16 }

// Group is the circuits towards one adjacent exchange.
type Group struct {
	Name      string
	DPC       mtp.PointCode
	Variant   isup.Variant
	CICs      []CICRange
	Direction Direction
	Glare     Glare
}

// Timers are the ISUP timer values (Q.764 Annex A, defaults within its ranges).
type Timers struct {
	T1, T2, T3, T4, T5, T6, T7, T8, T9 time.Duration
	T12, T13, T14, T15, T16, T17       time.Duration
	T18, T19, T20, T21, T22, T23       time.Duration
	T27, T28, T33                      time.Duration
}

// DefaultTimers are used for every zero field of Config.Timers.
var DefaultTimers = Timers{
	T1: 15 * time.Second, T2: 3 * time.Minute, T3: 2 * time.Minute, T4: 5 * time.Minute,
	T5: 5 * time.Minute, T6: 2 * time.Minute, T7: 20 * time.Second, T8: 10 * time.Second,
	T9:  90 * time.Second,
	T12: 15 * time.Second, T13: 5 * time.Minute, T14: 15 * time.Second, T15: 5 * time.Minute,
	T16: 15 * time.Second, T17: 5 * time.Minute,
	T18: 15 * time.Second, T19: 5 * time.Minute, T20: 15 * time.Second, T21: 5 * time.Minute,
	T22: 15 * time.Second, T23: 5 * time.Minute,
	T27: 4 * time.Minute, T28: 10 * time.Second, T33: 12 * time.Second,
}

// withDefaults fills zero timers.
func (t Timers) withDefaults() Timers {
	d := DefaultTimers
	fill := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	for _, p := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&t.T1, d.T1}, {&t.T2, d.T2}, {&t.T3, d.T3}, {&t.T4, d.T4}, {&t.T5, d.T5}, {&t.T6, d.T6},
		{&t.T7, d.T7}, {&t.T8, d.T8}, {&t.T9, d.T9}, {&t.T12, d.T12}, {&t.T13, d.T13},
		{&t.T14, d.T14}, {&t.T15, d.T15}, {&t.T16, d.T16}, {&t.T17, d.T17}, {&t.T18, d.T18},
		{&t.T19, d.T19}, {&t.T20, d.T20}, {&t.T21, d.T21}, {&t.T22, d.T22}, {&t.T23, d.T23},
		{&t.T27, d.T27}, {&t.T28, d.T28}, {&t.T33, d.T33},
	} {
		fill(p.v, p.def)
	}
	return t
}

// Config is the stack's configuration.
type Config struct {
	OPC    mtp.PointCode // our point code
	NI     uint8         // network indicator in the labels we send (2 national)
	Groups []Group
	Timers Timers
	// ResetOnStart sends GRS for every circuit when a destination is first
	// available; ResetOnResume does so again after each MTP resume.
	ResetOnStart  bool
	ResetOnResume bool
	// AwaitResume starts every destination unavailable until the MTP resumes
	// it (the start-up reset then waits for that resume). Without it the stack
	// assumes the MTP is up.
	AwaitResume bool
	// StateFile keeps locally blocked circuits across restarts ("" = none).
	StateFile string
	// PointCodes is how point codes are written in texts, alarms and trace
	// lines (the configuration's format; zero: numbers).
	PointCodes mtp.PointCodeFormat
}

// Validate checks the configuration and returns every problem found.
func (c Config) Validate() error {
	var errs []error
	names := map[string]bool{}
	pcs := map[mtp.PointCode]bool{}
	for i, g := range c.Groups {
		where := fmt.Sprintf("groups[%d]", i)
		if g.Name != "" {
			where = fmt.Sprintf("group %q", g.Name)
			if names[g.Name] {
				errs = append(errs, fmt.Errorf("%s: duplicate name", where))
			}
			names[g.Name] = true
		}
		if g.DPC == c.OPC {
			errs = append(errs, fmt.Errorf("%s: DPC %s is our own point code", where, c.PointCodes.Format(g.DPC)))
		}
		if pcs[g.DPC] {
			errs = append(errs, fmt.Errorf("%s: a second group for DPC %s (one group per adjacent exchange)", where, c.PointCodes.Format(g.DPC)))
		}
		pcs[g.DPC] = true
		if len(g.CICs) == 0 {
			errs = append(errs, fmt.Errorf("%s: no CIC ranges", where))
		}
		for _, r := range g.CICs {
			if r.First > r.Last {
				errs = append(errs, fmt.Errorf("%s: CIC range %d-%d is reversed", where, r.First, r.Last))
			}
			if r.Last > g.Variant.MaxCIC() {
				errs = append(errs, fmt.Errorf("%s: CIC %d exceeds the %s maximum %d", where, r.Last, g.Variant, g.Variant.MaxCIC()))
			}
		}
	}
	return errors.Join(errs...)
}
