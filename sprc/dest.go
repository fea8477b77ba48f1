package sprc

import (
	"math"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// fraction admits a share p of the offered attempts, deterministically: after n
// attempts exactly floor(n*p) were admitted.
type fraction struct{ n uint64 }

func (f *fraction) admit(p float64) bool {
	if p >= 1 {
		return true
	}
	f.n++
	if p <= 0 {
		return false
	}
	return math.Floor(float64(f.n)*p) > math.Floor(float64(f.n-1)*p)
}

// window counts attempts in fixed windows.
type window struct {
	start time.Time
	count int
}

// roll starts a new window when the current one is over and reports the count
// of the window that ended (-1 if none ended).
func (w *window) roll(now time.Time, length time.Duration) int {
	if w.start.IsZero() {
		w.start = now
		return -1
	}
	if now.Sub(w.start) < length {
		return -1
	}
	ended := w.count
	// Windows are aligned to the first one, so an idle gap skips whole windows.
	w.start = w.start.Add(now.Sub(w.start) / length * length)
	w.count = 0
	return ended
}

// dest is everything congestion control knows about one destination.
type dest struct {
	pc mtp.PointCode

	// Automatic congestion control from received ACL.
	acl      isup.AutomaticCongestionLevel
	aclUntil time.Time
	accAdmit fraction

	// MTP congestion (Q.764 §2.10): step 0 is full load.
	step     int
	t29Until time.Time
	t30Until time.Time
	mtpLevel uint8 // ANSI congestion level for the priority filter
	mtpAlarm bool
	mtpAdmit fraction

	// Constraints.
	limit     *Constraint
	calls     int // concurrent, both directions
	outbound  int // concurrent outgoing
	burst     window
	sustained window
	violation string // the constraint broken, "" when none

	// Availability.
	oos       bool
	oosReason string
	resumeAt  time.Time
	nextPing  time.Time
	attempts  attemptRun
}

// attemptRun counts outgoing attempts (IAMs) that failed (T7) in a row, in
// the order the attempts were made, not the order their timers expired.
// Attempts are numbered by the caller in the order they start. A failure
// counts only if no later attempt has been answered (then it is not part of
// the latest run), and only if the attempt did not start before an
// association or the destination was lost (its IAM may have died with the
// association: a failure of the path, not of the destination).
type attemptRun struct {
	started  uint64   // the latest attempt started
	answered uint64   // the latest attempt that got a backward message
	barrier  uint64   // attempts up to this were in flight at a loss
	failed   []uint64 // failures after answered and barrier, at most the threshold
}

// start records a new attempt.
func (r *attemptRun) start(a uint64) { r.started = max(r.started, a) }

// answer records a backward message for attempt a: failures of earlier
// attempts no longer end the run.
func (r *attemptRun) answer(a uint64) {
	if a <= r.answered {
		return
	}
	r.answered = a
	r.failed = dropUpTo(r.failed, a)
}

// fail records a T7 expiry for attempt a and returns the failures in the run
// (0 if this one does not count).
func (r *attemptRun) fail(a uint64, threshold int) int {
	if a <= r.answered || a <= r.barrier || threshold <= 0 {
		return 0
	}
	for _, f := range r.failed {
		if f == a {
			return len(r.failed) // reported twice: counted once
		}
	}
	if len(r.failed) >= threshold { // keep the newest: bounded memory
		r.failed = r.failed[1:]
	}
	r.failed = append(r.failed, a)
	return len(r.failed)
}

// lost discounts every attempt in flight now: an association (or the
// destination) was lost under them.
func (r *attemptRun) lost() {
	r.barrier = r.started
	r.failed = dropUpTo(r.failed, r.barrier)
}

func (r *attemptRun) reset() { r.failed = r.failed[:0] }

// dropUpTo removes the attempts up to a (failed is short: the threshold).
func dropUpTo(failed []uint64, a uint64) []uint64 {
	keep := failed[:0]
	for _, f := range failed {
		if f > a {
			keep = append(keep, f)
		}
	}
	return keep
}
