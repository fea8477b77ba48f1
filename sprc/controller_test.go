package sprc

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

func TestLevelThresholdEdges(t *testing.T) {
	cases := []struct {
		name   string
		avgN   int
		probes []time.Duration
		want   Level
	}{
		{"just under the level 1 delay", 10, []time.Duration{9999 * time.Millisecond}, 0},
		{"level 1 delay", 10, []time.Duration{10 * time.Second}, 1},
		{"average just under 5 s", 2, []time.Duration{4 * time.Second, 5999 * time.Millisecond}, 0},
		{"average 5 s", 2, []time.Duration{4 * time.Second, 6 * time.Second}, 1},
		{"level 2 delay", 10, []time.Duration{12 * time.Second}, 2},
		{"just under the level 2 delay", 10, []time.Duration{11999 * time.Millisecond}, 1},
		{"average 6 s", 2, []time.Duration{7 * time.Second, 5 * time.Second}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default
			cfg.AverageOver = tc.avgN
			f := newFake(t, cfg)
			for _, d := range tc.probes {
				f.c.Probe(Outbound, d)
			}
			if got := f.c.Snapshot().Level[Outbound]; got != tc.want {
				t.Fatalf("level %d, want %d", got, tc.want)
			}
			if f.c.Snapshot().Level[Inbound] != 0 {
				t.Fatal("the other direction moved")
			}
		})
	}
}

func TestLevelTransitionsAndAlarms(t *testing.T) {
	cfg := Default
	cfg.AverageOver = 2
	f := newFake(t, cfg)
	step := func(d time.Duration, want Level, alarms string) {
		t.Helper()
		f.c.Probe(Inbound, d)
		if got := f.c.Snapshot().Level[Inbound]; got != want {
			t.Fatalf("after %v: level %d, want %d", d, got, want)
		}
		f.expectAlarms(alarms)
	}
	step(13*time.Second, 2, "0x16+")       // none -> 2 directly
	step(5*time.Second, 2, "")             // average 9 s: still level 2
	step(4*time.Second, 1, "0x16+")        // average 4.5 s, probe < 12 s: down to 1
	step(1500*time.Millisecond, 1, "")     // average 2.75 s: level 1 holds (hysteresis)
	step(500*time.Millisecond, 1, "")      // average exactly 1 s: not below
	step(400*time.Millisecond, 0, "0x16-") // average 0.45 s: cleared
	if a := f.c.Snapshot(); a.LastDelay[Inbound] != 400*time.Millisecond || a.AverageDelay[Inbound] != 450*time.Millisecond {
		t.Fatalf("delays %v %v", a.LastDelay[Inbound], a.AverageDelay[Inbound])
	}
	// The alarm data says which direction and level.
	f.c.Probe(Outbound, 10*time.Second)
	a := f.alarms[0]
	if a.Data["direction"] != "outbound" || a.Data["level"] != 1 || a.Number != AlarmStackCongestion {
		t.Fatalf("alarm %+v", a)
	}
}

func TestActionsOfOwnCongestion(t *testing.T) {
	f := newFake(t, Default)
	if f.c.AdmitOutgoing(7) != Admit || !f.c.AdmitIncoming(7) || f.c.ReleaseACL() != 0 || f.c.ShedInbound(isup.IAM) {
		t.Fatal("not congested yet")
	}
	f.c.Probe(Outbound, 10*time.Second)
	if r := f.c.AdmitOutgoing(7); r != RefuseOutboundCongestion {
		t.Fatalf("outbound level 1: %s", r)
	}
	if !f.c.AdmitIncoming(7) || f.c.ReleaseACL() != 1 {
		t.Fatal("outbound congestion must not refuse incoming calls; ACL 1 in RELs")
	}
	f.c.Probe(Inbound, 10*time.Second)
	if f.c.AdmitIncoming(7) || f.c.ShedInbound(isup.IAM) {
		t.Fatal("inbound level 1: release new IAMs (cause 42), do not shed yet")
	}
	f.c.Probe(Inbound, 12*time.Second)
	if !f.c.ShedInbound(isup.IAM) || !f.c.ShedInbound(isup.SAM) || f.c.ShedInbound(isup.ACM) || f.c.ShedInbound(isup.REL) {
		t.Fatal("inbound level 2 sheds IAM and SAM only")
	}
	if f.c.ReleaseACL() != 2 || f.c.Snapshot().InboundShed != 2 {
		t.Fatalf("ACL %d shed %d", f.c.ReleaseACL(), f.c.Snapshot().InboundShed)
	}
	// The hosts' declared overload counts too, whichever is higher.
	g := newFake(t, Default)
	g.c.HostOverload(2)
	if g.c.ReleaseACL() != 2 {
		t.Fatal("host overload 2: ACL 2")
	}
	g.c.HostOverload(0)
	if g.c.ReleaseACL() != 0 {
		t.Fatal("ACL must stop when both are 0")
	}
}

func TestACCReceived(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 42
	f.c.RELReceived(x, 1)
	f.expectAlarms("0x1A+")
	if n := f.admitted(x, 100); n != 50 {
		t.Fatalf("ACL 1 admitted %d of 100, want 50", n)
	}
	if f.admitted(43, 10) != 10 {
		t.Fatal("another destination was throttled")
	}
	f.c.RELReceived(x, 2)
	f.expectAlarms("0x1A+")
	if n := f.admitted(x, 100); n != 10 {
		t.Fatalf("ACL 2 admitted %d of 100, want 10", n)
	}
	f.c.RELReceived(x, 3) // ANSI level 3: nothing
	f.takeAlarms()
	if n := f.admitted(x, 20); n != 0 {
		t.Fatalf("ACL 3 admitted %d", n)
	}
	// Control ends 5 s after the last REL with ACL; each one renews it.
	f.advance(4 * time.Second)
	f.c.RELReceived(x, 3)
	f.advance(4999 * time.Millisecond)
	if f.admitted(x, 5) != 0 {
		t.Fatal("control ended early")
	}
	f.expectAlarms("")
	f.advance(time.Millisecond)
	f.expectAlarms("0x1A-")
	if f.admitted(x, 5) != 5 {
		t.Fatal("control did not end 5 s after the last ACL")
	}
	// Report mode tells, never throttles.
	cfg := Default
	cfg.ACC.Mode = ACCReport
	r := newFake(t, cfg)
	r.c.RELReceived(x, 2)
	r.expectAlarms("0x1A+")
	if r.admitted(x, 10) != 10 {
		t.Fatal("report mode throttled")
	}
}

func TestMTPCongestionStepsWithT29T30(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 9
	scon := func() { f.c.MTPEvent(mtp.Congestion{PC: x, Level: 1}) }
	step := func() int {
		for _, d := range f.c.Snapshot().Destinations {
			if d.PC == x {
				return d.MTPStep
			}
		}
		return 0
	}
	scon()
	f.expectAlarms("0x0E+")
	if step() != 1 || f.admitted(x, 100) != 75 {
		t.Fatal("first indication: one step down (75 %)")
	}
	f.advance(499 * time.Millisecond)
	scon() // within T29: ignored
	if step() != 1 {
		t.Fatal("an indication within T29 was not ignored")
	}
	f.advance(time.Millisecond)
	scon() // after T29, within T30: one more step, timers restart
	if step() != 2 || f.admitted(x, 100) != 50 {
		t.Fatal("second step")
	}
	for i := 0; i < 5; i++ { // down to the maximum reduction and no further
		f.advance(600 * time.Millisecond)
		scon()
	}
	if step() != 3 {
		t.Fatalf("step %d, want the last (3)", step())
	}
	f.advance(7999 * time.Millisecond)
	if step() != 3 {
		t.Fatal("T30 expired early")
	}
	f.advance(time.Millisecond)
	if step() != 2 {
		t.Fatal("a quiet T30 goes one step up")
	}
	f.advance(8 * time.Second)
	f.advance(8 * time.Second)
	if step() != 0 || f.admitted(x, 10) != 10 {
		t.Fatalf("full load not restored: step %d", step())
	}
	f.expectAlarms("0x0E-")
}

func TestANSIMultiLevelCongestionPriorities(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 0x010203
	f.c.MTPEvent(mtp.Congestion{PC: x, Level: 2, LevelGiven: true})
	if f.alarms[0].Data["level"] != 2 {
		t.Fatalf("alarm %+v", f.alarms[0])
	}
	f.takeAlarms()
	if f.c.AdmitOutgoing(x) != RefuseNetworkCongestion {
		t.Fatal("IAM (priority 0) must not go out at level 2")
	}
	if f.c.SendAllowed(x, 1) || !f.c.SendAllowed(x, 2) || !f.c.SendAllowed(x, 3) || !f.c.SendAllowed(77, 0) {
		t.Fatal("priority filter wrong")
	}
	f.c.MTPEvent(mtp.Congestion{PC: x, Level: 0, LevelGiven: true})
	f.expectAlarms("0x0E-")
	if !f.c.SendAllowed(x, 0) || f.c.AdmitOutgoing(x) != Admit {
		t.Fatal("level 0 ends the congestion")
	}
}

func TestConstraints(t *testing.T) {
	cfg := Default
	cfg.Constraints = []Constraint{
		{DPC: 1, MaxCalls: 2},
		{DPC: 2, MaxOutbound: 1},
		{DPC: 3, BurstRate: 3, BurstWindow: time.Second},
		{DPC: 4, SustainedRate: 5, SustainedWindow: time.Minute},
	}
	f := newFake(t, cfg)
	// Concurrent calls, both directions.
	f.c.CallStarted(1, false)
	if f.c.AdmitOutgoing(1) != Admit {
		t.Fatal("first")
	}
	f.c.CallStarted(1, true)
	if f.c.AdmitOutgoing(1) != RefuseConstraint {
		t.Fatal("third concurrent call admitted")
	}
	if a := f.alarms[0]; a.Data["constraint"] != "maximum concurrent calls" || a.Number != AlarmConstraint {
		t.Fatalf("alarm %+v", a)
	}
	f.takeAlarms()
	f.c.CallEnded(1, false)
	f.expectAlarms("0x19-")
	if f.c.AdmitOutgoing(1) != Admit {
		t.Fatal("not resumed below the maximum")
	}
	// Concurrent outbound only: incoming calls do not count.
	f.c.CallStarted(2, false)
	f.c.CallStarted(2, false)
	f.c.CallStarted(2, true)
	if f.c.AdmitOutgoing(2) != RefuseConstraint {
		t.Fatal("second outbound admitted")
	}
	f.takeAlarms()
	// Burst: 3 per second; the next window resumes.
	if f.admitted(3, 5) != 3 {
		t.Fatal("burst rate")
	}
	f.expectAlarms("0x19+")
	f.advance(999 * time.Millisecond)
	if f.admitted(3, 1) != 0 {
		t.Fatal("window ended early")
	}
	f.advance(time.Millisecond)
	f.expectAlarms("0x19-")
	if f.admitted(3, 5) != 3 {
		t.Fatal("next window")
	}
	f.takeAlarms()
	// Sustained: 5 a minute.
	if f.admitted(4, 10) != 5 {
		t.Fatal("sustained rate")
	}
	f.advance(59 * time.Second)
	if f.admitted(4, 1) != 0 {
		t.Fatal("sustained window ended early")
	}
	f.advance(time.Second)
	if f.admitted(4, 10) != 5 {
		t.Fatal("sustained next window")
	}
	if f.admitted(99, 100) != 100 {
		t.Fatal("an unconstrained destination was limited")
	}
}

func TestAvailability(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 5
	for a := uint64(1); a <= 6; a++ {
		f.c.AttemptStarted(x, a)
	}
	f.c.T7Expired(x, 1)
	f.c.T7Expired(x, 2)
	f.c.Backward(x, 3) // an answer resets the run
	f.c.T7Expired(x, 4)
	f.c.T7Expired(x, 5)
	f.expectAlarms("")
	f.c.T7Expired(x, 6)
	f.expectAlarms("0x18+")
	if f.c.AdmitOutgoing(x) != RefuseOutOfService {
		t.Fatal("out of service destination admitted a call")
	}
	f.advance(29 * time.Second)
	f.expectAlarms("")
	f.advance(time.Second)
	f.expectAlarms("0x18-")
	if f.c.AdmitOutgoing(x) != Admit {
		t.Fatal("time to resume did not bring it back")
	}
	// Pause and resume; an unanswered query.
	f.c.MTPEvent(mtp.Pause{PC: x})
	f.c.MTPEvent(mtp.Resume{PC: x})
	f.expectAlarms("0x18+ 0x18-")
	f.c.QueryUnanswered(x)
	f.expectAlarms("0x18+")

	// With ping: only an answered query brings it back.
	cfg := Default
	cfg.Availability.Ping = true
	p := newFake(t, cfg)
	p.c.QueryUnanswered(x)
	p.advance(time.Millisecond)
	if len(p.pings) != 1 || p.pings[0] != x {
		t.Fatalf("pings %v", p.pings)
	}
	p.advance(10 * time.Second)
	p.advance(25 * time.Second)
	if len(p.pings) != 3 || p.c.AdmitOutgoing(x) != RefuseOutOfService {
		t.Fatalf("pings %v; with ping the timer alone must not resume", p.pings)
	}
	p.c.QueryAnswered(x)
	if p.c.AdmitOutgoing(x) != Admit {
		t.Fatal("answered ping did not resume")
	}
}

func TestCodeYellowAndRed(t *testing.T) {
	cfg := Default
	cfg.CodeYellow = CodeYellowConfig{Enabled: true, SampleSize: 3, EntryLatency: 20 * time.Millisecond, ExitPercent: 40, Duration: time.Minute}
	f := newFake(t, cfg)
	sample := func(d time.Duration) {
		f.now = f.now.Add(time.Second)
		f.c.Probe(Inbound, d)
	}
	sample(25 * time.Millisecond)
	sample(25 * time.Millisecond)
	if f.c.Snapshot().CodeYellow || f.c.Snapshot().ThrottlingSampleActivity != 2 {
		t.Fatalf("yellow before the sample size: %+v", f.c.Snapshot())
	}
	sample(0) // a zero sample restarts the count
	if f.c.Snapshot().ThrottlingSampleActivity != 0 {
		t.Fatal("ThrottlingSampleActivity not reset by zero latency")
	}
	sample(21 * time.Millisecond)
	sample(21 * time.Millisecond)
	sample(20 * time.Millisecond) // average 20.67 ms > 20 ms
	f.expectAlarms("0x20+")
	if r := f.c.AdmitOutgoing(1); r != RefuseHighTraffic || f.c.AdmitIncoming(1) {
		t.Fatalf("code yellow admitted: %s", r)
	}
	sample(9 * time.Millisecond)
	sample(9 * time.Millisecond)
	sample(9 * time.Millisecond) // 9 ms > 8 ms exit
	if !f.c.Snapshot().CodeYellow {
		t.Fatal("left above the exit latency")
	}
	sample(8 * time.Millisecond)
	sample(8 * time.Millisecond)
	sample(8 * time.Millisecond) // 8 ms = 40 % of 20 ms: leave
	f.expectAlarms("0x20-")
	if f.c.AdmitOutgoing(1) != Admit {
		t.Fatal("still refusing after code yellow")
	}
	// Code Yellow longer than the duration: Code Red.
	for i := 0; i < 62; i++ {
		sample(50 * time.Millisecond)
	}
	if len(f.red) != 1 || !f.c.Snapshot().CodeRed {
		t.Fatalf("code red calls %v", f.red)
	}
	f.expectAlarms("0x20+ 0x21+")
	// Disabled: nothing.
	cfg.CodeYellow.Enabled = false
	g := newFake(t, cfg)
	for i := 0; i < 20; i++ {
		g.c.Probe(Inbound, 50*time.Millisecond)
	}
	if g.c.Snapshot().CodeYellow || g.c.AdmitOutgoing(1) != Admit {
		t.Fatal("disabled code yellow acted")
	}
}

// TestLevel1Throttle: with the throttle policy, outbound level 1 admits a new
// outgoing call while the outbound queue's wait is below the target (halfway
// between the clear and level-1 averages by default) and refuses it with 0x0C
// otherwise or when the wait is unknown; level 2 refuses every one; the
// default policy refuses every one at level 1.
func TestLevel1Throttle(t *testing.T) {
	cfg := Default
	cfg.Level1Outseize = Level1Throttle
	f := newFake(t, cfg)
	target := (Default.ClearAverage + Default.Level1Average) / 2
	if got := f.c.Config().ThrottleTarget; got != target {
		t.Fatalf("default throttle target %v, want %v", got, target)
	}
	if r := f.c.AdmitOutgoingAt(7, time.Hour); r != Admit {
		t.Fatalf("no congestion: the wait does not matter, got %s", r)
	}
	f.c.Probe(Outbound, 10*time.Second)
	for _, tc := range []struct {
		wait time.Duration
		want Refusal
	}{
		{0, Admit},
		{target - time.Nanosecond, Admit},
		{target, RefuseOutboundCongestion},
		{-1, RefuseOutboundCongestion}, // not known
	} {
		if r := f.c.AdmitOutgoingAt(7, tc.wait); r != tc.want {
			t.Errorf("level 1, wait %v: %s, want %s", tc.wait, r, tc.want)
		}
	}
	if r := f.c.AdmitOutgoing(7); r != RefuseOutboundCongestion {
		t.Errorf("level 1 without a wait: %s", r)
	}
	st := f.c.Snapshot()
	if st.Level[Outbound] != 1 || st.Level1Admitted != 2 || f.c.ReleaseACL() != 1 {
		t.Fatalf("level %d, throttled %d, ACL %d: want 1, 2, 1", st.Level[Outbound], st.Level1Admitted, f.c.ReleaseACL())
	}
	// Other refusals still apply to the calls the throttle lets through.
	f.c.RELReceived(7, isup.AutomaticCongestionLevel(3))
	if r := f.c.AdmitOutgoingAt(7, 0); r != RefuseACC {
		t.Errorf("ACL 3 from the destination: %s, want ACC", r)
	}
	f.c.Probe(Outbound, 12*time.Second)
	if r := f.c.AdmitOutgoingAt(8, 0); r != RefuseOutboundCongestion {
		t.Errorf("level 2 with an empty queue: %s", r)
	}
	g := newFake(t, Default)
	g.c.Probe(Outbound, 10*time.Second)
	if r := g.c.AdmitOutgoingAt(7, 0); r != RefuseOutboundCongestion || g.c.Snapshot().Level1Admitted != 0 {
		t.Errorf("default policy, level 1, empty queue: %s", r)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Level1Delay = 13 * time.Second }, "must not exceed the fixed level 2"},
		{func(c *Config) { c.ClearAverage = 6 * time.Second }, "could never clear"},
		{func(c *Config) { c.ACC.Admit = [3]float64{1.5, 0, 0} }, "want 0-1"},
		{func(c *Config) { c.MTP.Steps = []float64{1, 0.5, 0.7} }, "falling fractions"},
		{func(c *Config) { c.Constraints = []Constraint{{DPC: 1, BurstRate: 3}} }, "needs its window"},
		{func(c *Config) { c.Constraints = []Constraint{{DPC: 1}, {DPC: 1}} }, "two constraints"},
		{func(c *Config) { c.Level1Outseize = Level1Throttle; c.ThrottleTarget = c.ClearAverage }, "must lie above the clear average"},
		{func(c *Config) { c.Level1Outseize = Level1Throttle; c.ThrottleTarget = 7 * time.Second }, "below the level 2 average"},
		{func(c *Config) { c.Level1Outseize = 9 }, "want refuse or throttle"},
	} {
		cfg := Default
		tc.mutate(&cfg)
		if err := cfg.Validate(); err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	if err := Default.Validate(); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

func TestRunnerSamplesStuckQueues(t *testing.T) {
	f := newFake(t, Default)
	var pending []func(time.Duration)
	r := NewRunner(f.c, func(dir Direction, done func(time.Duration)) {
		if dir == Outbound {
			pending = append(pending, done) // the outbound queue is stuck
			return
		}
		done(time.Millisecond)
	}, func() time.Time { return f.now })
	r.Period()
	for i := 1; i <= 10; i++ {
		f.now = f.now.Add(time.Second)
		r.Period()
	}
	// The first outbound probe has waited 10 s: that is this period's delay.
	if s := f.c.Snapshot(); s.Level[Outbound] != 1 || s.LastDelay[Outbound] != 10*time.Second || s.Level[Inbound] != 0 {
		t.Fatalf("levels %v, last outbound delay %v", s.Level, s.LastDelay[Outbound])
	}
	// The queue moves again: the probes come back, the delay is what they waited.
	for _, done := range pending {
		done(2 * time.Second)
	}
	f.now = f.now.Add(time.Second)
	r.Period()
	if d := f.c.Snapshot().LastDelay[Outbound]; d != 2*time.Second {
		t.Fatalf("delay %v after the queue drained", d)
	}
}

func TestReconfigureKeepsState(t *testing.T) {
	f := newFake(t, Default)
	f.c.Probe(Outbound, 10*time.Second)
	f.c.RELReceived(9, 1)
	cfg := Default
	cfg.Level1Delay = 2 * time.Second
	cfg.Constraints = []Constraint{{DPC: 9, MaxCalls: 1}}
	if err := f.c.Reconfigure(cfg); err != nil {
		t.Fatal(err)
	}
	s := f.c.Snapshot()
	if s.Level[Outbound] != 1 || s.Destinations[0].ACL != 1 {
		t.Fatalf("state lost: %+v", s)
	}
	if f.c.Config().Level1Delay != 2*time.Second {
		t.Fatal("threshold not replaced")
	}
	f.c.CallStarted(9, false)
	if f.c.AdmitOutgoing(8) != RefuseOutboundCongestion {
		t.Fatal("levels must still act")
	}
	bad := Default
	bad.Level1Delay = time.Hour
	if err := f.c.Reconfigure(bad); err == nil || f.c.Config().Level1Delay != 2*time.Second {
		t.Fatal("an invalid reload must change nothing")
	}
	g := newFake(t, cfg)
	g.c.CallStarted(9, false)
	if g.c.AdmitOutgoing(9) != RefuseConstraint {
		t.Fatal("new constraint not applied")
	}
}

// Issue 13 item 13: an ACL above 3 is spare in every variant and is not acted
// upon: no alarm, no throttling (it used to be read as level 3, 0 % admitted),
// and it does not change the level of a control already running.
func TestSpareACLNotActedOn(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 42
	f.c.RELReceived(x, 5)
	f.expectAlarms("")
	if n := f.admitted(x, 10); n != 10 {
		t.Fatalf("spare ACL 5: %d of 10 admitted", n)
	}
	f.c.RELReceived(x, 1)
	f.expectAlarms("0x1A+")
	f.c.RELReceived(x, 255)
	f.expectAlarms("")
	if n := f.admitted(x, 100); n != 50 {
		t.Fatalf("ACL 1 then spare 255: %d of 100 admitted, want 50", n)
	}
}

// Issue 13, settled: in ANSI a REL without ACL ends automatic congestion
// control at once (T1.113.4 Annex D); in ITU it does not, and the control
// runs until ACC.Duration after the last REL with ACL.
func TestACCEndsOnANSIRELWithoutACL(t *testing.T) {
	f := newFake(t, Default)
	const ansi, itu mtp.PointCode = 42, 43
	f.c.RELReceivedFrom(ansi, 2, isup.ANSI)
	f.c.RELReceivedFrom(itu, 2, isup.ITU)
	f.expectAlarms("0x1A+ 0x1A+")
	f.c.RELReceivedFrom(ansi, 0, isup.ANSI)
	f.c.RELReceivedFrom(itu, 0, isup.ITU)
	f.expectAlarms("0x1A-")
	if n := f.admitted(ansi, 10); n != 10 {
		t.Fatalf("ANSI after a REL without ACL: %d of 10 admitted", n)
	}
	if n := f.admitted(itu, 100); n != 10 {
		t.Fatalf("ITU after a REL without ACL: %d of 100 admitted, want 10 (ACL 2 still)", n)
	}
	f.c.RELReceivedFrom(ansi, 0, isup.ANSI) // nothing under control: nothing to end
	f.expectAlarms("")
	f.advance(Default.ACC.Duration)
	f.expectAlarms("0x1A-")
}

// TestAvailabilityCountsInAttemptOrder: T7 failures count "in a row" in the
// order the IAMs were sent, not the order their timers expire. Three IAMs
// sent before many answered ones expire back to back (the lab's flap): the
// destination stays in service. Three failures after the last answered
// attempt take it out; a failure older than an answered attempt never counts.
func TestAvailabilityCountsInAttemptOrder(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 5
	for a := uint64(1); a <= 20; a++ {
		f.c.AttemptStarted(x, a)
	}
	for a := uint64(4); a <= 20; a++ {
		f.c.Backward(x, a) // the later calls were answered
	}
	f.c.T7Expired(x, 1) // T7 of the first three expires only now, back to back
	f.c.T7Expired(x, 2)
	f.c.T7Expired(x, 3)
	f.expectAlarms("")
	if f.c.AdmitOutgoing(x) != Admit {
		t.Fatal("a healthy destination was taken out of service")
	}
	// Out of timer order: 21 and 23 fail, 22 is answered late: 21 is not in
	// the run that ends with 23.
	for a := uint64(21); a <= 25; a++ {
		f.c.AttemptStarted(x, a)
	}
	f.c.T7Expired(x, 21)
	f.c.T7Expired(x, 23)
	f.c.Backward(x, 22)
	f.c.T7Expired(x, 24)
	f.expectAlarms("")
	f.c.T7Expired(x, 24) // the same attempt twice counts once
	f.expectAlarms("")
	f.c.T7Expired(x, 25)
	f.expectAlarms("0x18+")
	if f.c.AdmitOutgoing(x) != RefuseOutOfService {
		t.Fatal("three IAMs in a row without answer, still in service")
	}
}

// TestAvailabilityIgnoresIAMsLostWithTheAssociation: IAMs in flight when an
// association stops being active (or the destination is paused) die with it;
// their T7 expiries are not the destination's failures. Attempts made after
// the loss count again.
func TestAvailabilityIgnoresIAMsLostWithTheAssociation(t *testing.T) {
	f := newFake(t, Default)
	const x mtp.PointCode = 5
	for a := uint64(1); a <= 3; a++ {
		f.c.AttemptStarted(x, a)
	}
	f.c.MTPEvent(mtp.PeerState{Peer: "b", State: "down", Reason: "heartbeat timeout"})
	f.c.MTPEvent(mtp.PeerState{Peer: "b", State: "active"})
	for a := uint64(1); a <= 3; a++ {
		f.c.T7Expired(x, a)
	}
	f.expectAlarms("")
	// Paused and resumed: the pause itself is out of service, but the IAMs
	// sent before it do not take the destination out again afterwards.
	for a := uint64(4); a <= 6; a++ {
		f.c.AttemptStarted(x, a)
	}
	f.c.MTPEvent(mtp.Pause{PC: x})
	f.c.MTPEvent(mtp.Resume{PC: x})
	f.expectAlarms("0x18+ 0x18-")
	for a := uint64(4); a <= 6; a++ {
		f.c.T7Expired(x, a)
	}
	f.expectAlarms("")
	for a := uint64(7); a <= 9; a++ {
		f.c.AttemptStarted(x, a)
		f.c.T7Expired(x, a)
	}
	f.expectAlarms("0x18+")
}
