package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/wire"
)

func TestPercentileNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	l := Summarise(d)
	if l.N != 100 || l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 {
		t.Fatalf("%+v", l)
	}
	if Percentile(nil, 99) != 0 || Percentile([]time.Duration{7}, 1) != 7 || Percentile([]time.Duration{1, 2, 3}, 50) != 2 || Percentile([]time.Duration{1, 2, 3}, 100) != 3 {
		t.Fatal("small samples")
	}
}

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time      { return f.t }
func (f *fakeClock) add(d time.Duration) { f.t = f.t.Add(d) }

// The call accounting, driven as the connection's reader would drive it, on
// a fake clock: answers before acks, refusals, releases by the far end.
func TestStatsFakeClock(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	st := newStats(clk.now, 2, 16, []string{"gw"})
	st.start = clk.now()
	c := &hconn{}
	sent := clk.now()
	// Call 1: acked, answered 20 ms after sending, released by us: completed.
	st.active.Add(1)
	st.offered(0, 2*time.Millisecond)
	st.acked(callKey{0, 1}, 0, sent, c)
	clk.add(20 * time.Millisecond)
	if cl := st.answered(callKey{0, 1}, clk.now()); cl == nil {
		t.Fatal("answered call not handed back for its hold")
	}
	st.released(callKey{0, 1}, event{typ: "released", call: 1, cause: 16})
	// Call 2: the answer is seen before the ack (another goroutine).
	st.active.Add(1)
	st.offered(0, 0)
	clk.add(10 * time.Millisecond)
	if cl := st.answered(callKey{0, 2}, clk.now()); cl != nil {
		t.Fatal("answer before the ack handed back")
	}
	if ans, rel := st.acked(callKey{0, 2}, 0, sent, c); ans == nil || rel != nil {
		t.Fatal("ack after the answer does not hand the call back")
	}
	st.released(callKey{0, 2}, event{typ: "released", call: 2, cause: 16})
	// Call 3: refused at 100 ms; call 4 (phase 1) released by the far end with ACL.
	clk.add(70 * time.Millisecond)
	st.active.Add(2)
	st.offered(0, 0)
	st.refused(0, wire.StatusOutboundCongestion.Name(), clk.now())
	st.offered(1, 150*time.Millisecond)
	st.acked(callKey{0, 4}, 1, clk.now(), c)
	st.released(callKey{0, 4}, event{typ: "released", call: 4, cause: 42, acl: 1, remote: true})
	st.skipped(1)

	clk.add(900 * time.Millisecond)
	s := st.second(clk.now(), 1000)
	if s.Offered != 4 || s.Admitted != 3 || s.Answered != 2 || s.Completed != 2 || s.Failed != 1 || s.Skipped != 1 ||
		s.Refused["outbound_congestion"] != 1 || s.Causes["16"] != 2 || s.Causes["42"] != 1 || s.ACL != 1 || s.MaxACL != 1 {
		t.Fatalf("second %+v", s)
	}
	if s.Setup.N != 2 || s.Setup.P50 != 20 || s.Setup.Max != 30 || s.LagMS != 150 || s.Active != 0 {
		t.Fatalf("second latencies %+v lag %v active %d", s.Setup, s.LagMS, s.Active)
	}
	if s.FirstRefusal == nil || *s.FirstRefusal != 0.1 || s.T != 1 {
		t.Fatalf("first refusal %v at %v", s.FirstRefusal, s.T)
	}
	if next := st.second(clk.now(), 0); next.Offered != 0 || next.FirstRefusal != nil {
		t.Fatalf("the next second starts empty: %+v", next)
	}
	if p := st.phases[1].counts(); p.Offered != 1 || p.Failed != 1 || p.Skipped != 1 || p.Completed != 0 {
		t.Fatalf("phase 1 %+v", p)
	}
	if tot := st.total.counts(); tot.Offered != 4 || tot.Completed != 2 {
		t.Fatalf("total %+v", tot)
	}
}

// What the generator writes with --json, the bench reads back.
func TestParseReport(t *testing.T) {
	fr := 3.25
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	sec := Second{Type: "second", T: 1, Asked: 500, Counts: Counts{Offered: 500, Admitted: 490, Completed: 480, Refused: map[string]uint64{"outbound_congestion": 10},
		Setup: Latency{N: 480, P50: 1, P90: 2, P99: 3, Max: 4}}, Active: 12, LagMS: 0.5, FirstRefusal: &fr}
	fin := Final{Type: "final", StartUnixNano: 42, DurationS: 2, Asked: 1000, Counts: Counts{Offered: 1000, Completed: 960}, KeptUp: true,
		Phases: []Phase{{Index: 0, From: 500, To: 500, Duration: 2, CompletedRate: 480, FirstRefusal: &fr}}}
	enc.Encode(sec)
	buf.WriteString("not json\n")
	enc.Encode(AnswerSecond{Type: "answer", T: 1, Incoming: 490})
	enc.Encode(fin)
	secs, got, err := ParseReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 1 || secs[0].Refused["outbound_congestion"] != 10 || secs[0].Setup.P99 != 3 || *secs[0].FirstRefusal != 3.25 {
		t.Fatalf("seconds %+v", secs)
	}
	if got.StartUnixNano != 42 || got.Completed != 960 || !got.KeptUp || len(got.Phases) != 1 || *got.Phases[0].FirstRefusal != 3.25 {
		t.Fatalf("final %+v", got)
	}
	if _, _, err := ParseReport(strings.NewReader(`{"type":"second","t":1}` + "\n")); err == nil {
		t.Fatal("a report without its final line parsed")
	}
	if l, err := ParseLine([]byte(`{"type":"answer","t":2,"incoming":5}`)); err != nil || l.Answer == nil || l.Answer.Incoming != 5 {
		t.Fatalf("answer line %+v %v", l, err)
	}
}

func TestFinalText(t *testing.T) {
	f := Final{Asked: 10, Counts: Counts{Offered: 10, Refused: map[string]uint64{"high_traffic": 2}}, MaxLagMS: 250}
	if txt := f.Text(); !strings.Contains(txt, "COULD NOT KEEP UP") || !strings.Contains(txt, "high_traffic:2") {
		t.Fatal(txt)
	}
	f.KeptUp = true
	if txt := f.Text(); !strings.Contains(txt, "kept up") {
		t.Fatal(txt)
	}
}
