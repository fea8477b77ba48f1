package sprc

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/mtp"
)

// Adaptive admission: a limit on the calls in set-up (IAM sent, no backward
// message yet, the call's wait in the outbound queue included), per
// destination and overall, adjusted once a window from the set-up time the
// admitted calls measured. It is a delay-gradient limit in the spirit of TCP
// Vegas and of Netflix's gradient concurrency limits:
//
//	gradient = clamp((baseline + Target) / setup, 0.5, 2)
//	limit    = limit + Smoothing * (limit*gradient + sqrt(limit) - limit)
//
// where setup is the window's mean set-up time and baseline the lowest window
// mean of the last Baseline while nothing was refused (the set-up time
// without queueing). While set-up times stay below baseline + Target the
// limit grows (only while at least a quarter of it is used, so an idle
// destination does not gain an unbounded limit, yet a load that doubles or
// more at once still finds room); above it, it shrinks, by at most an eighth
// a window. An unused limit keeps room for a stall at the measured rate; a
// sudden overload (a standing queue: no call of the window was quick,
// CoDel's criterion, RFC 8289) cuts it to rate x (baseline + Target)
// (Little's law; docs/congestion.md). At equilibrium the queueing delay the calls see is
// about Target, the server runs at its capacity and only the excess is
// refused. A limit that refuses while set-up takes at most half of what
// is allowed only lags the load (a fresh gateway's initial limit): it opens
// by the set-ups each window completed, TCP's slow start (RFC 5681 3.1),
// and those refusals raise no level. The limit never falls below MinLimit
// (>= 1): with no call in set-up, a call is always admitted. FirstProbe
// into a run of refusals, and then every Baseline, the baseline is probed
// (the limit at a quarter for a drain of at least one set-up time and a
// window to measure, BBR's ProbeRTT); after that, while refusing with set-up above the target, the
// room above the limit is probed (the limit a quarter higher, kept when the
// completed rate rises with it, BBR's ProbeBW, or rises by less while
// set-up stays within a budget of twice Target above the baseline), 2 s
// after a probe that found room and 4 to 16 s after one that found none.
// Cuts under which the completed rate follows the limit down and set-up
// does not fall are undone and the baseline is probed: no limit can shed
// that delay (futile).
// The overall limit moves with the highest gradient of the destinations: it
// shrinks when all of them slow down (the gateway is the bottleneck), not
// for one slow far end.

// AdmissionConfig is the adaptive limit on calls in set-up.
type AdmissionConfig struct {
	Enabled bool
	// Target is the queueing delay allowed on top of the baseline set-up
	// time (20 ms).
	Target time.Duration
	// InitialLimit is the limit before anything was measured (100);
	// MinLimit and MaxLimit bound it (4, 10000). MinLimit is at least 1.
	InitialLimit, MinLimit, MaxLimit int
	// Smoothing is the share of each new estimate taken (0.25).
	Smoothing float64
	// Window is how often the limit is adjusted (100 ms).
	Window time.Duration
	// Baseline is how long the lowest set-up time is remembered (30 s).
	Baseline time.Duration
	// FirstProbe is how long a destination refuses before its baseline is
	// probed the first time in that overload (2 s); later probes follow
	// every Baseline.
	FirstProbe time.Duration
	// Hold is the least time the admission's level 1 stays raised (2 s);
	// it clears once nothing was refused for ClearAfter (1 s).
	Hold, ClearAfter time.Duration
}

// gate is what the edge reads without a lock.
type gate struct {
	inSetup atomic.Int64
	// queued counts outseizes the edge let through that still wait in the
	// stack's outbound queue: the edge counts them against the limit, the
	// loop's exact check (which runs once they left it) does not.
	queued  atomic.Int64
	limit   atomic.Int64
	refused atomic.Uint64
}

// full reports whether one more call would exceed the limit.
func (g *gate) full() bool { return g.inSetup.Load() >= g.limit.Load() }

// fullBehindQueued is full counting the requests still queued.
func (g *gate) fullBehindQueued() bool {
	return g.inSetup.Load()+g.queued.Load() >= g.limit.Load()
}

// limiter adapts one gate's limit.
type limiter struct {
	gate
	all         *limiter // the overall limiter it was created beside (nil for that one)
	limit       float64
	sum         time.Duration // set-up times completed in this window
	n           int
	quickest    time.Duration // the window's shortest set-up (0: none yet)
	room        room          // from the last window measured
	standing    bool          // the last window measured had a standing queue
	peak        int64         // most calls in set-up during this window
	lastRefused uint64
	// windowRefused: the last window closed refused calls; completed: the
	// set-ups it measured.
	windowRefused bool
	completed     int
	windowAt      time.Time // when the last window closed
	base          baseline
	atMinSince    time.Time
	// lastSeen is the last window that could show the baseline (nothing
	// refused); probe counts down the windows of a baseline probe, which
	// holds the limit at a quarter of probeFrom.
	lastSeen  time.Time
	probe     int
	probeFrom float64
	// probed: the baseline was probed in this overload, which ends once
	// nothing was refused for FirstProbe (calmSince: since when);
	// drainUntil: a probe's drain lasts until then.
	probed     bool
	calmSince  time.Time
	drainUntil time.Time
	// restored: the limit went back up in this window at the end of a
	// baseline probe (admissionTick makes room for it overall); starting:
	// the window's refusals were a slow start's (slowStart), not
	// congestion.
	restored, starting bool
	up                 upProbe
	// setupAvg follows the set-up time (a quarter of each window's); slow
	// is the run of windows with set-up above the target that cuts are
	// judged over (futile).
	setupAvg time.Duration
	slow     slowRun
	// Alarm 0x1C (slowAlarm): farSince is the first of the windows in a
	// row that refused with the gateway's own queue quick (zero: the last
	// window did not); alarmed since alarmSince; lastRefusal is the last
	// window that refused.
	alarmed                           bool
	farSince, alarmSince, lastRefusal time.Time
}

func newLimiter(cfg *AdmissionConfig, all *limiter) *limiter {
	l := &limiter{limit: float64(cfg.InitialLimit), all: all}
	l.gate.limit.Store(int64(cfg.InitialLimit))
	return l
}

// Dequeued is the stack telling that an outseize counted in queued left the
// outbound queue (it implements the stack's Queued through the gateway).
func (l *limiter) Dequeued() {
	l.queued.Add(-1)
	l.all.queued.Add(-1)
}

func (l *limiter) started() {
	if n := l.inSetup.Add(1); n > l.peak {
		l.peak = n
	}
}

func (l *limiter) finished(setup time.Duration, measured bool) {
	l.inSetup.Add(-1)
	if measured {
		l.sum += setup
		l.n++
		if l.quickest == 0 || setup < l.quickest {
			l.quickest = setup
		}
	}
}

// room is what the last window measured says the limit needs, from the
// rate of set-ups it completed (Little's law: calls in set-up = rate x
// set-up time).
type room struct {
	// target is the calls in set-up at that rate with the set-up time at
	// baseline + Target: the limit a sudden overload is cut to.
	target float64
	// burst is what the limit keeps room for while it is not used: the
	// calls that arrive at that rate in the baseline set-up time plus
	// stallAllowance.
	burst float64
}

func (r room) plus(o room) room { return room{r.target + o.target, r.burst + o.burst} }

// stallAllowance is how long the gateway or a far end may stall (a GC
// pause, a descheduled process, an MTP changeover) at a load it otherwise
// carries without a call being refused: the unused limit keeps room for the
// calls that arrive meanwhile.
const stallAllowance = 100 * time.Millisecond

// closeWindow reports whether the gate refused anything in the window and
// the most calls it had in set-up.
func (l *limiter) closeWindow() (refused bool, peak int64) {
	r := l.refused.Load()
	refused, l.lastRefused = r != l.lastRefused, r
	l.windowRefused = refused
	// What the window used: calls in set-up at their most, or now those in
	// set-up and the requests the edge let through that still wait.
	peak, l.peak = max(l.peak, l.inSetup.Load()+l.queued.Load()), l.inSetup.Load()
	return refused, peak
}

// adjust closes a destination's window: it measures the gradient from the
// window's set-up times and applies it. ok is false when nothing was
// measured (the limit stands).
func (l *limiter) adjust(cfg *AdmissionConfig, now time.Time, own bool) (refused bool, g float64, ok bool) {
	refused, peak := l.closeWindow()
	l.starting, l.completed = false, 0
	// The window's real length: a loop busy under the overload ticks late,
	// and a rate counted over the nominal window would overstate it.
	length := cfg.Window
	if !l.windowAt.IsZero() {
		length = max(now.Sub(l.windowAt), time.Millisecond)
	}
	l.windowAt = now
	if l.n == 0 {
		return refused, 0, false
	}
	setup, quickest, rate := l.sum/time.Duration(l.n), l.quickest, float64(l.n)/length.Seconds()
	w := tally{n: l.n, length: length, sum: l.sum}
	l.completed = l.n
	l.sum, l.n, l.quickest = 0, 0, 0
	if l.lastSeen.IsZero() {
		l.lastSeen = now
	}
	switch l.probe {
	case 2: // the queue drains: at least one window and one set-up time,
		// so that the calls admitted before the cut, which carry the queue,
		// are answered before the measuring window
		if now.Before(l.drainUntil) {
			return refused, 0, false
		}
		l.probe = 1
		return refused, 0, false
	case 1: // drained: this window's set-up is the baseline at this load
		l.probe, l.lastSeen = 0, now
		l.base.relearn(setup, now)
		l.limit, l.restored = l.probeFrom, true
		l.gate.limit.Store(int64(l.limit))
		return refused, 0, false
	}
	if l.up.left > 0 {
		l.probeUp(cfg, now, w, setup)
		return refused, 0, false
	}
	l.up.push(w)
	switch {
	case refused:
		l.calmSince = time.Time{}
	case l.calmSince.IsZero():
		l.calmSince = now
	case now.Sub(l.calmSince) >= cfg.FirstProbe:
		l.probed = false // a window without refusals between two does not end an overload
		l.up.reset()
	}
	if !refused {
		l.lastSeen = now
	} else if d := now.Sub(l.lastSeen); d >= cfg.Baseline || (!l.probed && d >= cfg.FirstProbe) {
		// Refusing, the baseline was not seen since (or never, when the
		// overload came first): probe it, as BBR's ProbeRTT does, with the
		// limit at a quarter for two windows (one to drain the queue, one
		// to measure), then back. The probe's set-up time replaces the
		// baseline: it is the set-up time without queueing at the load
		// the overload brings, which the baseline learnt before it
		// underestimates when that load slows the path itself (the
		// flood's refusals and the far end taking the machine's CPUs):
		// with that baseline, a delay above Target, which no limit can
		// shed, would cut the limit and goodput with it (by about 30 %,
		// until the futile-cut rule undid it). The first probe comes
		// FirstProbe into an overload, then one every Baseline.
		l.probeBaseline(cfg, now, l.limit, setup)
		return refused, 0, false
	}
	base := l.base.observe(setup, now, !refused, cfg.Baseline)
	// A limit held at its minimum for a whole baseline period while set-up
	// stays slow is no queue it can drain: the path itself got slower, and the
	// baseline is learnt again.
	if l.limit > float64(cfg.MinLimit) || setup <= base+cfg.Target {
		l.atMinSince = time.Time{}
	} else if l.atMinSince.IsZero() {
		l.atMinSince = now
	} else if now.Sub(l.atMinSince) >= cfg.Baseline {
		l.base.relearn(setup, now)
		l.atMinSince = time.Time{}
	}
	if from, ok := l.futile(cfg, now, setup, base); ok {
		l.probeBaseline(cfg, now, from, setup)
		return refused, 0, false
	}
	l.room = room{target: rate * (base + cfg.Target).Seconds(), burst: rate * (base + stallAllowance).Seconds()}
	g = min(max(float64(base+cfg.Target)/float64(max(setup, 1)), 0.5), 2)
	// Slow on average, yet a call of the window went through at about the
	// baseline: the queue emptied within the window, a stall or a burst,
	// not a standing queue (CoDel's criterion, RFC 8289 §3.2: the least
	// delay over an interval, not the mean, tells a queue that persists).
	// Such a window moves the limit by the gradient's small steps only,
	// never by the sudden cut.
	l.standing = quickest > base+cfg.Target/2
	if l.up.noRoom > 0 && l.limit < 0.75*l.up.noRoom {
		l.up.reset() // the limit fell well below where there was no room: look again soon
	}
	if refused && g < 1 && l.probed && l.up.ready(now) {
		l.up.start(l.limit)
		l.limit = min(l.limit*upGain, float64(cfg.MaxLimit))
		l.gate.limit.Store(int64(l.limit))
		return refused, 0, false
	}
	// Refusals by the overall limit count: it lags with this one.
	bound := refused || (l.all != nil && l.all.windowRefused)
	l.starting = bound && g >= 2 && l.limit < l.room.burst
	if l.starting {
		l.slowStart(cfg, l.completed, l.room.burst)
		return refused, g, true
	}
	l.apply(cfg, g, peak, own && l.standing, l.room)
	return refused, g, true
}

// slowStart raises a limit that refuses calls while set-up takes at most
// half of what the target allows by the set-ups the window completed, up
// to the room a stall at the measured rate needs (burst): TCP's slow
// start, which opens its window by one segment for each one acknowledged
// until a loss or delay says the path is full (RFC 5681 3.1), so that it
// doubles each round trip. No queue holds those calls back: the limit only
// lags the load, as the initial limit does when a load meets a gateway at
// once (a restart, a standby taking over). The gradient's smoothed steps
// (at most 27 % a window) took about a second from 100 to 600 there,
// refusing up to a third of a load the gateway carried (results/notes.md:
// the bench's warm-up at half the capacity). Above room.burst the
// gradient's steps go on: a limit as high as that is the one the
// unused-limit rule keeps before an overload, whose onset must be cut,
// not opened.
func (l *limiter) slowStart(cfg *AdmissionConfig, completed int, burst float64) {
	l.limit = min(l.limit+float64(completed), max(burst, l.limit), float64(cfg.MaxLimit))
	l.gate.limit.Store(int64(l.limit))
}

// probeBaseline starts a baseline probe: the limit at a quarter until the
// calls admitted before it are answered (at least one window and one
// set-up time), then one window whose set-up time becomes the baseline,
// then the limit at from. It counts as this overload's probe (probed): no
// first probe follows it.
func (l *limiter) probeBaseline(cfg *AdmissionConfig, now time.Time, from float64, setup time.Duration) {
	l.probe, l.probeFrom, l.probed = 2, from, true
	l.drainUntil = now.Add(setup)
	l.limit = max(from/4, float64(cfg.MinLimit))
	l.gate.limit.Store(int64(l.limit))
	l.slow = slowRun{}
}

// The probe for room above the limit, as BBR's ProbeBW probes for
// bandwidth: while refusing with set-up above baseline + Target, the limit
// is raised by a quarter for upWindows windows and the rate of set-ups
// completed in its last upWindows-upSettle windows is compared with the
// upWindows windows before. In a queue at its capacity more calls in
// set-up only wait longer and the rate stays (Little's law); when instead
// the rate rises with the limit (by at least 40 % of the raise) while the
// set-up time does not (by at most half of it), the calls added were served
// side by side, not queued: the set-up time before the raise is the path's
// at this load, not queueing. It becomes what the target allows (the
// baseline is raised to it less Target, by at most Target above the
// baseline last measured) and the raised limit stays. Without it a
// set-up time that no longer depends on the calls in set-up (a machine whose
// processes take turns on its CPUs, a far end that answers after a fixed
// time) leaves the gradient nothing to go by: slightly above the target the
// limit drifts wherever the noise takes it, and goodput with it
// (results/notes.md: between 900 and 1500 calls in set-up at the same 30 ms,
// 24-28k against 36-42k calls/s).
//
// A raise also stays when it paid: the rate rose by at least a fifth of it
// and the probe's set-up time stays within the budget, Target above the
// baseline measured on top of Target (at most twice Target of queueing).
// The probe's own set-up time becomes what the target allows. That is the
// path that does more per second with more calls in set-up, whose set-up
// time grows all the way: more calls cost set-up time and buy goodput,
// and within the budget they are worth it.
//
// Each probe holds a quarter more calls in set-up for a second, and in a
// queue at its capacity they only wait: probing every upEvery, the calls
// waited longer a third of the time, which shows in the p99 set-up time.
// So a probe that found no room doubles the wait before the next, up to
// upEveryMax (as TCP backs off its retransmission timer, RFC 6298 5.5); the
// wait is upEvery again once a probe finds room, once the limit fell a
// quarter below where the last probe found none (the load or the path
// changed and room may have opened, which the gradient alone cannot see)
// and at the end of an overload.
const (
	upGain     = 1.25
	upWindows  = 10
	upSettle   = 3
	upEvery    = 2 * time.Second
	upEveryMax = 16 * time.Second
)

// tally is what windows measured: set-ups completed, their length and the
// sum of their set-up times.
type tally struct {
	n           int
	length, sum time.Duration
}

func (t tally) plus(o tally) tally { return tally{t.n + o.n, t.length + o.length, t.sum + o.sum} }

func (t tally) rate() float64 { return float64(t.n) / max(t.length, time.Millisecond).Seconds() }

// mean is the mean set-up time; t.n > 0.
func (t tally) mean() time.Duration { return t.sum / time.Duration(t.n) }

type upProbe struct {
	left   int     // windows left of the probe (0: none)
	from   float64 // the limit before it
	at     time.Time
	recent [upWindows]tally // the last windows before a probe
	filled int
	during tally
	// every is the wait before the next probe (0: upEvery); noRoom is the
	// limit the last probe found no room above (0: none since every was
	// reset).
	every  time.Duration
	noRoom float64
}

func (u *upProbe) push(w tally) {
	copy(u.recent[:], u.recent[1:])
	u.recent[upWindows-1] = w
	u.filled = min(u.filled+1, upWindows)
}

// last is what the last n windows pushed measured together.
func (u *upProbe) last(n int) (t tally) {
	for _, x := range u.recent[upWindows-n:] {
		t = t.plus(x)
	}
	return t
}

// ready reports whether a probe may start: a full history, and the wait
// since the last one ended (or none yet: at is zero).
func (u *upProbe) ready(now time.Time) bool {
	return u.filled == upWindows && now.Sub(u.at) >= max(u.every, upEvery)
}

// backOff doubles the wait after a probe that found no room above its
// starting limit.
func (u *upProbe) backOff() {
	u.every, u.noRoom = min(2*max(u.every, upEvery), upEveryMax), u.from
}

// reset makes the next probe come upEvery after the last.
func (u *upProbe) reset() { u.every, u.noRoom = upEvery, 0 }

func (u *upProbe) start(limit float64) {
	u.left, u.from, u.during = upWindows, limit, tally{}
}

// probeUp takes one window of a probe and decides at its end. A window
// whose set-up time doubled past baseline + Target ends it at once: the
// room was not there.
func (l *limiter) probeUp(cfg *AdmissionConfig, now time.Time, w tally, setup time.Duration) {
	u := &l.up
	doubled := setup >= 2*(l.base.held+cfg.Target)
	if doubled {
		u.left = 0
	} else if u.left--; u.left < upWindows-upSettle {
		u.during = u.during.plus(w)
	}
	if u.left > 0 {
		return
	}
	before := u.last(upWindows)
	// The next probe compares with windows after this one.
	u.at, u.filled = now, 0
	if !doubled && u.during.n > 0 && before.n > 0 {
		duringSetup, beforeSetup := u.during.mean(), before.mean()
		rose := u.during.rate() / before.rate()
		// A set-up time that fell (by more than a twentieth) with the
		// rate up says the path got faster during the probe: a capacity
		// restored, or a gateway whose writes and packets carry more
		// messages each with more calls in set-up (results/notes.md: the
		// rate up 24-64 % under raises whose set-up time fell). The
		// set-up time before the raise was then not the path's, and the
		// baseline must not take it in; but the raise found room and
		// stays.
		faster := duringSetup < beforeSetup-beforeSetup/20
		// The rate rose with the limit: by at least 40 % of the raise.
		rateFollowed := rose >= 1+0.4*(upGain-1)
		// Served side by side: the rate followed the limit and the set-up
		// time did not (by at most half of the raise). In a queue the rate
		// stays and the set-up time takes the whole raise (Little's law);
		// a rate that rose by noise alone while the calls added waited is
		// refused by the second test.
		served := !faster && rateFollowed &&
			duringSetup <= beforeSetup+time.Duration(float64(beforeSetup)*0.5*(upGain-1))
		// Paid: the rate rose by at least a fifth of the raise, short of
		// served (by less, or with the set-up time rising more), and the
		// probe's set-up time stays within the budget (Target above the
		// baseline last measured, on top of Target: twice Target of
		// queueing at most). A path that does more per second with more
		// calls in set-up (a loop, a transport and host connections whose
		// turns and writes carry more messages each) trades set-up time
		// for goodput all the way up, with no knee the gradient could find
		// (results/notes.md: at 5x, goodput fell from 31180 to 22231
		// calls/s under cuts that left the p99 at 110 ms). Up to the
		// budget such raises are worth their set-up time.
		budget := l.base.measured + 2*cfg.Target
		paid := !faster && rose >= 1+0.2*(upGain-1) && duringSetup <= budget
		switch {
		case faster && rateFollowed:
			u.reset() // the raise stays, the baseline too
			return
		case served:
			// The set-up time before the raise becomes what the target
			// allows, not the probe's own, which holds the raise's
			// waiting: taken in, it would let each probe ratchet the
			// allowed set-up up by its own queueing. Nor may it rise past
			// Target above the baseline last measured without queueing
			// (the baseline probe's, or a calm window's): what probes
			// for room take in stays bounded until the next baseline
			// probe measures the path again.
			l.base.raise(min(beforeSetup-cfg.Target, l.base.measured+cfg.Target), now)
			u.reset()
			return
		case paid:
			// The probe's own set-up time becomes what the target allows,
			// so that the gradient keeps the raise: the budget bounds it.
			l.base.raise(duringSetup-cfg.Target, now)
			u.reset()
			return
		}
	}
	u.backOff()
	l.limit = u.from
	l.gate.limit.Store(int64(l.limit))
}

// futile reports cuts that did not shorten the set-up time, and the limit
// they began from. A queue that works at its capacity goes on completing at
// that rate while the limit is cut, and its set-up time falls with the
// calls in set-up (Little's law: set-up = calls in set-up / rate). Over a
// run of windows with set-up above baseline + Target, once the limit stands
// futileCut below its highest in the run, the rate (over the last three
// windows) and the smoothed set-up time are taken; when the limit has
// fallen a further futileFurther, at least futileAfter later, and the rate
// fell by at least half that further cut while the set-up time fell by
// less than half of it, the rate follows the limit: the calls were not
// queued, the delay is one no limit can shed (a slower path, the machine's
// CPUs taken by other work, a gateway that does more per CPU second with
// more calls in set-up), and the cuts only cut goodput. The rate is taken
// after the first cuts, not at the run's highest, because a server whose
// capacity fell brings the rate down before the cuts come, and then keeps
// it there while they drain its queue: compared with the rate before, its
// cuts would look futile (TestAdmissionCapacityDropIsNotAFutileCut).
//
// The baseline is then measured again at once (a baseline probe, after
// which the limit goes back to its highest in the run): the probe's set-up
// time, with a quarter of the calls in set-up and the queue drained, is the
// path's as it now is. Measured, not guessed from the slow windows (their
// set-up time less half the target, as this rule did up to 602cdd2): a
// guess takes in whatever queueing those windows held, and judged early
// with that guess the limit grew from 1000 to 6700 in a 3x overload on the
// benchmark, past its 4000 circuits (results/notes.md). It is judged early
// (the old rule waited for the limit to halve): every cut costs goodput in
// proportion for as long as it stands (results/notes.md: a limit cut from
// 1570 to 920 took the rate from 35500 to 22500 calls/s, the set-up time
// from 30 to 28 ms). A run whose cuts worked is judged again from where
// they brought it.
func (l *limiter) futile(cfg *AdmissionConfig, now time.Time, setup, base time.Duration) (from float64, ok bool) {
	// A window's set-up time is noisy (a window holds few set-ups when
	// they are long): the run follows a smoothed one, and the rate over
	// the last three windows (those the probe for room keeps).
	if l.setupAvg == 0 {
		l.setupAvg = setup
	}
	l.setupAvg += (setup - l.setupAvg) / 4
	rate := l.up.last(3).rate()
	if l.setupAvg <= base+cfg.Target {
		l.slow = slowRun{}
		return 0, false
	}
	r := &l.slow
	if l.limit >= r.limit { // a new run (limit zero: none yet), or the limit back up
		*r = slowRun{limit: l.limit}
		return 0, false
	}
	if 1-l.limit/r.limit < futileCut {
		r.cutAt = time.Time{}
		return 0, false
	}
	if r.cutAt.IsZero() {
		// The cuts took futileCut: from here on, does the rate follow
		// the limit down? A capacity that fell brought the rate down
		// before the cuts, and it stays there while they go on.
		r.cutAt, r.cutLimit, r.cutRate, r.cutSetup = now, l.limit, rate, l.setupAvg
		return 0, false
	}
	further := 1 - l.limit/r.cutLimit
	if further < futileFurther || now.Sub(r.cutAt) < futileAfter {
		return 0, false
	}
	rateFell := 1 - rate/r.cutRate
	setupFell := 1 - float64(l.setupAvg)/float64(r.cutSetup)
	if rateFell < further/2 || setupFell >= further/2 {
		// The cuts work: a queue. Later cuts are judged from here.
		*r = slowRun{limit: l.limit}
		return 0, false
	}
	l.atMinSince = time.Time{}
	return r.limit, true
}

// slowRun is a run of windows with set-up above the target (futile): the
// highest limit since it began or was last judged (zero: no run); from
// cutAt on (zero: not yet) the limit stands futileCut below that, and
// cutLimit, cutRate and cutSetup are the limit, rate and smoothed set-up
// time then.
type slowRun struct {
	cutAt                    time.Time
	limit, cutLimit, cutRate float64
	cutSetup                 time.Duration
}

// futileCut is the share of the limit a run of cuts must have taken before
// the rate is taken (a variable for the tests of the other rules);
// futileFurther the further share over which the rate is watched, and
// futileAfter the least time that takes (a few set-up times, for the calls
// admitted before the cuts to be answered).
var futileCut = 0.15

const (
	futileFurther = 0.15
	futileAfter   = 300 * time.Millisecond
)

// apply moves the limit by a gradient; own says a standing queue in the
// gateway's own queue is the slow part; r is the room the last window
// measured.
func (l *limiter) apply(cfg *AdmissionConfig, g float64, peak int64, own bool, r room) {
	if own && g <= 0.5 && r.target < l.limit {
		// Set-up takes twice what is allowed or more, in the gateway's own
		// queue, and no call of the window was quick (a standing queue): a
		// load rose past its capacity at once. The headroom protects
		// nothing and would take a second of smoothed steps to shed while
		// the queue grows: the limit is cut at once to what keeps set-up at
		// the target at the rate the window completed, and moves on from
		// there. A path slow for a moment (a stall, an MTP changeover
		// buffering, Q.704 5) lets quick calls through and is not cut.
		l.limit = max(r.target, float64(cfg.MinLimit))
	}
	next := l.limit*g + math.Sqrt(l.limit)
	if g > 1 && float64(peak) < l.limit/4 {
		// The limit is not used: it follows the room a stall at this load
		// needs (burst), four times what is used, and at least the
		// initial limit, both ways: a later overload does not find a limit
		// grown in a busy hour long gone, and a stall at a load the gateway
		// carries refuses nothing.
		next = max(4*float64(peak), r.burst, float64(cfg.InitialLimit))
	}
	l.limit += cfg.Smoothing * (next - l.limit)
	l.limit = min(max(l.limit, float64(cfg.MinLimit)), float64(cfg.MaxLimit))
	l.gate.limit.Store(int64(l.limit))
}

// baseline is the lowest window mean of set-up time over the last period (two
// half-period buckets), from windows in which nothing was refused; when there
// were none, the last one known.
type baseline struct {
	cur, prev time.Duration // 0: nothing in the bucket
	since     time.Time
	held      time.Duration
	// measured is the baseline as measured, without what probes for room
	// raised it by: the bound on those raises.
	measured time.Duration
}

func (b *baseline) observe(setup time.Duration, now time.Time, candidate bool, period time.Duration) time.Duration {
	if b.since.IsZero() {
		b.since = now
	}
	if now.Sub(b.since) >= period/2 {
		b.prev, b.cur, b.since = b.cur, 0, now
	}
	if candidate && (b.cur == 0 || setup < b.cur) {
		b.cur = setup
	}
	switch {
	case b.cur > 0 && (b.prev == 0 || b.cur < b.prev):
		b.held = b.cur
	case b.prev > 0:
		b.held = b.prev
	case b.held == 0:
		b.held = setup // the first window was already refusing: its mean is all we know
	}
	if b.measured == 0 || (candidate && setup < b.measured) {
		b.measured = min(b.held, setup)
	}
	return b.held
}

// relearn takes a measured set-up time as the baseline.
func (b *baseline) relearn(setup time.Duration, now time.Time) {
	b.cur, b.prev, b.since, b.held, b.measured = setup, 0, now, setup, setup
}

// raise lifts the baseline to what a probe for room found (never lowers
// it); measured stays.
func (b *baseline) raise(setup time.Duration, now time.Time) {
	if setup > b.held {
		b.cur, b.prev, b.since, b.held = setup, 0, now, setup
	}
}

// admission is the controller's adaptive admission state.
type admission struct {
	on    atomic.Bool
	all   atomic.Pointer[limiter]                    // replaced when switched on or off, read by the edge
	gates atomic.Pointer[map[mtp.PointCode]*limiter] // copy on write, for the edge
	edge  atomic.Uint64                              // refusals at the edge
	// level is the admission's own level (0 or 1), held at least Hold.
	level       Level
	since       time.Time
	lastRefusal time.Time
	lastOwn     time.Time // the last window with a refusal for the gateway's own congestion
	window      time.Time
	changes     uint64
	refusing    int // windows in a row with a refusal
	// waitSum and waitN are the own outbound queue waits of the calls whose
	// set-up was measured in this window; farEnd is whether the last window
	// with measurements found the own queue quick (before any: not known,
	// and a refusal counts as the gateway's own congestion).
	waitSum time.Duration
	waitN   int
	farEnd  bool
}

func (a *admission) init(cfg *AdmissionConfig) {
	a.all.Store(newLimiter(cfg, nil))
	m := map[mtp.PointCode]*limiter{}
	a.gates.Store(&m)
	a.on.Store(cfg.Enabled)
}

// limiterFor returns a destination's limiter, creating it (called with the
// controller's lock held).
func (a *admission) limiterFor(pc mtp.PointCode, cfg *AdmissionConfig) *limiter {
	m := *a.gates.Load()
	if l, ok := m[pc]; ok {
		return l
	}
	n := make(map[mtp.PointCode]*limiter, len(m)+1)
	for k, v := range m {
		n[k] = v
	}
	l := newLimiter(cfg, a.all.Load())
	n[pc] = l
	a.gates.Store(&n)
	return l
}

// Queued is told when an outseize counted at the edge leaves the stack's
// outbound queue (the stack's Queued, which sprc does not import).
type Queued interface{ Dequeued() }

// AdmitEdge is the lock-free part of the adaptive admission, for the edge
// of the stack: it refuses (RefuseAdmission, counted) a new outgoing call to
// dpc when the calls in set-up to it, or overall, plus the outseizes to it
// (or overall) the edge let through that are still queued already reach the
// limit. Admit means "not refused here": the stack's loop then decides with
// every check, and q must be told when the request leaves the queue. Only
// this destination's queued requests count, not the whole shared queue: one
// host flooding a slow destination must not get calls to others refused. A
// destination not yet seen is left to the loop (q nil).
func (c *Controller) AdmitEdge(dpc mtp.PointCode) (r Refusal, q Queued) {
	a := &c.adm
	if !a.on.Load() {
		return Admit, nil
	}
	l, ok := (*a.gates.Load())[dpc]
	if !ok {
		return Admit, nil
	}
	switch {
	case l.fullBehindQueued():
		l.refused.Add(1)
	case l.all.fullBehindQueued():
		l.all.refused.Add(1)
	default:
		// Checked, then counted: concurrent submitters may pass a few over
		// the limit, which the loop's exact check then refuses.
		l.queued.Add(1)
		l.all.queued.Add(1)
		return Admit, l
	}
	a.edge.Add(1)
	return RefuseAdmission, nil
}

// admitAdaptive is the loop's check, with the lock held: exact, since the
// calls it admitted are counted in set-up before it is asked again.
func (c *Controller) admitAdaptive(dpc mtp.PointCode) Refusal {
	a := &c.adm
	if !a.on.Load() {
		return Admit
	}
	l, all := a.limiterFor(dpc, &c.cfg.Admission), a.all.Load()
	switch {
	case l.full():
		l.refused.Add(1)
	case all.full():
		all.refused.Add(1)
	default:
		return Admit
	}
	return RefuseAdmission
}

// OutgoingCallStarted is CallStarted for an outgoing call whose IAM was just
// sent: it is in set-up until BackwardFor or CallEndedFor. The calls in
// set-up are counted whether the admission is on or not, so that switched
// on it starts from the calls really in set-up, and every call is counted
// out by the limiters that counted it in (reset carries the counts over).
func (c *Controller) OutgoingCallStarted(pc mtp.PointCode, call uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callStarted(pc, true)
	c.destination(pc).attempts.start(call)
	a := &c.adm
	a.limiterFor(pc, &c.cfg.Admission).started()
	a.all.Load().started()
}

// BackwardFor is Backward for a known call: its set-up time (from its
// outseize queued to this first backward message) is measured; waited is
// the part of it in the gateway's own outbound queue. The stack keeps both
// in its call record, so no table keyed by call is kept here. Called once
// per call, after OutgoingCallStarted, which also counts the attempt for
// availability, in order.
func (c *Controller) BackwardFor(pc mtp.PointCode, call uint64, setup, waited time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.destination(pc).attempts.answer(call)
	a := &c.adm
	on := a.on.Load() // measured only while on: nothing else empties the sums
	a.limiterFor(pc, &c.cfg.Admission).finished(setup, on)
	a.all.Load().finished(setup, false) // the overall limit moves with the destinations' gradients
	if on {
		a.waitSum += max(waited, 0)
		a.waitN++
	}
}

// CallEndedFor is CallEnded for a known call; an outgoing call that ends in
// set-up (no backward message) leaves it unmeasured.
func (c *Controller) CallEndedFor(pc mtp.PointCode, outgoing, inSetup bool, call uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callEnded(pc, outgoing)
	if outgoing && inSetup {
		a := &c.adm
		a.limiterFor(pc, &c.cfg.Admission).finished(0, false)
		a.all.Load().finished(0, false)
	}
}

// admissionTick adjusts the limits once a window and moves the admission's
// level: raised by the second window in a row with a refusal, cleared once
// nothing was refused for ClearAfter and the level was held for Hold.
func (c *Controller) admissionTick(now time.Time) {
	a, cfg := &c.adm, &c.cfg.Admission
	if !a.on.Load() {
		return
	}
	if a.window.IsZero() {
		a.window = now
	}
	if now.Sub(a.window) < cfg.Window {
		return
	}
	a.window = now
	// The level (alarm 0x16, ACL in every REL) says the gateway itself is
	// congested (Q.764 2.11: the ACL is the congestion of the exchange that
	// sends the REL). Refusals because a far end answers slowly, with the own
	// queue quick, protect that far end but are not the gateway's congestion:
	// they raise no level. Own: the window's calls waited at least half the
	// target in the gateway's own outbound queue.
	if a.waitN > 0 {
		a.farEnd = 2*(a.waitSum/time.Duration(a.waitN)) < cfg.Target
		a.waitSum, a.waitN = 0, 0
	}
	// The overall limit follows the least congested destination: when the
	// gateway itself is the bottleneck every destination's set-up slows
	// down, while one slow far end must not starve the others.
	all := a.all.Load()
	refused, peak := all.closeWindow()
	best, measured, standing, rm, starting, completed := 0.0, false, false, room{}, false, 0
	for pc, l := range *a.gates.Load() {
		r, g, ok := l.adjust(cfg, now, !a.farEnd)
		if l.starting {
			r, starting = false, true // a limit that lags a load without a queue: no alarm
		}
		c.slowAlarm(pc, l, r, now)
		refused = refused || r
		if ok && (!measured || g > best) {
			best, measured, standing = g, true, l.standing
		}
		rm = rm.plus(l.room)
		completed += l.completed
	}
	if measured {
		if (refused || starting) && best >= 2 && all.limit < rm.burst {
			// The overall limit lags as the destinations' do (slowStart).
			all.slowStart(cfg, completed, rm.burst)
			refused, starting = false, true
		} else {
			all.apply(cfg, best, peak, !a.farEnd && standing, rm)
		}
	}
	for _, l := range *a.gates.Load() {
		// The overall limit must not hide the room a destination probes,
		// nor the limit a baseline probe gives back to it: it has room for
		// that destination's limit beside the calls the others have in
		// set-up. The overall limit moves with the destinations'
		// gradients, so it took the same cuts; when the futile-cut rule
		// undoes a destination's, the overall limit, left where they
		// brought it, would go on refusing what the destination admits
		// (results/notes.md: with one destination, 14-22k calls/s against
		// 27-33k before, for the last 19 s of a 5x overload, every call
		// refused 0x0C by the overall limit).
		if need := float64(all.inSetup.Load()-l.inSetup.Load()) + l.limit; (l.up.left > 0 || l.restored) && all.limit < need {
			all.limit = min(need, float64(cfg.MaxLimit))
			all.gate.limit.Store(int64(all.limit))
		}
		l.restored = false
	}
	// A slow start's refusals are not the gateway's congestion: set-up
	// takes at most half of what the target allows. They raise no level,
	// alarm or ACL, which would tell neighbours to back off from a gateway
	// that only just started.
	own := refused && !a.farEnd && !starting
	before := c.outboundLevel()
	if own {
		a.refusing++
	} else {
		a.refusing = 0
	}
	switch {
	case own:
		a.lastRefusal, a.lastOwn = now, now
		if a.level == 0 && a.refusing >= 2 { // two windows in a row: not a stray burst
			a.level, a.since = 1, now
			a.changes++
		}
	case refused && a.level > 0 && now.Sub(a.lastOwn) < cfg.Hold:
		// Raised for the gateway's own congestion, the level holds while
		// the admission goes on refusing in windows whose own queue was
		// quick for less than Hold (a baseline probe draining it, the
		// limit cut below the load for a moment): the overload is not
		// over, and a level cleared and raised again within it is the
		// flapping operators and neighbours must not see. Refusals for a
		// slow far end alone, for longer, are not the gateway's
		// congestion (Q.764 2.11) and let it clear.
		a.lastRefusal = now
	case a.level > 0 && now.Sub(a.lastRefusal) >= cfg.ClearAfter && now.Sub(a.since) >= cfg.Hold:
		a.level = 0
		a.changes++
	}
	c.outboundChanged(before, "admission")
}

// slowAlarm raises alarm 0x1C for a destination whose new calls the
// admission refuses while the gateway's own outbound queue is quick: the
// set-up time is the far end's or its path's. That is not the gateway's
// congestion, so it raises no level and no ACL (Q.764 2.11: the ACL is the
// congestion of the exchange that sends the REL), but the operator and the
// hosts are told which destination's calls are refused and why, as they
// are for a destination's ACL (0x1A). It is raised once such refusals went
// on in every window for ClearAfter (not a burst, nor a fresh gateway's
// initial limit meeting a load at once), held at least Hold and cleared
// once the destination refused nothing for ClearAfter: it rises once and
// holds through an overload, as the level does.
func (c *Controller) slowAlarm(pc mtp.PointCode, l *limiter, refused bool, now time.Time) {
	cfg := &c.cfg.Admission
	if d := c.dests[pc]; d != nil && d.acl > 0 {
		// The far end tells its congestion itself (ACL, alarm 0x1A): its
		// calls are limited for that, and one alarm says so.
		refused = false
	}
	switch {
	case refused && c.adm.farEnd && c.adm.level == 0:
		if l.farSince.IsZero() {
			l.farSince = now
		}
		l.lastRefusal = now
	case refused:
		// The gateway's own congestion, which its level tells (a window
		// whose own queue a baseline probe drained is still part of it).
		l.farSince = time.Time{}
		l.lastRefusal = now
	default:
		l.farSince = time.Time{}
	}
	switch {
	case !l.alarmed && !l.farSince.IsZero() && now.Sub(l.farSince) >= cfg.ClearAfter:
		l.alarmed, l.alarmSince = true, now
		c.alarm(Alarm{Number: AlarmDestinationSlow, Severity: SeverityMinor,
			Text: fmt.Sprintf("destination %s answers slowly: new calls to it limited to %d in set-up", c.cfg.PointCodes.Format(pc), int(l.limit)),
			Data: map[string]any{"dpc": uint32(pc), "limit": int(l.limit)}})
	case l.alarmed && now.Sub(l.lastRefusal) >= cfg.ClearAfter && now.Sub(l.alarmSince) >= cfg.Hold:
		c.clearSlowAlarm(pc, l, "no call refused for "+cfg.ClearAfter.String())
	}
}

func (c *Controller) clearSlowAlarm(pc mtp.PointCode, l *limiter, why string) {
	l.alarmed = false
	c.alarm(Alarm{Number: AlarmDestinationSlow, Severity: SeverityMinor, Cleared: true,
		Text: fmt.Sprintf("destination %s: calls no longer limited (%s)", c.cfg.PointCodes.Format(pc), why),
		Data: map[string]any{"dpc": uint32(pc)}})
}

// clearSlowAlarms clears every destination's alarm 0x1C (the admission is
// switched off or restarted: its limiters are forgotten).
func (c *Controller) clearSlowAlarms(why string) {
	for pc, l := range *c.adm.gates.Load() {
		if l.alarmed {
			c.clearSlowAlarm(pc, l, why)
		}
	}
}

// reset starts the limits afresh (admission switched off or on); the calls
// in set-up stay counted, in the new limiters, so that each is counted out
// where it was counted in.
func (a *admission) reset(cfg *AdmissionConfig) {
	all, gates := a.all.Load(), *a.gates.Load()
	a.init(cfg)
	a.all.Load().inSetup.Store(all.inSetup.Load())
	for pc, l := range gates {
		a.limiterFor(pc, cfg).inSetup.Store(l.inSetup.Load())
	}
	a.level = 0
	a.waitSum, a.waitN, a.farEnd = 0, 0, false
}

// AdmissionStatus is the adaptive admission's state.
type AdmissionStatus struct {
	Enabled      bool
	Level        Level
	Limit        int // overall
	InSetup      int // overall
	LevelChanges uint64
	Destinations map[mtp.PointCode]AdmissionGate
}

// AdmissionGate is one destination's limit; Slow: its alarm 0x1C is raised.
type AdmissionGate struct {
	Limit, InSetup int
	Slow           bool
}

func (a *admission) status() AdmissionStatus {
	s := AdmissionStatus{Enabled: a.on.Load(), Level: a.level, LevelChanges: a.changes}
	all := a.all.Load()
	s.Limit, s.InSetup = int(all.gate.limit.Load()), int(all.inSetup.Load())
	s.Destinations = map[mtp.PointCode]AdmissionGate{}
	for pc, l := range *a.gates.Load() {
		s.Destinations[pc] = AdmissionGate{Limit: int(l.gate.limit.Load()), InSetup: int(l.inSetup.Load()), Slow: l.alarmed}
	}
	return s
}
