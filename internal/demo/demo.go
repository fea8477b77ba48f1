// Package demo runs two exchanges in one process, connected by M3UA over
// SCTP-over-UDP on loopback, with built-in host applications and traffic that
// ramps from light load to well above capacity and back. Once a second it
// prints what congestion control is doing. `isupgw demo` runs it.
package demo

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/sprc"
)

// Options are the demo's knobs.
type Options struct {
	Duration time.Duration // the whole run (default 60 s)
	// Rate is the base offered load in calls/s; the peak is three times it.
	// The default, 150, is below the slow exchange's capacity (about 200/s),
	// so the peak is well above it.
	Rate float64
	// Cost is the artificial processing cost per message in exchange A's event
	// loop (default 1 ms): it fixes A's capacity whatever the machine.
	Cost time.Duration
	PCAP string // write A's M3UA traffic here ("" none)
	Out  io.Writer
	// Quiet prints only the summary (tests).
	Quiet bool
}

func (o *Options) defaults() {
	if o.Duration <= 0 {
		o.Duration = 60 * time.Second
	}
	if o.Rate <= 0 {
		o.Rate = 150
	}
	if o.Cost <= 0 {
		o.Cost = time.Millisecond
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// Thresholds are the congestion-control settings of the demo: the shipped
// defaults (sprc.Default), as a user runs them, but for two that are scaled to
// the demo's slowed loop. The probe levels are seconds of queue delay, which
// the demo's overload does not reach: the adaptive admission refuses only the
// excess before that, so its own level rises once and holds (probe thresholds
// of a few hundred milliseconds, used here before, made the level flap with
// the scheduling noise of a loaded machine). Code Yellow's entry latency, 20
// ms shipped, is a backlog of thousands of messages at the gateway's real
// speed but of twenty at the demo's 1 ms a message, which a loop at 80 %
// reaches by chance: it is 600 ms here. The ACL's effect at B is shortened so
// that the recovery shows in a short run.
var Thresholds = func() sprc.Config {
	c := sprc.Default
	c.CodeYellow.EntryLatency = 600 * time.Millisecond
	c.ACC.Duration = 2 * time.Second
	return c
}()

// Summary is what the run saw, for the closing lines and for tests.
type Summary struct {
	Offered, Admitted, Completed uint64
	Refused                      map[stack.Status]uint64
	ACLSent, ACLReceived         uint64 // RELs with ACL sent by A, received by B
	// MaxLevel and EndLevel are A's levels told to operators: outbound is
	// the higher of the probes' and the admission's.
	MaxLevel [2]sprc.Level
	EndLevel [2]sprc.Level
	// LevelRaises counts A's outbound level going up from none (alarm
	// 0x16 raised from clear): once per overload when it does not flap.
	LevelRaises int
	Alarms      []string
}

// exchange is one side: a gateway, its host application and its counters.
type exchange struct {
	name   string
	gw     *gateway.Gateway
	events chan stack.Event
	alarms chan sprc.Alarm
	peer   mtp.PointCode
	// host behaviour
	hold func() time.Duration
	// counters, read by the reporter
	offered, admitted, completed, aclIn atomic.Uint64
	refused                             sync.Map // stack.Status -> *atomic.Uint64
	calls                               sync.Map // CallID -> struct{} (our outgoing calls)
}

func (x *exchange) countRefusal(s stack.Status) {
	v, _ := x.refused.LoadOrStore(s, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

// Run runs the demo until its duration ends or ctx is cancelled.
func Run(ctx context.Context, o Options) (*Summary, error) {
	o.defaults()
	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	lo := netip.MustParseAddr("127.0.0.1")
	var slow atomic.Int64
	slow.Store(int64(o.Cost))

	var capW *capture.Writer
	if o.PCAP != "" {
		f, err := os.Create(o.PCAP)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if capW, err = capture.NewWriter(f); err != nil {
			return nil, err
		}
	}
	mk := func(name string, own, peer mtp.PointCode, m3 m3ua.Config, extra ...gateway.Option) (*exchange, error) {
		x := &exchange{name: name, events: make(chan stack.Event, 1<<16), alarms: make(chan sprc.Alarm, 1024), peer: peer}
		cfg := gateway.Config{
			Stack: stack.Config{OPC: own, NI: 2, ResetOnStart: true, Timers: stack.Timers{T22: time.Second},
				Groups: []stack.Group{{Name: "peer", DPC: peer, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 2047}}}}},
			M3UA: m3,
		}
		opts := append([]gateway.Option{gateway.WithCongestionControl(Thresholds, func(a sprc.Alarm) {
			select {
			case x.alarms <- a:
			default:
			}
		}, nil)}, extra...)
		var err error
		x.gw, err = gateway.New(cfg, func(e stack.Event) {
			select {
			case x.events <- e:
			default: // the demo's host never blocks the stack
			}
		}, opts...)
		return x, err
	}
	aOpts := []gateway.Option{gateway.WithStackOptions(stack.WithSlowdown(func() { time.Sleep(time.Duration(slow.Load())) }))}
	if capW != nil {
		aOpts = append(aOpts, gateway.WithM3UAOptions(m3ua.WithCapture(capW)))
	}
	a, err := mk("A", 1, 2, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []m3ua.Peer{{Name: "b", From: lo, DPCs: []mtp.PointCode{2}}}}, aOpts...)
	if err != nil {
		return nil, err
	}
	if err := a.gw.Start(ctx); err != nil {
		return nil, err
	}
	b, err := mk("B", 2, 1, m3ua.Config{Role: m3ua.RoleIPSP, Transport: transport.KindUDP,
		Peers: []m3ua.Peer{{Name: "a", Dial: a.gw.Endpoint.Addr(), DPCs: []mtp.PointCode{1}}}})
	if err != nil {
		return nil, err
	}
	if err := b.gw.Start(ctx); err != nil {
		return nil, err
	}
	// Offer no load before both exchanges see each other (and the start-up
	// circuit group resets are done).
	for !ready(a) || !ready(b) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("demo: the exchanges did not connect: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	hold := func() time.Duration { return time.Duration(200+rand.IntN(600)) * time.Millisecond }
	a.hold, b.hold = hold, hold

	sum := &Summary{Refused: map[stack.Status]uint64{}}
	var wg sync.WaitGroup
	for _, x := range []*exchange{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); x.host(ctx, sum) }()
	}
	fmt.Fprintf(o.Out, "isupgw demo: exchange A (point code 1) and B (2), M3UA over SCTP-over-UDP on loopback, %d circuits.\n", 2047)
	fmt.Fprintf(o.Out, "A is made slow on purpose: each message costs its event loop %v extra (capacity about %.0f calls/s).\n", o.Cost, 1/(5*o.Cost.Seconds()))
	fmt.Fprintf(o.Out, "Offered load: %.0f calls/s, ramping to %.0f/s (80%% A->B, 20%% B->A), then back down.\n", o.Rate/2, 3*o.Rate)
	fmt.Fprintf(o.Out, "Congestion control as shipped (Code Yellow scaled to the slowed loop): probes every %v, level 1 at probe delay %v or average %v of %d, clear below %v; Code Yellow above %v over %d samples.\n",
		Thresholds.ProbeInterval, Thresholds.Level1Delay, Thresholds.Level1Average, Thresholds.AverageOver, Thresholds.ClearAverage,
		Thresholds.CodeYellow.EntryLatency, Thresholds.CodeYellow.SampleSize)
	ad := Thresholds.Admission
	fmt.Fprintf(o.Out, "Adaptive admission: calls in set-up limited to keep set-up within %v of its lowest; the excess refused with 0x0C; level 1 held at least %v, cleared %v after the last refusal.\n\n",
		ad.Target, ad.Hold, ad.ClearAfter)
	if !o.Quiet {
		fmt.Fprint(o.Out, legend)
	}

	wg.Add(1)
	go func() { defer wg.Done(); offer(ctx, a, b, o) }()
	report(ctx, a, b, o, sum)
	// The run is over: let the last calls finish before the summary.
	slow.Store(0)
	wg.Wait()
	cancel()
	_ = a.gw.Wait()
	_ = b.gw.Wait()
	return sum, nil
}

// legend explains the table's columns once, before its first line.
const legend = `One line a second; the counts are of that second, both exchanges together:
  time       seconds since the load started
  offered    new calls the load asked for (outseize requests to A and B)
  admitted   of those, calls congestion control let through (an IAM was sent)
  completed  calls answered and cleared normally (cause 16)
  refused    outseizes refused, by host API status: 0x0C own outbound congestion,
             ACC 0x0109 throttled by the ACL the far end sent, other (e.g. 0x010C Code Yellow)
  A in/out   exchange A's congestion level (0 none, 1, 2) per queue, the last probe's
             queue delay and the average the levels are decided on (the level shown is
             the higher of the probes' and the adaptive admission's)
  A set-up   A's calls in set-up now / the adaptive admission's limit on them
  yellow     YES while A is in Code Yellow (System Busy)
  ACL sent   the automatic congestion level A puts in every REL now; recv: RELs with
             an ACL that B received this second
  alarms     raised (or cleared) this second: exchange:number name
`

// alarmNames are the alarms the demo can raise (README, Alarms).
var alarmNames = map[uint16]string{
	sprc.AlarmNetworkCongestion: "network congestion",
	sprc.AlarmStackCongestion:   "stack congestion",
	sprc.AlarmOutOfService:      "destination out of service",
	sprc.AlarmConstraint:        "constraint violation",
	sprc.AlarmACC:               "automatic congestion control",
	sprc.AlarmDestinationSlow:   "destination answers slowly",
	sprc.AlarmSystemBusy:        "System Busy (Code Yellow)",
	sprc.AlarmCodeRed:           "Code Red",
}

// alarmLabel is one alarm in the table: "A:0x16 stack congestion".
func alarmLabel(exchange string, a sprc.Alarm) string {
	s := fmt.Sprintf("%s:0x%02X", exchange, a.Number)
	if name, ok := alarmNames[a.Number]; ok {
		s += " " + name
	}
	if a.Cleared {
		s += " cleared"
	}
	return s
}

// ready reports whether an exchange's destination is up and its circuits idle.
func ready(x *exchange) bool {
	st := x.gw.Status()
	return len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 2047
}

// rateAt is the offered load at fraction f of the run: light, a ramp to three
// times the base, a plateau, then light again for the recovery.
func rateAt(f, base float64) float64 {
	switch {
	case f < 0.15:
		return base / 2
	case f < 0.45:
		return base/2 + (3*base-base/2)*(f-0.15)/0.30
	case f < 0.6:
		return 3 * base
	default:
		return base / 4
	}
}

// offer places calls at the scheduled rate: 80 % from A to B, 20 % from B to A.
func offer(ctx context.Context, a, b *exchange, o Options) {
	start := time.Now()
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var due float64
	var n uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f := time.Since(start).Seconds() / o.Duration.Seconds()
		due += rateAt(f, o.Rate) * 0.01
		for ; due >= 1; due-- {
			n++
			x := a
			if n%5 == 0 {
				x = b
			}
			x.offered.Add(1)
			x.gw.Stack.Submit(stack.Outseize{Tag: n, DPC: x.peer, Called: called})
		}
	}
}

// host is the built-in host application: it answers incoming calls after a
// short random delay, releases calls it answered after a hold time, and counts.
func (x *exchange) host(ctx context.Context, sum *Summary) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-x.events:
			switch ev := e.(type) {
			case stack.Result:
				if ev.Call == 0 {
					if ev.Status != stack.StatusOK && ev.Tag != 0 {
						x.countRefusal(ev.Status)
					}
					continue
				}
				if ev.DPC != 0 { // an accepted outseize
					x.admitted.Add(1)
					x.calls.Store(ev.Call, struct{}{})
				}
			case stack.Incoming:
				id := ev.Call
				time.AfterFunc(time.Duration(10+rand.IntN(40))*time.Millisecond, func() {
					x.gw.Stack.Submit(stack.Alert{Call: id})
					x.gw.Stack.Submit(stack.Answer{Call: id})
					time.AfterFunc(x.hold(), func() { x.gw.Stack.Submit(stack.Release{Call: id}) })
				})
			case stack.Released:
				if _, ours := x.calls.LoadAndDelete(ev.Call); ours && ev.Cause == isup.CauseNormalClearing {
					x.completed.Add(1)
				}
				if ev.ACL > 0 {
					x.aclIn.Add(1)
				}
			}
		}
	}
}

// report prints a line a second and fills the summary.
func report(ctx context.Context, a, b *exchange, o Options, sum *Summary) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last struct{ offered, admitted, completed, acl, r0c, racc, rother uint64 }
	if !o.Quiet {
		fmt.Fprintln(o.Out, " time  offered admitted completed | refused 0x0C  ACC  other | A in: level delay  avg | A out: level delay  avg | A set-up: in/limit | yellow ACL sent/recv | alarms")
	}
	sec := 0
	aRaised := false // A's outbound alarm 0x16 is raised
	for {
		select {
		case <-ctx.Done():
			sum.Offered = a.offered.Load() + b.offered.Load()
			sum.Admitted = a.admitted.Load() + b.admitted.Load()
			sum.Completed = a.completed.Load() + b.completed.Load()
			sum.ACLReceived = b.aclIn.Load()
			c := a.gw.Control.Snapshot()
			sum.EndLevel = told(c)
			for _, x := range []*exchange{a, b} {
				x.refused.Range(func(k, v any) bool { sum.Refused[k.(stack.Status)] += v.(*atomic.Uint64).Load(); return true })
			}
			fmt.Fprintf(o.Out, "\nsummary: offered %d, admitted %d, completed %d; refused: 0x0C %d, ACC %d, high traffic %d; RELs with ACL heard by B: %d; A's levels now in=%d out=%d\n",
				sum.Offered, sum.Admitted, sum.Completed, sum.Refused[stack.StatusOutboundCongestion], sum.Refused[stack.StatusACCThrottled],
				sum.Refused[stack.StatusHighTraffic], sum.ACLReceived, sum.EndLevel[sprc.Inbound], sum.EndLevel[sprc.Outbound])
			return
		case <-t.C:
		}
		sec++
		off := a.offered.Load() + b.offered.Load()
		adm := a.admitted.Load() + b.admitted.Load()
		com := a.completed.Load() + b.completed.Load()
		acl := b.aclIn.Load()
		var r0c, racc, rother uint64
		for _, x := range []*exchange{a, b} {
			x.refused.Range(func(k, v any) bool {
				switch k.(stack.Status) {
				case stack.StatusOutboundCongestion:
					r0c += v.(*atomic.Uint64).Load()
				case stack.StatusACCThrottled:
					racc += v.(*atomic.Uint64).Load()
				default:
					rother += v.(*atomic.Uint64).Load()
				}
				return true
			})
		}
		c := a.gw.Control.Snapshot()
		lv := told(c)
		for d := range lv {
			sum.MaxLevel[d] = max(sum.MaxLevel[d], lv[d])
		}
		var alarms []string
		for _, x := range []*exchange{a, b} {
			for len(x.alarms) > 0 {
				al := <-x.alarms
				s := alarmLabel(x.name, al)
				if x == a && al.Number == sprc.AlarmStackCongestion && !al.Cleared && al.Data["direction"] == "outbound" {
					if !aRaised {
						sum.LevelRaises++
					}
					aRaised = true
				} else if x == a && al.Number == sprc.AlarmStackCongestion && al.Cleared && al.Data["direction"] == "outbound" {
					aRaised = false
				}
				alarms = append(alarms, s)
			}
		}
		sum.Alarms = append(sum.Alarms, alarms...)
		if !o.Quiet {
			yellow := "-"
			if c.CodeYellow {
				yellow = "YES"
			}
			fmt.Fprintf(o.Out, "%4ds %8d %8d %9d | %12d %4d %6d | %11d %5.0fms %4.0fms | %12d %5.0fms %4.0fms | %8d/%-8d | %6s %3d / %-4d | %s\n",
				sec, off-last.offered, adm-last.admitted, com-last.completed, r0c-last.r0c, racc-last.racc, rother-last.rother,
				lv[sprc.Inbound], msf(c.LastDelay[sprc.Inbound]), msf(c.AverageDelay[sprc.Inbound]),
				lv[sprc.Outbound], msf(c.LastDelay[sprc.Outbound]), msf(c.AverageDelay[sprc.Outbound]),
				c.Admission.InSetup, c.Admission.Limit, yellow, c.ACLSent, acl-last.acl, strings.Join(alarms, ", "))
		}
		last.offered, last.admitted, last.completed, last.acl = off, adm, com, acl
		last.r0c, last.racc, last.rother = r0c, racc, rother
	}
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// told is the levels operators are told: outbound is the higher of the
// probes' and the adaptive admission's.
func told(c sprc.Stats) [2]sprc.Level {
	l := c.Level
	l[sprc.Outbound] = max(l[sprc.Outbound], c.Admission.Level)
	return l
}
