package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/internal/config"
	"github.com/isupgw/isupgw/loadgen"
	"github.com/isupgw/isupgw/sprc"
)

func TestParseLook(t *testing.T) {
	calm := "# HELP x\nisupgw_sprc_level{direction=\"inbound\"} 0\nisupgw_sprc_level{direction=\"outbound\"} 0\nisupgw_sprc_code_yellow 0\n"
	if l, err := parseLook(strings.NewReader(calm)); err != nil || l.congested || l.limit != -1 || l.inSetup != -1 {
		t.Fatalf("calm: %+v %v", l, err)
	}
	for _, busy := range []string{
		strings.Replace(calm, "\"outbound\"} 0", "\"outbound\"} 1", 1),
		strings.Replace(calm, "yellow 0", "yellow 1", 1),
		calm + "isupgw_sprc_admission_level 1\n",
		calm + "isupgw_sprc_destination_slow{dpc=\"2\"} 1\n",
		"isupgw_sprc_code_yellow 1\n" + calm, // a set one before calm ones
	} {
		if l, err := parseLook(strings.NewReader(busy)); err != nil || !l.congested {
			t.Fatalf("busy: %+v %v\n%s", l, err, busy)
		}
	}
	l, err := parseLook(strings.NewReader(calm + "isupgw_sprc_destination_slow{dpc=\"2\"} 0\n" +
		"isupgw_sprc_destination_admission_limit{dpc=\"2\"} 1234\nisupgw_sprc_destination_in_setup{dpc=\"2\"} 987\n"))
	if err != nil || l.congested || l.limit != 1234 || l.inSetup != 987 {
		t.Fatalf("a destination not slow, limit 1234, 987 in set-up: %+v %v", l, err)
	}
	if _, err := parseLook(strings.NewReader("go_goroutines 7\n")); err == nil {
		t.Fatal("metrics without isupgw_sprc_level accepted")
	}
}

func TestAnalyse(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	fr := 3.15 // 150 ms after the onset at 3 s
	fin := &loadgen.Final{StartUnixNano: start.UnixNano(), KeptUp: true, Counts: loadgen.Counts{Completed: 23100}, Phases: []loadgen.Phase{
		{Index: 0}, {Index: 1, StartS: 3, OfferedRate: 3000, FirstRefusal: &fr,
			Counts: loadgen.Counts{Refused: map[string]uint64{"outbound_congestion": 5}, Setup: loadgen.Latency{P50: 2, P99: 40}}}, {Index: 2}}}
	var secs []loadgen.Second
	for i := 1; i <= 21; i++ {
		secs = append(secs, loadgen.Second{T: float64(i), Counts: loadgen.Counts{Completed: uint64(100 * i)}})
	}
	var samples []sample
	for ms := 0; ms < 21000; ms += 20 {
		at := start.Add(time.Duration(ms) * time.Millisecond)
		samples = append(samples, sample{at: at, congested: ms > 3100 && ms < 13400})
	}
	row := analyse(ModeOn, 3, 1000, 3*time.Second, 10*time.Second, secs, fin, samples)
	// Goodput: the seconds ending at 5 .. 13 (the first of the overload left out).
	// Completed: the whole run's, for the CPU per call.
	if row.Goodput != 900 || row.P99MS != 40 || row.Offered != 3000 || *row.FirstRefusalMS < 149 || *row.FirstRefusalMS > 151 || row.Completed != 23100 {
		t.Fatalf("%+v", row)
	}
	if !row.Congested || row.RecoveryMS == nil || *row.RecoveryMS < 379 || *row.RecoveryMS > 381 {
		t.Fatalf("recovery %v congested %v", row.RecoveryMS, row.Congested)
	}
	if row.Unread != 0 || row.Samples != 899 {
		t.Fatalf("unread %d of %d samples, want 0 of 899 (from 3 s on)", row.Unread, row.Samples)
	}
	// A failed read shows no calm: before the drop it is counted, after it
	// the recovery counts it as possibly congested; the last one unread
	// leaves the recovery unknown.
	samples[100].unread = true // 2 s: before the overload, not counted
	samples[400].unread = true // 8 s, during the overload
	samples[700].unread = true // 14 s, 1 s after the drop
	row = analyse(ModeOn, 3, 1000, 3*time.Second, 10*time.Second, secs, fin, samples)
	if row.Unread != 2 || row.RecoveryMS == nil || *row.RecoveryMS < 999 || *row.RecoveryMS > 1001 {
		t.Fatalf("with failed reads: unread %d, recovery %v (want 2 and 1000 ms)", row.Unread, row.RecoveryMS)
	}
	if got := Table(&Results{Rows: []Row{row}}); !strings.Contains(got, "| 1000 (2 of 899 /metrics reads failed) |") {
		t.Fatalf("table does not show the failed reads:\n%s", got)
	}
	samples[len(samples)-1].unread = true
	if row := analyse(ModeOn, 3, 1000, 3*time.Second, 10*time.Second, secs, fin, samples); row.RecoveryMS != nil {
		t.Fatal("recovery reported with the last read failed")
	}
	samples[len(samples)-1].unread = false
	samples[len(samples)-1].congested = true
	if row := analyse(ModeOn, 3, 1000, 3*time.Second, 10*time.Second, secs, fin, samples); row.RecoveryMS != nil {
		t.Fatal("recovery reported while still congested at the end")
	}
}

// The generated configurations load, and the results folder is written.
func TestConfigsAndWrite(t *testing.T) {
	dir := t.TempDir()
	res := &Results{Capacity: 1000, Settings: map[string]Settings{}, Configs: map[string]string{},
		Options: map[string]string{"hold": "50ms", "conns": "4", "confirm_step": "1m0s", "overload": "1m0s"}, Machine: Describe(),
		Search: []Step{{Rate: 1500, CompletedRate: 1200}, {Rate: 1500, CompletedRate: 1490, Sustained: true, Retry: true},
			{Rate: 1500, CompletedRate: 1300, Confirm: true}, {Rate: 1406.25, CompletedRate: 1400, Sustained: true, Confirm: true}},
		Confirmed: true}
	for _, mode := range Modes {
		s := DefaultSettings(mode)
		a, b := Configs(s, Ports{AUDP: 40001, BUDP: 40002, AHost: 40003, BHost: 40004, AMetric: 40005, BMetr: 40006})
		for name, y := range map[string]string{"a": a, "b": b} {
			p := filepath.Join(dir, string(mode)+name+".yaml")
			os.WriteFile(p, []byte(y), 0o644)
			cfg, err := config.Load(p)
			if err != nil {
				t.Fatalf("control %s, %s: %v\n%s", mode, name, err, y)
			}
			if want := map[Mode]sprc.Level1Policy{ModeThrottle: sprc.Level1Throttle}[mode]; cfg.Congestion.Level1Outseize != want {
				t.Fatalf("control %s, %s: level 1 policy %v, want %v", mode, name, cfg.Congestion.Level1Outseize, want)
			}
		}
		dirName := "control-" + string(mode)
		res.Settings[dirName] = s
		res.Configs[dirName+"/a.yaml"], res.Configs[dirName+"/b.yaml"] = a, b
		for _, m := range []float64{1, 3} {
			rec := 250.0
			res.Rows = append(res.Rows, Row{Mode: mode, Multiplier: m, Asked: m * 1000, Goodput: 1000 / m, P99MS: 10 * m, Congested: mode.Control(), RecoveryMS: &rec,
				Refused: map[string]uint64{"outbound_congestion": 7}})
		}
	}
	out := filepath.Join(dir, "results")
	if err := Write(out, res); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.md", "results.json", "overload.png", "configs/control-on/a.yaml", "configs/control-throttle/a.yaml", "configs/control-off/b.yaml"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "results.md"))
	if !strings.Contains(string(md), "| on | 3x | 3000 |") || !strings.Contains(string(md), "| throttle | 3x | 3000 |") || !strings.Contains(string(md), "outbound_congestion 7") {
		t.Fatalf("%s", md)
	}
	if !strings.Contains(string(md), "| 1500 | first | 1200 |") || !strings.Contains(string(md), "| 1500 | again | 1490 |") {
		t.Fatalf("the search's two tries of a rate are not both listed:\n%s", md)
	}
	if !strings.Contains(string(md), "| 1406 | confirm | 1400 |") || !strings.Contains(string(md), "held for 1m0s, as long as an overload,") || !strings.Contains(string(md), "was confirmed") {
		t.Fatalf("the confirmation is not described and listed:\n%s", md)
	}
}

// TestSearchTriesAFailedRateAgain: a rate that fails once (a slow moment)
// and passes on its second try counts as sustained, so the capacity is
// not set by it; a rate that fails twice bounds the search. Against a
// machine that sustains 10000/s, with the first try of 8000/s failing, the
// search doubles from 1000 to 16000 and bisects to 10000/s.
func TestSearchTriesAFailedRateAgain(t *testing.T) {
	var tries []string
	slowOnce := map[float64]bool{8000: true}
	capacity, err := searchRates(1000, 64000, func(rate float64, retry bool) (bool, error) {
		tries = append(tries, fmt.Sprintf("%.0f%s", rate, map[bool]string{true: "+"}[retry]))
		if slowOnce[rate] && !retry {
			return false, nil
		}
		return rate <= 10000, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if capacity != 10000 {
		t.Errorf("capacity %.0f, want 10000 (tries %v)", capacity, tries)
	}
	want := "1000 2000 4000 8000 8000+ 16000 16000+ 12000 12000+ 10000 11000 11000+ 10500 10500+"
	if got := strings.Join(tries, " "); got != want {
		t.Errorf("tries %s\nwant      %s", got, want)
	}
	if _, err := searchRates(1000, 64000, func(float64, bool) (bool, error) { return false, nil }); err == nil {
		t.Error("a search that sustained nothing gave no error")
	}
}

// TestConfirmLowersUntilSustained: the search's rate is held as long as an
// overload; a machine that sustains 14000/s that long (its best 5 s
// 16000/s) gets 14000 confirmed, after 16000 and 15000 failed. One that
// sustains none of the tries keeps the last tried, 13000, not confirmed.
func TestConfirmLowersUntilSustained(t *testing.T) {
	for _, tc := range []struct {
		sustains, want float64
		confirmed      bool
		tries          string
	}{
		{14000, 14000, true, "16000 15000 14000"},
		{16000, 16000, true, "16000"},
		{9000, 13000, false, "16000 15000 14000 13000"},
	} {
		var tries []string
		rate, ok, err := confirmRates(16000, func(rate float64) (bool, error) {
			tries = append(tries, fmt.Sprintf("%.0f", rate))
			return rate <= tc.sustains, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if rate != tc.want || ok != tc.confirmed || strings.Join(tries, " ") != tc.tries {
			t.Errorf("sustaining %.0f/s: capacity %.0f confirmed %v after %v, want %.0f %v after %s", tc.sustains, rate, ok, tries, tc.want, tc.confirmed, tc.tries)
		}
	}
	if _, _, err := confirmRates(16000, func(float64) (bool, error) { return false, fmt.Errorf("load failed") }); err == nil {
		t.Error("a load that failed gave no error")
	}
}

// TestWriteTrace: each sample becomes a line with its time from the
// generator's start; a limit not read or not exposed (-1) is left out, not
// written as a number.
func TestWriteTrace(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	var b strings.Builder
	writeTrace(&b, start, []sample{
		{at: start.Add(1500 * time.Millisecond), limit: 1200, inSetup: 950, congested: true},
		{at: start.Add(2 * time.Second), limit: -1, inSetup: 40},
		{at: start.Add(3 * time.Second), limit: -1, inSetup: -1, unread: true},
	})
	want := `{"t_s":1.5,"limit":1200,"in_setup":950,"congested":true}
{"t_s":2,"in_setup":40,"congested":false}
{"t_s":3,"congested":false,"unread":true}
`
	if b.String() != want {
		t.Errorf("trace\n%s\nwant\n%s", b.String(), want)
	}
}

func TestMedianRun(t *testing.T) {
	row := median([]Row{{Goodput: 30, P99MS: 3}, {Goodput: 10, P99MS: 1}, {Goodput: 20, P99MS: 2}})
	if row.Goodput != 20 || len(row.Runs) != 3 || row.Runs[0].Goodput != 30 {
		t.Fatalf("%+v", row)
	}
	if one := median([]Row{{Goodput: 5}}); one.Goodput != 5 || one.Runs != nil {
		t.Fatalf("%+v", one)
	}
}

// TestSustainedToleratesStrayRefusals: a step near the admission's limit
// that refused a few calls in a thousand's share still counts as sustained;
// more refusals, a failure or a slow p99 do not.
func TestSustainedToleratesStrayRefusals(t *testing.T) {
	step := func(refused, failed uint64, p99 float64) bool {
		f := &loadgen.Final{CompletedRate: 22000, KeptUp: true}
		f.Offered, f.Failed, f.Setup.P99 = 110000, failed, p99
		f.Refused = map[string]uint64{"outbound_congestion": refused}
		return sustained(22000, f).Sustained
	}
	for _, c := range []struct {
		refused, failed uint64
		p99             float64
		want            bool
	}{
		{0, 0, 50, true},
		{4, 0, 50, true},    // stray refusals of a burst
		{110, 0, 50, true},  // one in a thousand
		{111, 0, 50, false}, // more
		{0, 1, 50, false},
		{0, 0, 101, false},
	} {
		if got := step(c.refused, c.failed, c.p99); got != c.want {
			t.Errorf("refused %d of 110000, failed %d, p99 %.0f ms: sustained %v, want %v", c.refused, c.failed, c.p99, got, c.want)
		}
	}
}

// TestScheduleTakesTurns: at each multiple every mode runs once before any
// runs again, rounds alternate the order, and every (mode, multiple) runs
// the asked number of times.
func TestScheduleTakesTurns(t *testing.T) {
	modes := []Mode{ModeShipped, ModeCooperative, ModeOff}
	got := schedule(modes, []float64{2, 3}, 3)
	if len(got) != 2*3*3 {
		t.Fatalf("%d runs, want 18", len(got))
	}
	count := map[slot]int{}
	firsts := map[Mode]int{}
	for i := 0; i < len(got); i += len(modes) {
		round := got[i : i+len(modes)]
		seen := map[Mode]bool{}
		for _, sl := range round {
			if sl.mult != round[0].mult || sl.run != round[0].run || seen[sl.mode] {
				t.Fatalf("round %d is not one run of each mode at one multiple: %+v", i/len(modes), round)
			}
			seen[sl.mode] = true
			count[slot{mode: sl.mode, mult: sl.mult}]++
		}
		firsts[round[0].mode]++
		if i > 0 && got[i-1].mode != round[0].mode {
			t.Fatalf("round %d does not start with the mode that ended the one before: %+v", i/len(modes), got[i-len(modes):i+len(modes)])
		}
	}
	for _, m := range modes {
		for _, x := range []float64{2, 3} {
			if count[slot{mode: m, mult: x}] != 3 {
				t.Fatalf("%s at %gx ran %d times", m, x, count[slot{mode: m, mult: x}])
			}
		}
	}
	if firsts[ModeShipped] != 3 || firsts[ModeCooperative] != 3 {
		t.Fatalf("first of a round: %v, want shipped and cooperative 3 each", firsts)
	}
	// Shipped and off, which the targets compare, run next to each other
	// in every round.
	for i := 0; i < len(got); i += len(modes) {
		round := got[i : i+len(modes)]
		s := slices.IndexFunc(round, func(sl slot) bool { return sl.mode == ModeShipped })
		o := slices.IndexFunc(round, func(sl slot) bool { return sl.mode == ModeOff })
		if s-o != 1 && o-s != 1 {
			t.Fatalf("round %d: shipped at %d, off at %d: %+v", i/len(modes), s, o, round)
		}
	}
}

// TestRoundOrderWithoutOff: without both modes the order is the given one.
func TestRoundOrderWithoutOff(t *testing.T) {
	for _, modes := range [][]Mode{{ModeCooperative, ModeOn}, {ModeOff, ModeOn}, {ModeShipped}} {
		if got := roundOrder(modes); !slices.Equal(got, modes) {
			t.Fatalf("roundOrder(%v) = %v", modes, got)
		}
	}
	if got := roundOrder([]Mode{ModeOn, ModeOff, ModeShipped, ModeThrottle}); !slices.Equal(got, []Mode{ModeOn, ModeShipped, ModeOff, ModeThrottle}) {
		t.Fatalf("off not right after shipped: %v", got)
	}
}

// TestPaired: each mode's run is compared with off's of the same round,
// not with off's median.
func TestPaired(t *testing.T) {
	runs := func(g ...float64) []RunBrief {
		var out []RunBrief
		for i, x := range g {
			out = append(out, RunBrief{Goodput: x, P99MS: float64(90 + i)})
		}
		return out
	}
	r := &Results{Rows: []Row{
		{Mode: ModeShipped, Multiplier: 2, Runs: runs(30000, 40000, 20000)},
		{Mode: ModeShipped, Multiplier: 3, Runs: runs(1, 2)}, // no off at 3x: left out
		{Mode: ModeOff, Multiplier: 2, Runs: runs(40000, 20000, 20000)},
	}}
	got := Paired(r)
	want := "| shipped | 2x | 75 % (90 against 90), 200 % (91 against 91), 100 % (92 against 92) | 100 % | 2 of 3 |"
	if !strings.Contains(got, want) {
		t.Fatalf("paired table:\n%s\nwant the line\n%s", got, want)
	}
	if strings.Contains(got, "3x") {
		t.Fatalf("3x has no off to compare with:\n%s", got)
	}
	if Paired(&Results{Rows: []Row{{Mode: ModeShipped, Multiplier: 2, Goodput: 1}}}) != "" {
		t.Fatal("a table without repeated runs")
	}
	if m := medianOf([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Fatalf("median of 1..4 = %g", m)
	}
}

// TestChildProcs: each process gets its share of the CPUs unless the user
// says otherwise, by flag or by the environment.
func TestChildProcs(t *testing.T) {
	for _, c := range []struct {
		procs, cpus int
		env         string
		want        int
	}{
		{0, 2, "", 1},   // a 2-CPU machine: 1 each, not 0
		{0, 8, "", 2},   // 8 CPUs shared by four processes
		{0, 17, "", 4},  // rounded down
		{0, 8, "3", 3},  // GOMAXPROCS in the bench's environment is inherited
		{0, 8, "x", 2},  // not a number: ignored, as Go ignores it
		{0, 8, "0", 2},  // nor 0
		{5, 8, "3", 5},  // the flag wins
		{-1, 8, "3", 0}, // Go's default
	} {
		if got := childProcs(c.procs, c.cpus, c.env); got != c.want {
			t.Errorf("childProcs(%d, %d, %q) = %d, want %d", c.procs, c.cpus, c.env, got, c.want)
		}
	}
	if procsLabel(0) != "Go's default" || procsLabel(3) != "3" {
		t.Errorf("labels %q %q", procsLabel(0), procsLabel(3))
	}
}

// TestChildEnvReachesTheProcess: a process started with childEnv runs with
// the GOMAXPROCS it says, once in its environment, whatever the bench's own
// environment held.
func TestChildEnvReachesTheProcess(t *testing.T) {
	if os.Getenv("ISUPGW_BENCH_CHILD") == "1" {
		fmt.Printf("gomaxprocs=%d\n", runtime.GOMAXPROCS(0))
		os.Exit(0)
	}
	// More than Go's default can ever be (at most nproc), so that the last
	// case can tell the default from an inherited value.
	inherited := fmt.Sprint(runtime.NumCPU() + 5)
	t.Setenv("GOMAXPROCS", inherited)
	for _, c := range []struct {
		procs int
		want  string
	}{{0, inherited}, {3, "3"}, {-1, ""}} {
		o := &Options{Procs: c.procs}
		env := append(o.childEnv(), "ISUPGW_BENCH_CHILD=1")
		n := 0
		for _, kv := range env {
			if strings.HasPrefix(kv, "GOMAXPROCS=") {
				n++
			}
		}
		if n > 1 || (c.procs >= 0 && n != 1) {
			t.Fatalf("procs %d: %d GOMAXPROCS entries", c.procs, n)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestChildEnvReachesTheProcess$")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("procs %d: %v", c.procs, err)
		}
		got := strings.TrimSpace(string(out))
		if c.want == "" && (got == "gomaxprocs="+inherited || !strings.HasPrefix(got, "gomaxprocs=")) {
			t.Errorf("procs -1: the child says %q, want Go's default", got)
		}
		if c.want != "" && got != "gomaxprocs="+c.want {
			t.Errorf("procs %d: the child says %q, want gomaxprocs=%s", c.procs, got, c.want)
		}
	}
}

// TestMachineSpeed: the CPUs' speed is measured (some megabytes a second),
// each run's is carried into its row's runs as a share of the start's, and
// results.md lists it beside the run's goodput.
func TestMachineSpeed(t *testing.T) {
	if s := cpuSpeed(); !(s > 0) || math.IsInf(s, 0) {
		t.Fatalf("CPU speed %v MB/s", s)
	}
	if got := speedShare(450, 500); got != 90 {
		t.Errorf("share of 450 in 500: %v %%, want 90", got)
	}
	if got := speedShare(450, 0); got != 0 {
		t.Errorf("share without a reference: %v, want 0 (not known)", got)
	}
	row := median([]Row{{Goodput: 30, P99MS: 95, SpeedBefore: 97, SpeedAfter: 88, BCPUPerCallUS: 41.3}, {Goodput: 10, SpeedBefore: 60, SpeedAfter: 61}, {Goodput: 20}})
	if row.Runs[0].SpeedBefore != 97 || row.Runs[0].SpeedAfter != 88 || row.Runs[1].SpeedBefore != 60 || row.Runs[0].BCPUPerCallUS != 41.3 {
		t.Fatalf("runs %+v", row.Runs)
	}
	row.Mode, row.Multiplier = ModeShipped, 3
	res := &Results{Capacity: 1000, Rows: []Row{row}, Options: map[string]string{"repeat": "3"}, Machine: Machine{SpeedMBs: 512}}
	md := Markdown(res)
	for _, want := range []string{"| shipped | 3x | 30 (95; 97 / 88 %; 41.3 µs), 10 (0; 60 / 61 %), ", "| CPU speed at the start (SHA-256 on every CPU at once) | 512 MB/s |"} {
		if !strings.Contains(md, want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
}

// TestGatewayCPUPerCall: stop reads each gateway process's CPU time from
// its accounting once it has ended, so a process that burned CPU shows at
// least that much, and the run's CPU per call divides it by the calls
// completed.
func TestGatewayCPUPerCall(t *testing.T) {
	const burn = 30 * time.Millisecond
	if os.Getenv("ISUPGW_BENCH_BURN") == "1" {
		// Asking for its own usage in a loop burns user and system time.
		var ru syscall.Rusage
		for syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil || time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) < burn {
		}
		fmt.Println("burnt")
		time.Sleep(time.Minute) // until the SIGTERM from stop
		os.Exit(0)
	}
	p := &pair{}
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestGatewayCPUPerCall$")
		cmd.Env = append(os.Environ(), "ISUPGW_BENCH_BURN=1")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p.procs = append(p.procs, cmd)
		line := make([]byte, len("burnt"))
		if _, err := io.ReadFull(out, line); err != nil || string(line) != "burnt" {
			p.stop()
			t.Fatalf("child said %q: %v", line, err)
		}
	}
	p.stop()
	if len(p.cpu) != 2 {
		t.Fatalf("CPU times %v, want one per gateway", p.cpu)
	}
	for i, c := range p.cpu {
		if c < burn {
			t.Errorf("gateway %d: CPU %v, want at least the %v it burned", i, c, burn)
		}
	}
	if got := cpuPerCallUS(45*time.Millisecond, 1000); got != 45 {
		t.Errorf("45 ms over 1000 calls: %v µs, want 45", got)
	}
	if got := cpuPerCallUS(time.Second, 0); got != 0 {
		t.Errorf("no calls completed: %v, want 0 (not known)", got)
	}
}

// TestStartPairAgain: a pair that does not come up is started once more, on
// new ports, with the first try's log tails in the bench's log; if the second
// does not come up either, the error says so.
func TestStartPairAgain(t *testing.T) {
	exe, err := exec.LookPath("false")
	if err != nil {
		t.Skip("no false(1) to stand in for a gateway that never comes up")
	}
	dir := t.TempDir()
	o := &Options{Exe: exe, ReadyWait: 200 * time.Millisecond}
	var logged []string
	logf := func(format string, a ...any) { logged = append(logged, fmt.Sprintf(format, a...)) }
	p, err := startPairAgain(context.Background(), o, DefaultSettings(ModeOff), filepath.Join(dir, "pair"), logf)
	if p != nil || !errors.Is(err, errNotReady) {
		t.Fatalf("got %v, %v; want errNotReady", p, err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "starting them again on new ports") || !strings.Contains(logged[0], "of b.log") {
		t.Fatalf("bench log: %q", logged)
	}
	for _, d := range []string{"pair", "pair-again"} {
		if _, err := os.Stat(filepath.Join(dir, d, "a.yaml")); err != nil {
			t.Errorf("try %s: %v", d, err)
		}
	}
	if !strings.Contains(err.Error(), "pair-again") {
		t.Errorf("the error does not name the second try's logs: %v", err)
	}
}
