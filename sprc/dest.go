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
	t7Fails   int
	resumeAt  time.Time
	nextPing  time.Time
}
