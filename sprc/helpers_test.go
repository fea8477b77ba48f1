package sprc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/mtp"
)

// fake is a controller on a fake clock that records its actions.
type fake struct {
	t      *testing.T
	c      *Controller
	now    time.Time
	alarms []Alarm
	pings  []mtp.PointCode
	red    []string
}

func newFake(t *testing.T, cfg Config) *fake {
	t.Helper()
	f := &fake{t: t, now: time.Unix(1_800_000_000, 0)}
	c, err := New(cfg, func() time.Time { return f.now }, Actions{
		Alarm:   func(a Alarm) { f.alarms = append(f.alarms, a) },
		Ping:    func(pc mtp.PointCode) { f.pings = append(f.pings, pc) },
		CodeRed: func(r string) { f.red = append(f.red, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	return f
}

func (f *fake) advance(d time.Duration) {
	f.now = f.now.Add(d)
	f.c.Tick()
}

// takeAlarms returns the alarms since the last call as "0xNN+" (raised) or
// "0xNN-" (cleared).
func (f *fake) takeAlarms() string {
	var s []string
	for _, a := range f.alarms {
		sign := "+"
		if a.Cleared {
			sign = "-"
		}
		s = append(s, fmt.Sprintf("0x%02X%s", a.Number, sign))
	}
	f.alarms = nil
	return strings.Join(s, " ")
}

func (f *fake) expectAlarms(want string) {
	f.t.Helper()
	if got := f.takeAlarms(); got != want {
		f.t.Fatalf("alarms %q, want %q", got, want)
	}
}

// admitted counts how many of n outgoing attempts to pc are admitted.
func (f *fake) admitted(pc mtp.PointCode, n int) int {
	k := 0
	for i := 0; i < n; i++ {
		if f.c.AdmitOutgoing(pc) == Admit {
			k++
		}
	}
	return k
}
