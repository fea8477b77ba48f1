package loadgen

import (
	"math"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

func TestScheduleConstant(t *testing.T) {
	s := Constant(100, 10*time.Second)
	if s.Total() != 1000 || s.Duration() != 10*time.Second {
		t.Fatalf("total %d duration %v", s.Total(), s.Duration())
	}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 0}, {10 * time.Millisecond, 1}, {time.Second, 100}, {10 * time.Second, 1000}, {20 * time.Second, 1000}} {
		if got := s.Due(c.at); !near(got, c.want) {
			t.Errorf("Due(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	if at, ok := s.TimeOf(250); !ok || at != 2500*time.Millisecond {
		t.Errorf("TimeOf(250) = %v %v", at, ok)
	}
	if _, ok := s.TimeOf(1001); ok {
		t.Error("TimeOf past the end is ok")
	}
	if s.RateAt(5*time.Second) != 100 || s.RateAt(10*time.Second) != 0 {
		t.Errorf("RateAt %v %v", s.RateAt(5*time.Second), s.RateAt(10*time.Second))
	}
}

func TestScheduleRampAndSteps(t *testing.T) {
	r, err := ParseRamp("100:5000:60s")
	if err != nil {
		t.Fatal(err)
	}
	// The integral of a linear ramp: (100 + 5000) / 2 * 60.
	if got := r.Due(time.Minute); !near(got, 153000) {
		t.Fatalf("ramp total %v", got)
	}
	if got := r.RateAt(30 * time.Second); !near(got, 2550) {
		t.Fatalf("ramp rate at half way %v", got)
	}
	// TimeOf inverts Due, on a ramp up and a ramp down.
	down, _ := ParseSteps("5000-100:60s")
	for _, s := range []Schedule{r, down} {
		for _, n := range []float64{1, 10, 1000, 76500, 152999} {
			at, ok := s.TimeOf(n)
			if !ok || !near(s.Due(at), n) {
				t.Errorf("%v: TimeOf(%v) = %v, Due there %v", s, n, at, s.Due(at))
			}
		}
	}
	st, err := ParseSteps("2000:5s, 6000:10s,600:10s")
	if err != nil {
		t.Fatal(err)
	}
	if st.Total() != 2000*5+6000*10+600*10 || st.Phase(4*time.Second) != 0 || st.Phase(5*time.Second) != 1 || st.Phase(24*time.Second) != 2 || st.Phase(time.Hour) != 2 {
		t.Fatalf("steps: total %d phases %d %d %d", st.Total(), st.Phase(4*time.Second), st.Phase(5*time.Second), st.Phase(24*time.Second))
	}
	if at, _ := st.TimeOf(10001); at != 5*time.Second+time.Second/6000+1 {
		t.Fatalf("first call of step 2 at %v", at)
	}
	for _, bad := range []string{"", "100", "100:5000", "a:5000:60s", "100:5000:-1s", "100:5000:0s"} {
		if _, err := ParseRamp(bad); err == nil {
			t.Errorf("ramp %q accepted", bad)
		}
	}
	for _, bad := range []string{"", "100", "x:1s", "100:1", "-5:1s", "1-x:1s"} {
		if _, err := ParseSteps(bad); err == nil {
			t.Errorf("steps %q accepted", bad)
		}
	}
}

// The pacer, driven by a fake clock, hands out each call once, when it is
// due, however irregular the ticks.
func TestPacerFakeClock(t *testing.T) {
	p := newPacer(Schedule{{1000, 1000, time.Second}, {0, 0, time.Second}, {10, 10, time.Second}})
	var got []uint64
	var lastAt time.Duration
	for _, at := range []time.Duration{0, time.Millisecond, 1500 * time.Microsecond, 10 * time.Millisecond, 10 * time.Millisecond,
		500 * time.Millisecond, 2 * time.Second, 2050 * time.Millisecond, 5 * time.Second} {
		first, last := p.next(at)
		for k := first; k <= last; k++ {
			due, _ := p.sched.TimeOf(float64(k))
			if due > at || (len(got) > 0 && k != got[len(got)-1]+1) {
				t.Fatalf("call %d handed out at %v, due %v (previous %v)", k, at, due, got)
			}
			got = append(got, k)
		}
		switch at {
		case 10 * time.Millisecond:
			if len(got) != 10 {
				t.Fatalf("at 10 ms: %d calls", len(got))
			}
		case 2050 * time.Millisecond:
			if len(got) != 1000 {
				t.Fatalf("at 2.05 s (a silent second, then 10/s): %d calls", len(got))
			}
		}
		lastAt = at
	}
	if !p.done() || len(got) != 1010 {
		t.Fatalf("after %v: %d calls, done %v", lastAt, len(got), p.done())
	}
}

func TestPattern(t *testing.T) {
	p, err := ParsePattern("4930xxx*#")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Make(7); got != "4930007*#" {
		t.Fatalf("Make(7) = %q", got)
	}
	if got := p.Make(12345); got != "4930345*#" {
		t.Fatalf("Make(12345) = %q (the X run wraps)", got)
	}
	r, _ := ParsePattern("49??")
	if got := r.Make(1); len(got) != 4 || got[:2] != "49" || got[2] < '0' || got[3] > '9' {
		t.Fatalf("random %q", got)
	}
	if _, err := ParsePattern("49-30"); err == nil {
		t.Fatal("a dash accepted")
	}
}
