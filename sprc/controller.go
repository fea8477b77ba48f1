package sprc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// Alarm numbers raised by congestion control (the host API documents them).
const (
	AlarmNetworkCongestion uint16 = 0x0E // SS7 signaling network congestion (MTP, SCON)
	AlarmStackCongestion   uint16 = 0x16 // SS7 signaling stack congestion (own queues)
	AlarmOutOfService      uint16 = 0x18 // destination out of service
	AlarmConstraint        uint16 = 0x19 // destination constraint violation
	AlarmACC               uint16 = 0x1A // automatic congestion control towards a destination
	AlarmDestinationSlow   uint16 = 0x1C // the admission limits calls to a destination that answers slowly
	AlarmSystemBusy        uint16 = 0x20 // Code Yellow
	AlarmCodeRed           uint16 = 0x21 // Code Red: the gateway restarts
	SeverityInformative    uint8  = 0x01
	SeverityMinor          uint8  = 0x02
	SeverityMajor          uint8  = 0x03
)

// Alarm is raised or cleared towards the hosts and operators.
type Alarm struct {
	Number   uint16
	Severity uint8
	Cleared  bool
	Text     string
	Data     map[string]any
}

// Refusal is why congestion control refused a new outgoing call.
type Refusal uint8

// Refusals, in the order they are checked.
const (
	Admit                    Refusal = iota
	RefuseOutboundCongestion         // own outbound level 1 or 2 (status 0x0C)
	RefuseHighTraffic                // Code Yellow
	RefuseOutOfService               // destination out of service
	RefuseNetworkCongestion          // MTP congestion step or ANSI priority
	RefuseACC                        // received ACL
	RefuseConstraint                 // destination limits
	RefuseAdmission                  // adaptive limit on calls in set-up (status 0x0C)
	numRefusals
)

var refusalNames = [numRefusals]string{"admitted", "outbound congestion", "high traffic", "destination out of service",
	"network congestion", "automatic congestion control", "constraint violation", "admission limit"}

func (r Refusal) String() string { return refusalNames[r] }

// Actions are how the controller acts through the gateway.
type Actions struct {
	Alarm   func(Alarm)
	Ping    func(dpc mtp.PointCode) // send a circuit query (CQM) to test a destination
	CodeRed func(reason string)     // dump and restart
}

// Stats are the controller's counters and states, for metrics and status.
type Stats struct {
	Level          [2]Level
	LastDelay      [2]time.Duration
	AverageDelay   [2]time.Duration
	HostOverload   Level
	ACLSent        isup.AutomaticCongestionLevel
	Refused        [numRefusals]uint64
	InboundShed    uint64 // IAM/SAM dropped at the edge (inbound level 2)
	Level1Admitted uint64 // outgoing calls the level-1 throttle let through
	InboundRefused uint64 // IAMs released with cause 42 (inbound level 1, Code Yellow)
	PriorityDrops  uint64 // ANSI messages below the MTP congestion level
	CodeYellow     bool
	CodeRed        bool
	// ThrottlingSampleActivity is non-zero while non-zero latency is sampled.
	ThrottlingSampleActivity int
	Destinations             []DestinationStatus
	// Admission is the adaptive limit on calls in set-up; its level is
	// not in Level (which is the probes'), but it raises the same alarm
	// 0x16 (outbound) and the ACL.
	Admission AdmissionStatus
}

// DestinationStatus is one destination's control state.
type DestinationStatus struct {
	PC           mtp.PointCode
	ACL          isup.AutomaticCongestionLevel
	MTPStep      int
	MTPAdmit     float64
	MTPLevel     uint8
	Calls        int
	Outbound     int
	Violation    string
	OutOfService bool
	Reason       string
}

// Controller decides admission and congestion signalling. It is safe for
// concurrent use: the stack's loop, the MTP event pump, host connections and
// the ticker all call it.
type Controller struct {
	mu    sync.Mutex
	cfg   Config
	now   func() time.Time
	act   Actions
	dir   [2]levelMachine
	host  Level
	cy    codeYellow
	dests map[mtp.PointCode]*dest
	stats Stats
	// inboundLevel mirrors dir[Inbound].level for the lock-free edge filter.
	inboundLevel atomic.Uint32
	shed         atomic.Uint64
	adm          admission
	// refusedAtEdge counts RefuseAtEdge's refusals, without the lock.
	refusedAtEdge [numRefusals]atomic.Uint64
	edgeRefusal   atomic.Uint32 // see EdgeRefusal
}

// New builds a controller; now is its clock (time.Now in production).
func New(cfg Config, now func() time.Time, act Actions) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if act.Alarm == nil {
		act.Alarm = func(Alarm) {}
	}
	if act.Ping == nil {
		act.Ping = func(mtp.PointCode) {}
	}
	if act.CodeRed == nil {
		act.CodeRed = func(string) {}
	}
	c := &Controller{cfg: cfg, now: now, act: act, dests: map[mtp.PointCode]*dest{}}
	c.dir = [2]levelMachine{newLevelMachine(cfg.AverageOver), newLevelMachine(cfg.AverageOver)}
	c.adm.init(&c.cfg.Admission)
	c.adm.window = now()
	for i := range cfg.Constraints {
		c.destination(cfg.Constraints[i].DPC).limit = &c.cfg.Constraints[i]
	}
	return c, nil
}

// Config returns the configuration in force (defaults filled in).
func (c *Controller) Config() Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg
}

func (c *Controller) destination(pc mtp.PointCode) *dest {
	d, ok := c.dests[pc]
	if !ok {
		d = &dest{pc: pc}
		c.dests[pc] = d
	}
	return d
}

// Probe records one probe period's delay for a queue.
func (c *Controller) Probe(dir Direction, delay time.Duration) {
	red := ""
	c.mu.Lock()
	defer func() {
		c.mu.Unlock()
		if red != "" {
			c.act.CodeRed(red) // outside the lock: it may take its time
		}
	}()
	m := &c.dir[dir]
	before := m.level
	if dir == Outbound {
		before = c.outboundLevel()
	}
	after := m.record(delay, &c.cfg)
	c.updateEdge()
	switch dir {
	case Inbound:
		c.inboundLevel.Store(uint32(after))
		c.levelAlarm(dir, before, after)
	case Outbound:
		c.outboundChanged(before, "")
	}
	// Code Yellow samples once per probe period, from the worse of the queues.
	if dir == Inbound {
		worst := max(delay, c.dir[Outbound].last)
		change, isRed := c.cy.sample(worst, c.now(), &c.cfg.CodeYellow)
		c.updateEdge()
		switch change {
		case 1:
			c.alarm(Alarm{Number: AlarmSystemBusy, Severity: SeverityMajor, Text: "System Busy (Code Yellow): high traffic, new calls refused",
				Data: map[string]any{"average_ms": worst.Milliseconds()}})
		case -1:
			c.alarm(Alarm{Number: AlarmSystemBusy, Severity: SeverityMajor, Cleared: true, Text: "System Busy (Code Yellow) cleared"})
		}
		if isRed {
			c.alarm(Alarm{Number: AlarmCodeRed, Severity: SeverityMajor, Text: "Code Red: Code Yellow lasted longer than its duration; restarting"})
			red = fmt.Sprintf("Code Yellow since %s exceeded %s", c.cy.since.Format(time.RFC3339), c.cfg.CodeYellow.Duration)
		}
	}
}

// levelAlarm raises, moves or clears alarm 0x16 for a direction.
func (c *Controller) levelAlarm(dir Direction, before, after Level) {
	if after == before {
		return
	}
	c.alarm(Alarm{Number: AlarmStackCongestion, Severity: SeverityMajor, Cleared: after == 0,
		Text: fmt.Sprintf("SS7 signaling stack congestion: %s level %d", dir, after),
		Data: map[string]any{"direction": dir.String(), "level": int(after)}})
}

// outboundLevel is the outbound level told to operators and neighbours: the
// higher of the probes' and the adaptive admission's.
func (c *Controller) outboundLevel() Level { return max(c.dir[Outbound].level, c.adm.level) }

// outboundChanged raises the alarm if the outbound level moved from before.
func (c *Controller) outboundChanged(before Level, _ string) {
	c.levelAlarm(Outbound, before, c.outboundLevel())
}

// alarm hands an alarm to the gateway; called with the lock held, so Actions
// must not call back into the controller synchronously.
func (c *Controller) alarm(a Alarm) { c.act.Alarm(a) }

// HostOverload records the highest overload level the hosts declare (0-2).
func (c *Controller) HostOverload(level int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.host = Level(min(max(level, 0), 2))
}

// ownLevel is the higher of the two directions.
func (c *Controller) ownLevel() Level { return max(c.dir[Inbound].level, c.outboundLevel()) }

// ReleaseACL is the ACL every REL carries: the higher of our own level and the
// hosts' declared overload; 0 for none.
func (c *Controller) ReleaseACL() isup.AutomaticCongestionLevel {
	c.mu.Lock()
	defer c.mu.Unlock()
	acl := isup.AutomaticCongestionLevel(max(c.ownLevel(), c.host))
	c.stats.ACLSent = acl
	return acl
}

// ShedInbound is the edge filter, read without a lock for every inbound
// message: at inbound level 2, IAM and SAM are dropped after reading only their
// type.
func (c *Controller) ShedInbound(t isup.MessageType) bool {
	if c.inboundLevel.Load() < 2 || (t != isup.IAM && t != isup.SAM) {
		return false
	}
	c.shed.Add(1)
	return true
}

// AdmitIncoming says whether a new incoming call may proceed; false releases it
// with cause 42 (and ACL, since the level is raised).
func (c *Controller) AdmitIncoming(opc mtp.PointCode) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir[Inbound].level >= 1 || c.cy.yellow {
		c.stats.InboundRefused++
		return false
	}
	return true
}

// EdgeRefusal is the refusal every new outgoing call gets whatever its
// destination and the queue's wait, or Admit when there is none (no level,
// or level 1 with the throttle, which depends on the wait). It is read
// without a lock and is always current: it is updated, with the lock held,
// the moment a level or Code Yellow changes (before any alarm says so) or
// the configuration is replaced.
func (c *Controller) EdgeRefusal() Refusal { return Refusal(c.edgeRefusal.Load()) }

// updateEdge recomputes EdgeRefusal (with the lock held).
func (c *Controller) updateEdge() { c.edgeRefusal.Store(uint32(c.edgeRefusalLocked())) }

func (c *Controller) edgeRefusalLocked() Refusal {
	switch lvl := c.dir[Outbound].level; {
	case lvl >= 2, lvl == 1 && c.cfg.Level1Outseize != Level1Throttle:
		return RefuseOutboundCongestion
	case lvl == 1:
		return Admit
	case c.cy.yellow:
		return RefuseHighTraffic
	}
	return Admit
}

// RefuseAtEdge counts a refusal given, without asking, from EdgeRefusal:
// the cheapest refusal, with no lock and no clock.
func (c *Controller) RefuseAtEdge(r Refusal) { c.refusedAtEdge[r].Add(1) }

// AdmitOutgoing decides on a new outgoing call to dpc, before any IAM.
func (c *Controller) AdmitOutgoing(dpc mtp.PointCode) Refusal {
	return c.AdmitOutgoingAt(dpc, -1)
}

// AdmitOutgoingAt is AdmitOutgoing given the outbound queue's current wait
// (negative: not known), which the level-1 throttle needs; without it level 1
// refuses.
func (c *Controller) AdmitOutgoingAt(dpc mtp.PointCode, wait time.Duration) Refusal {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.admitOutgoing(dpc, c.now(), wait)
	c.stats.Refused[r]++
	if r == Admit && c.dir[Outbound].level == 1 {
		c.stats.Level1Admitted++
	}
	return r
}

func (c *Controller) admitOutgoing(dpc mtp.PointCode, now time.Time, wait time.Duration) Refusal {
	switch lvl := c.dir[Outbound].level; {
	case lvl >= 2:
		return RefuseOutboundCongestion
	case lvl == 1:
		if c.cfg.Level1Outseize != Level1Throttle || wait < 0 || wait >= c.cfg.ThrottleTarget {
			return RefuseOutboundCongestion
		}
	}
	if c.cy.yellow {
		return RefuseHighTraffic
	}
	d := c.destination(dpc)
	if d.oos {
		return RefuseOutOfService
	}
	if d.mtpLevel >= 1 { // ANSI: IAMs (priority 0) are not sent at level 1 or more
		return RefuseNetworkCongestion
	}
	if d.step > 0 && !d.mtpAdmit.admit(c.cfg.MTP.Steps[d.step]) {
		return RefuseNetworkCongestion
	}
	if d.acl > 0 && c.cfg.ACC.Mode == ACCAuto && !d.accAdmit.admit(c.cfg.ACC.Admit[d.acl-1]) {
		return RefuseACC
	}
	if r := c.admitAdaptive(dpc); r != Admit {
		return r
	}
	if k := c.constraintBroken(d, now); k != "" {
		return RefuseConstraint
	}
	return Admit
}

// constraintBroken checks the destination's limits for one more outgoing call
// and counts the attempt when it is admitted.
func (c *Controller) constraintBroken(d *dest, now time.Time) string {
	k := d.limit
	if k == nil {
		return ""
	}
	c.rollWindows(d, now)
	broken := ""
	switch {
	case k.MaxCalls > 0 && d.calls >= k.MaxCalls:
		broken = "maximum concurrent calls"
	case k.MaxOutbound > 0 && d.outbound >= k.MaxOutbound:
		broken = "maximum concurrent outbound calls"
	case k.BurstRate > 0 && d.burst.count >= k.BurstRate:
		broken = "maximum burst rate"
	case k.SustainedRate > 0 && d.sustained.count >= k.SustainedRate:
		broken = "maximum sustained rate"
	}
	if broken == "" {
		d.burst.count++
		d.sustained.count++
		return ""
	}
	if d.violation == "" {
		d.violation = broken
		c.alarm(Alarm{Number: AlarmConstraint, Severity: SeverityMinor, Text: fmt.Sprintf("destination %s: constraint violation (%s)", c.cfg.PointCodes.Format(d.pc), broken),
			Data: map[string]any{"dpc": uint32(d.pc), "constraint": broken}})
	}
	return broken
}

// rollWindows starts new rate windows as time passes.
func (c *Controller) rollWindows(d *dest, now time.Time) {
	if k := d.limit; k != nil {
		if k.BurstWindow > 0 {
			d.burst.roll(now, k.BurstWindow)
		}
		if k.SustainedWindow > 0 {
			d.sustained.roll(now, k.SustainedWindow)
		}
	}
}

// resumeConstraint clears a violation once every limit holds again: concurrent
// counts below their maxima and the current windows below their rates.
func (c *Controller) resumeConstraint(d *dest) {
	k := d.limit
	if d.violation == "" || k == nil {
		return
	}
	if (k.MaxCalls > 0 && d.calls >= k.MaxCalls) || (k.MaxOutbound > 0 && d.outbound >= k.MaxOutbound) ||
		(k.BurstRate > 0 && d.burst.count >= k.BurstRate) || (k.SustainedRate > 0 && d.sustained.count >= k.SustainedRate) {
		return
	}
	c.alarm(Alarm{Number: AlarmConstraint, Severity: SeverityMinor, Cleared: true, Text: fmt.Sprintf("destination %s: constraint violation (%s) over", c.cfg.PointCodes.Format(d.pc), d.violation),
		Data: map[string]any{"dpc": uint32(d.pc), "constraint": d.violation}})
	d.violation = ""
}

// CallStarted and CallEnded keep the concurrent-call counts.
func (c *Controller) CallStarted(pc mtp.PointCode, outgoing bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callStarted(pc, outgoing)
}

func (c *Controller) callStarted(pc mtp.PointCode, outgoing bool) {
	d := c.destination(pc)
	d.calls++
	if outgoing {
		d.outbound++
	}
}

func (c *Controller) CallEnded(pc mtp.PointCode, outgoing bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callEnded(pc, outgoing)
}

func (c *Controller) callEnded(pc mtp.PointCode, outgoing bool) {
	d := c.destination(pc)
	d.calls = max(d.calls-1, 0)
	if outgoing {
		d.outbound = max(d.outbound-1, 0)
	}
	c.resumeConstraint(d)
}

// RELReceived feeds automatic congestion control: a REL with ACL puts the point
// code under control, renewed by each such REL.
func (c *Controller) RELReceived(pc mtp.PointCode, acl isup.AutomaticCongestionLevel) {
	// Levels above 3 are spare in every variant (the stack already drops those
	// its variant leaves spare): not acted upon, never read as "stop all calls".
	if acl == 0 || acl > 3 || c.cfg.ACC.Mode == ACCOff {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.destination(pc)
	now := c.now()
	if d.acl != acl {
		c.alarm(Alarm{Number: AlarmACC, Severity: SeverityMinor, Text: fmt.Sprintf("destination %s signals congestion level %d (ACL)", c.cfg.PointCodes.Format(pc), acl),
			Data: map[string]any{"dpc": uint32(pc), "level": int(acl)}})
	}
	d.acl, d.aclUntil = acl, now.Add(c.cfg.ACC.Duration)
}

// RELReceivedFrom is RELReceived knowing the variant of the circuit group the
// REL came on. In ANSI a REL without ACL from a destination under control
// ends the control at once (T1.113.4 Annex D: the T_ACC,r control stops on
// expiry or on a REL without ACL, as IntelliNet's ANSI stack does it); in ITU
// no such rule exists (Q.764 §2.11 has no ACC timer), so the control runs
// out ACC.Duration after the last REL with ACL.
func (c *Controller) RELReceivedFrom(pc mtp.PointCode, acl isup.AutomaticCongestionLevel, v isup.Variant) {
	if acl != 0 || v != isup.ANSI {
		c.RELReceived(pc, acl)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.dests[pc]; ok && d.acl > 0 {
		c.endACC(d, "REL without ACL received, control ended")
	}
}

// endACC ends automatic congestion control towards a destination.
func (c *Controller) endACC(d *dest, why string) {
	d.acl = 0
	c.alarm(Alarm{Number: AlarmACC, Severity: SeverityMinor, Cleared: true, Text: fmt.Sprintf("destination %s: %s", c.cfg.PointCodes.Format(d.pc), why),
		Data: map[string]any{"dpc": uint32(d.pc)}})
}

// AttemptStarted, T7Expired and Backward track outgoing attempts (IAMs) that
// get no answer: enough failures in a row, in the order the attempts were
// made, take the destination out of service. attempt numbers the attempts in
// the order they start (the stack's call IDs, which grow with each call).
func (c *Controller) AttemptStarted(pc mtp.PointCode, attempt uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.destination(pc).attempts.start(attempt)
}

func (c *Controller) T7Expired(pc mtp.PointCode, attempt uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.destination(pc)
	n := c.cfg.Availability.T7Failures
	if k := d.attempts.fail(attempt, n); k > 0 && k >= n {
		d.attempts.reset()
		c.outOfService(d, fmt.Sprintf("%d IAMs in a row without a backward message (T7)", k))
	}
}

func (c *Controller) Backward(pc mtp.PointCode, attempt uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.destination(pc).attempts.answer(attempt)
}

// QueryUnanswered (T28 expired) takes the destination out of service;
// QueryAnswered (a CQR) is a successful ping.
func (c *Controller) QueryUnanswered(pc mtp.PointCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outOfService(c.destination(pc), "circuit query unanswered (T28)")
}

func (c *Controller) QueryAnswered(pc mtp.PointCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.destination(pc); d.oos {
		c.backInService(d, "circuit query answered")
	}
}

func (c *Controller) outOfService(d *dest, reason string) {
	now := c.now()
	d.resumeAt = now.Add(c.cfg.Availability.ResumeAfter)
	d.nextPing = now
	if d.oos {
		return
	}
	d.oos, d.oosReason = true, reason
	c.alarm(Alarm{Number: AlarmOutOfService, Severity: SeverityMajor, Text: fmt.Sprintf("destination %s out of service: %s", c.cfg.PointCodes.Format(d.pc), reason),
		Data: map[string]any{"dpc": uint32(d.pc), "reason": reason}})
}

func (c *Controller) backInService(d *dest, why string) {
	d.oos = false
	d.attempts.reset()
	c.alarm(Alarm{Number: AlarmOutOfService, Severity: SeverityMajor, Cleared: true, Text: fmt.Sprintf("destination %s back in service: %s", c.cfg.PointCodes.Format(d.pc), why),
		Data: map[string]any{"dpc": uint32(d.pc)}})
}

// MTPEvent reacts to MTP status: congestion (SCON) per Q.764 §2.10, and pause
// and resume for availability. An association that stops being active
// (PeerState) takes the IAMs in flight on it along: their T7 expiries are not
// counted against any destination (which destinations it carried is the
// routing's business; a destination that really fails keeps failing).
func (c *Controller) MTPEvent(e mtp.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	switch x := e.(type) {
	case mtp.Congestion:
		c.mtpCongestion(c.destination(x.PC), x, now)
	case mtp.PeerState:
		if x.State != "active" {
			for _, d := range c.dests {
				d.attempts.lost()
			}
		}
	case mtp.Pause:
		d := c.destination(x.PC)
		d.attempts.lost()
		c.outOfService(d, "MTP pause (destination unavailable)")
	case mtp.Resume:
		if d := c.destination(x.PC); d.oos {
			c.backInService(d, "MTP resume")
		}
	}
}

func (c *Controller) mtpCongestion(d *dest, e mtp.Congestion, now time.Time) {
	if e.LevelGiven {
		d.mtpLevel = e.Level // ANSI multi-level: 0 ends it
		if e.Level == 0 {
			c.endMTPCongestion(d)
			return
		}
	}
	if !d.mtpAlarm {
		d.mtpAlarm = true
		level := 1
		if e.LevelGiven {
			level = int(e.Level)
		}
		c.alarm(Alarm{Number: AlarmNetworkCongestion, Severity: SeverityMajor, Text: fmt.Sprintf("SS7 signaling network congestion towards %s, level %d", c.cfg.PointCodes.Format(d.pc), level),
			Data: map[string]any{"dpc": uint32(d.pc), "level": level}})
	}
	if now.Before(d.t29Until) {
		return // indications during T29 are ignored
	}
	if d.step < len(c.cfg.MTP.Steps)-1 {
		d.step++
	}
	d.t29Until, d.t30Until = now.Add(c.cfg.MTP.T29), now.Add(c.cfg.MTP.T30)
}

func (c *Controller) endMTPCongestion(d *dest) {
	d.step, d.mtpLevel = 0, 0
	d.t29Until, d.t30Until = time.Time{}, time.Time{}
	if d.mtpAlarm {
		d.mtpAlarm = false
		c.alarm(Alarm{Number: AlarmNetworkCongestion, Severity: SeverityMajor, Cleared: true, Text: fmt.Sprintf("SS7 signaling network congestion towards %s ended", c.cfg.PointCodes.Format(d.pc)),
			Data: map[string]any{"dpc": uint32(d.pc)}})
	}
}

// SendAllowed is ANSI's MTP congestion rule: only messages whose priority is at
// least the congestion level towards dpc are sent.
func (c *Controller) SendAllowed(dpc mtp.PointCode, priority uint8) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.dests[dpc]
	if !ok || priority >= d.mtpLevel {
		return true
	}
	c.stats.PriorityDrops++
	return false
}

// Tick runs the controller's timers: ACC expiry, T29/T30, rate windows,
// availability. Call it often (every 100 ms is plenty).
func (c *Controller) Tick() {
	var pings []mtp.PointCode
	c.mu.Lock()
	defer func() {
		c.mu.Unlock()
		for _, pc := range pings { // outside the lock: the ping goes through the stack
			c.act.Ping(pc)
		}
	}()
	now := c.now()
	for _, d := range c.dests {
		if d.acl > 0 && !now.Before(d.aclUntil) {
			c.endACC(d, "ACL no longer received, control ended")
		}
		if d.step > 0 && !d.t30Until.IsZero() && !now.Before(d.t30Until) {
			d.step-- // a quiet T30: one step back towards full load
			if d.step == 0 {
				c.endMTPCongestion(d)
			} else {
				d.t30Until = now.Add(c.cfg.MTP.T30)
			}
		}
		c.rollWindows(d, now)
		c.resumeConstraint(d)
		if d.oos {
			switch {
			case c.cfg.Availability.Ping && !now.Before(d.nextPing):
				d.nextPing = now.Add(c.cfg.Availability.PingInterval)
				pings = append(pings, d.pc)
			case !c.cfg.Availability.Ping && !now.Before(d.resumeAt):
				c.backInService(d, "time to resume elapsed")
			}
		}
	}
	c.admissionTick(now)
}

// Snapshot returns the counters and states.
func (c *Controller) Snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	for i := range c.dir {
		s.Level[i], s.LastDelay[i], s.AverageDelay[i] = c.dir[i].level, c.dir[i].last, c.dir[i].average
	}
	s.HostOverload = c.host
	s.InboundShed = c.shed.Load()
	s.CodeYellow, s.CodeRed = c.cy.yellow, c.cy.red
	s.ThrottlingSampleActivity = c.cy.sampleActivity
	s.Refused[RefuseAdmission] += c.adm.edge.Load()
	for i := range s.Refused {
		s.Refused[i] += c.refusedAtEdge[i].Load()
	}
	s.Admission = c.adm.status()
	s.Destinations = nil
	for _, d := range c.dests {
		admit := 1.0
		if d.step > 0 {
			admit = c.cfg.MTP.Steps[d.step]
		}
		s.Destinations = append(s.Destinations, DestinationStatus{PC: d.pc, ACL: d.acl, MTPStep: d.step, MTPAdmit: admit, MTPLevel: d.mtpLevel,
			Calls: d.calls, Outbound: d.outbound, Violation: d.violation, OutOfService: d.oos, Reason: d.oosReason})
	}
	return s
}

// Reconfigure replaces the thresholds, keeping every state (levels, control
// of destinations, counters): the SIGHUP reload. A change of AverageOver
// restarts the averages.
func (c *Controller) Reconfigure(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg.AverageOver != c.cfg.AverageOver {
		for i := range c.dir {
			lvl := c.dir[i].level
			c.dir[i] = newLevelMachine(cfg.AverageOver)
			c.dir[i].level = lvl
		}
	}
	if cfg.Admission.Enabled != c.cfg.Admission.Enabled {
		// The limits start afresh; the calls in set-up, counted on or
		// off, stay counted.
		before := c.outboundLevel()
		c.clearSlowAlarms("admission switched off or on")
		c.adm.reset(&cfg.Admission)
		c.adm.window = c.now()
		c.cfg = cfg
		c.outboundChanged(before, "admission")
	}
	c.cfg = cfg
	c.updateEdge()
	for _, d := range c.dests {
		d.limit = nil
		if d.step >= len(cfg.MTP.Steps) {
			d.step = len(cfg.MTP.Steps) - 1
		}
	}
	for i := range c.cfg.Constraints {
		c.destination(c.cfg.Constraints[i].DPC).limit = &c.cfg.Constraints[i]
	}
	return nil
}
