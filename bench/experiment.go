package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/isupgw/isupgw/loadgen"
)

// Step is one rate tried by the capacity search.
type Step struct {
	Rate          float64 `json:"rate"`
	CompletedRate float64 `json:"completed_per_s"`
	Refused       uint64  `json:"refused"`
	Failed        uint64  `json:"failed"`
	P99MS         float64 `json:"p99_ms"`
	KeptUp        bool    `json:"kept_up"`
	Sustained     bool    `json:"sustained"`
	// Retry: the second try of a rate whose first failed.
	Retry bool `json:"retry,omitempty"`
	// Confirm: a step of the confirmation, as long as an overload.
	Confirm bool `json:"confirm,omitempty"`
}

// try names the step's try of its rate: "first", "again" (Retry) or
// "confirm".
func (s Step) try() string {
	switch {
	case s.Confirm:
		return "confirm"
	case s.Retry:
		return "again"
	}
	return "first"
}

// Row is one overload run.
type Row struct {
	Mode       Mode    `json:"control"`
	Multiplier float64 `json:"multiplier"`
	Asked      float64 `json:"asked_per_s"`   // offered load asked during the overload
	Offered    float64 `json:"offered_per_s"` // outseizes actually sent per second
	// Goodput is completed calls per second over the overload's full seconds
	// (its first second left out).
	Goodput   float64           `json:"goodput_per_s"`
	P50MS     float64           `json:"admitted_p50_ms"`
	P99MS     float64           `json:"admitted_p99_ms"`
	Refused   map[string]uint64 `json:"refused"`
	Failed    uint64            `json:"failed"` // admitted, then released by the far end or a timer
	Causes    map[string]uint64 `json:"causes"`
	ACL       uint64            `json:"acl_seen"`
	Unanswerd uint64            `json:"unfinished"`
	// FirstRefusalMS: overload onset to the first refusal (nil: none).
	FirstRefusalMS *float64 `json:"first_refusal_ms"`
	// Congested: some gateway was congested during the run; RecoveryMS is then
	// the load drop to the last moment either was (nil: never cleared).
	Congested  bool     `json:"congested"`
	RecoveryMS *float64 `json:"recovery_ms"`
	// Unread counts the congestion samples from the overload's start on in
	// which a gateway's /metrics could not be read, of Samples: such a
	// sample shows neither congestion nor calm, so "never congested" and
	// the recovery hold only as far as the reads went. An unread sample
	// after the load drop counts as possibly congested (the recovery is an
	// upper bound), a last one unread leaves the recovery unknown.
	Unread   int     `json:"metrics_unread"`
	Samples  int     `json:"metrics_samples"`
	KeptUp   bool    `json:"generator_kept_up"`
	MaxLagMS float64 `json:"generator_max_lag_ms"`
	// SpeedBefore and SpeedAfter are the CPUs' speed right before and
	// after the run, in percent of the speed at the bench's start (0: not
	// measured).
	SpeedBefore float64 `json:"machine_speed_before_pct,omitempty"`
	SpeedAfter  float64 `json:"machine_speed_after_pct,omitempty"`
	// Completed counts the calls completed over the whole run (warm-up,
	// overload and recovery). BCPUPerCallUS is gateway B's CPU time over
	// its life divided by them, in µs (0: not measured). B only carries
	// admitted calls, so a slow stretch of the machine during the run
	// shows here as more CPU per call, where the SHA-256 probe between
	// runs misses it; fewer calls in flight (fewer messages per write and
	// per packet) raise it too.
	Completed     uint64  `json:"completed"`
	BCPUPerCallUS float64 `json:"gateway_b_cpu_us_per_call,omitempty"`
	// Runs: with --repeat, each run's goodput and p99 (the row is the run
	// with the median goodput).
	Runs []RunBrief `json:"runs,omitempty"`
}

// RunBrief is one run of a repeated row.
type RunBrief struct {
	Goodput     float64 `json:"goodput_per_s"`
	P99MS       float64 `json:"admitted_p99_ms"`
	SpeedBefore float64 `json:"machine_speed_before_pct,omitempty"`
	SpeedAfter  float64 `json:"machine_speed_after_pct,omitempty"`
	// BCPUPerCallUS is the run's gateway B CPU time per completed call.
	BCPUPerCallUS float64 `json:"gateway_b_cpu_us_per_call,omitempty"`
}

// Results is everything a run found.
type Results struct {
	Machine  Machine   `json:"machine"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Capacity float64   `json:"capacity_per_s"`
	Search   []Step    `json:"search"`
	// Confirmed: a step as long as an overload sustained the capacity
	// (false: no try of the confirmation did, or it did not run).
	Confirmed bool                    `json:"confirmed"`
	Rows      []Row                   `json:"rows"`
	Settings  map[string]Settings     `json:"settings"`
	Options   map[string]string       `json:"options"`
	Configs   map[string]string       `json:"-"`
	Answer    map[string]loadgen.Line `json:"-"`
}

// sustained is the capacity criterion: the calls offered were completed at
// the asked rate, at most one in a thousand refused, none failed, p99 setup
// within 100 ms, and the generator kept up. The shipped gateway's admission
// refuses a few calls of a burst near its limit (what it is for); counting
// one such refusal as "not sustained" found a capacity a fifth below what
// the same gateway carries with the admission off.
// maxRefusedShare: a sustained rate has at most one refusal in this many
// calls offered.
const maxRefusedShare = 1000

func sustained(rate float64, f *loadgen.Final) Step {
	s := Step{Rate: rate, CompletedRate: f.CompletedRate, Refused: f.RefusedTotal(), Failed: f.Failed, P99MS: f.Setup.P99, KeptUp: f.KeptUp}
	s.Sustained = f.KeptUp && f.RefusedTotal()*maxRefusedShare <= f.Offered && f.Failed == 0 && f.Errors == 0 && f.Unfinished == 0 &&
		f.CompletedRate >= 0.97*rate && f.Setup.P99 <= 100
	return s
}

// Run runs the whole benchmark and writes the results folder.
func Run(ctx context.Context, o Options) (*Results, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(o.Log, format+"\n", a...) }
	if o.WaitMax > 0 {
		waitQuiet(ctx, o.WaitLoad, o.WaitMax, logf)
	}
	res := &Results{Started: time.Now(), Settings: map[string]Settings{}, Configs: map[string]string{},
		Options: map[string]string{"hold": o.Hold.String(), "conns": fmt.Sprint(o.Conns), "search_step": o.SearchStep.String(), "confirm_step": o.ConfirmStep.String(),
			"warm": o.Warm.String(), "overload": o.Overload.String(), "recover": o.Recover.String(), "repeat": fmt.Sprint(max(1, o.Repeat)),
			"search_control": string(o.SearchMode), "gomaxprocs": procsLabel(o.childGOMAXPROCS())}}
	res.Machine = Describe()
	res.Machine.SpeedMBs = cpuSpeed()
	logf("bench: %s; GOMAXPROCS of each process it starts: %s", res.Machine.Line(), res.Options["gomaxprocs"])
	tmp, err := os.MkdirTemp("", "isupgw-bench-")
	if err != nil {
		return nil, err
	}
	if !o.KeepLogs {
		defer os.RemoveAll(tmp)
	} else {
		logf("bench: gateway logs in %s", tmp)
	}
	rawDir := filepath.Join(o.Out, "raw")
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return nil, err
	}
	raw := func(name string) io.WriteCloser {
		f, err := os.Create(filepath.Join(rawDir, name+".jsonl"))
		if err != nil {
			return nopCloser{io.Discard}
		}
		return f
	}

	modes := o.Modes
	if len(modes) == 0 {
		modes = Modes
	}
	res.Capacity = o.Capacity
	if res.Capacity == 0 {
		s := o.Settings(o.SearchMode)
		mode := "search-control-" + string(o.SearchMode)
		logf("bench: %s: starting gateways A and B", mode)
		p, err := startPairAgain(ctx, &o, s, filepath.Join(tmp, mode), logf)
		if err != nil {
			return nil, err
		}
		w := raw("search")
		res.Capacity, err = search(ctx, &o, p, res, w, logf)
		if err == nil && o.ConfirmStep > 0 {
			res.Capacity, res.Confirmed, err = confirm(ctx, &o, p, res, res.Capacity, w, logf)
		}
		w.Close()
		p.stop()
		if err != nil {
			return nil, err
		}
	}
	logf("bench: capacity %.0f full calls/s", res.Capacity)
	if !o.SkipOverload {
		if err := overloads(ctx, &o, res, modes, tmp, raw, logf); err != nil {
			return nil, err
		}
	}
	res.Finished = time.Now()
	res.Machine.LoadAfter = loadAvg()
	return res, Write(o.Out, res)
}

// overloads runs every mode at every multiple (schedule's order), each run
// on a fresh pair of gateways, and adds each (mode, multiple)'s median run
// to res.Rows, mode by mode.
func overloads(ctx context.Context, o *Options, res *Results, modes []Mode, tmp string, raw func(string) io.WriteCloser, logf func(string, ...any)) error {
	runs := map[slot][]Row{}
	for _, sl := range schedule(modes, o.Multipliers, max(1, o.Repeat)) {
		s := o.Settings(sl.mode)
		mode := "control-" + string(sl.mode)
		res.Settings[mode] = s
		name := fmt.Sprintf("%s-%gx", mode, sl.mult)
		if o.Repeat > 1 {
			name += fmt.Sprintf("-run%d", sl.run+1)
		}
		before := speedShare(cpuSpeed(), res.Machine.SpeedMBs)
		logf("bench: %s: machine speed %.0f %% of the start's; starting gateways A and B", name, before)
		p, err := startPairAgain(ctx, o, s, filepath.Join(tmp, name), logf)
		if err != nil {
			return err
		}
		if _, seen := res.Configs[mode+"/a.yaml"]; !seen {
			res.Configs[mode+"/a.yaml"], res.Configs[mode+"/b.yaml"] = p.aCfg, p.bCfg
		}
		w, wa := raw(name), raw(name+"-a-admission")
		row, err := overload(ctx, o, p, sl.mode, sl.mult, res.Capacity, w, wa)
		w.Close()
		wa.Close()
		p.stop()
		if err != nil {
			return err
		}
		row.SpeedBefore, row.SpeedAfter = before, speedShare(cpuSpeed(), res.Machine.SpeedMBs)
		if len(p.cpu) == 2 {
			row.BCPUPerCallUS = cpuPerCallUS(p.cpu[1], row.Completed)
		}
		logf("bench: %s: %s", name, row.Brief())
		key := slot{mode: sl.mode, mult: sl.mult}
		runs[key] = append(runs[key], row)
	}
	for _, md := range modes {
		for _, m := range o.Multipliers {
			res.Rows = append(res.Rows, median(runs[slot{mode: md, mult: m}]))
		}
	}
	return nil
}

// slot is one overload run: a mode at a multiple of the capacity, the
// run-th time.
type slot struct {
	mode Mode
	mult float64
	run  int
}

// schedule orders the runs so that the modes compared share the machine's
// conditions: every mode runs at one multiple, once each, before any runs it
// again, and each round reverses the order of the one before (A B C, C B A,
// A B C ...), so no mode is always first after a rest or always last. On a
// machine shared with other work the background load drifts over minutes;
// running all of one mode's overloads before the next mode's (as before)
// turned that drift into a difference between the modes. Within a round
// control off runs right after shipped (roundOrder), so the comparison the
// targets make is of two runs next to each other.
func schedule(modes []Mode, mults []float64, repeat int) []slot {
	var out []slot
	round := 0
	for _, m := range mults {
		for r := range repeat {
			order := roundOrder(modes)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, md := range order {
				out = append(out, slot{mode: md, mult: m, run: r})
			}
			round++
		}
	}
	return out
}

// roundOrder is the order of the modes within a round: control off right
// after shipped, the others after them in their order. With five modes of
// 75 s each, shipped first and off last put 5 minutes between the two runs
// the targets compare, and the machine's speed drifts within that (results/
// notes.md: the same mode carried 25k and 45k calls/s in one run); side by
// side, and in the reversed rounds off then shipped, they share it.
func roundOrder(modes []Mode) []Mode {
	if !slices.Contains(modes, ModeShipped) || !slices.Contains(modes, ModeOff) {
		return slices.Clone(modes)
	}
	order := make([]Mode, 0, len(modes))
	for _, m := range modes {
		switch m {
		case ModeOff:
		case ModeShipped:
			order = append(order, ModeShipped, ModeOff)
		default:
			order = append(order, m)
		}
	}
	return order
}

// median is the run with the median goodput, with every run's goodput and
// p99 noted.
func median(runs []Row) Row {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b Row) int { return cmp.Compare(a.Goodput, b.Goodput) })
	row := sorted[len(sorted)/2]
	if len(runs) > 1 {
		for _, r := range runs {
			row.Runs = append(row.Runs, RunBrief{Goodput: r.Goodput, P99MS: r.P99MS, SpeedBefore: r.SpeedBefore, SpeedAfter: r.SpeedAfter, BCPUPerCallUS: r.BCPUPerCallUS})
		}
	}
	return row
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// search finds the highest sustained rate: doubling until a rate fails, then
// halving the interval four times (to 1/16 of the last doubling). A rate
// that fails is tried once more and passes if either try sustains it: on a
// shared machine one slow step would otherwise set the capacity for the
// whole table (results/notes.md: at e3fe5e2 the search found 24000/s, and
// control off then carried 108-157 % of it in the overloads; a start
// before it had settled on 15500/s after one slow step).
func search(ctx context.Context, o *Options, p *pair, res *Results, raw io.Writer, logf func(string, ...any)) (float64, error) {
	return searchRates(o.SearchFrom, o.SearchMax, func(rate float64, retry bool) (bool, error) {
		return tryRate(ctx, o, p, res, raw, logf, rate, o.SearchStep, Step{Retry: retry})
	})
}

// tryRate offers rate for length, records the step (kind: its Retry or
// Confirm mark) in res.Search and reports whether it was sustained.
func tryRate(ctx context.Context, o *Options, p *pair, res *Results, raw io.Writer, logf func(string, ...any), rate float64, length time.Duration, kind Step) (bool, error) {
	_, fin, err := p.load(ctx, o, fmt.Sprintf("%.0f:%s", rate, length), raw)
	if err != nil {
		return false, err
	}
	st := sustained(rate, fin)
	st.Retry, st.Confirm = kind.Retry, kind.Confirm
	res.Search = append(res.Search, st)
	step := "search"
	if st.Confirm {
		step = "confirm"
	}
	logf("bench: %s %6.0f/s (%s try, %s): completed %6.0f/s, refused %d, failed %d, p99 %.1f ms, kept up %v -> sustained %v",
		step, rate, st.try(), length, st.CompletedRate, st.Refused, st.Failed, st.P99MS, st.KeptUp, st.Sustained)
	p.settle(ctx, 30*time.Second)
	return st.Sustained, nil
}

// confirmTries is how many rates the confirmation tries, each a sixteenth
// of the search's rate below the last (down to 81 % of it).
const confirmTries = 4

// confirm holds the search's rate for ConfirmStep (an overload's length) at
// the search's criterion. The search's 5 s steps, each tried twice, find
// the best moment of a shared machine: at 14a53cb it found 54000/s, and
// control off then carried 60-89 % of it at 1x over 60 s (results/notes.md),
// so every share of "capacity" in the table measured that moment. A rate
// not sustained that long is lowered a sixteenth at a time (confirmRates);
// when no try sustains, the last rate tried stands, marked not confirmed.
func confirm(ctx context.Context, o *Options, p *pair, res *Results, found float64, raw io.Writer, logf func(string, ...any)) (float64, bool, error) {
	return confirmRates(found, func(rate float64) (bool, error) {
		return tryRate(ctx, o, p, res, raw, logf, rate, o.ConfirmStep, Step{Confirm: true})
	})
}

// confirmRates is the confirmation's schedule: found, then a sixteenth of
// it lower each try, confirmTries in all; the first rate sustained is the
// capacity (confirmed), else the last tried (not confirmed).
func confirmRates(found float64, once func(rate float64) (bool, error)) (rate float64, confirmed bool, err error) {
	for i := range confirmTries {
		rate = found * (1 - float64(i)/16)
		ok, err := once(rate)
		if err != nil || ok {
			return rate, ok, err
		}
	}
	return rate, false, nil
}

// searchRates is the search's schedule: doubling from from until a rate
// fails (or past top), then four bisections; a rate that fails is tried
// once more (once's retry true), and passes if that try sustains it.
func searchRates(from, top float64, once func(rate float64, retry bool) (bool, error)) (float64, error) {
	try := func(rate float64) (bool, error) {
		ok, err := once(rate, false)
		if ok || err != nil {
			return ok, err
		}
		return once(rate, true)
	}
	lo, hi := 0.0, 0.0
	for r := from; r <= top; r *= 2 {
		ok, err := try(r)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = r
			break
		}
		lo = r
	}
	if lo == 0 {
		return 0, fmt.Errorf("bench: not even %.0f calls/s were sustained", from)
	}
	if hi == 0 {
		return lo, nil
	}
	for range 4 {
		mid := (lo + hi) / 2
		ok, err := try(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// watchPeriod is how often both gateways' /metrics are read around the end
// of an overload: often enough to time the recovery to tens of
// milliseconds. Before that they are read every watchSlow: a scrape builds
// the whole exposition (every circuit group's metrics), and at 20 a second
// on both gateways it took about 5 % of a gateway's CPU, which the
// benchmark would have measured as the gateway's own overload.
const (
	watchPeriod = 50 * time.Millisecond
	watchSlow   = time.Second
)

// overload runs half the capacity, then m times it, then half again, and
// measures; trace gets gateway A's samples (writeTrace).
func overload(ctx context.Context, o *Options, p *pair, mode Mode, m, capacity float64, raw, trace io.Writer) (Row, error) {
	base := capacity / 2
	sched := fmt.Sprintf("%.0f:%s,%.0f:%s,%.0f:%s", base, o.Warm, m*capacity, o.Overload, base, o.Recover)
	wctx, stop := context.WithCancel(ctx)
	// The generator starts after this, so its load drops after now + warm +
	// overload: the fast reads start 2 s before that.
	samples := watch(wctx, p, watchSlow, watchPeriod, time.Now().Add(o.Warm+o.Overload-2*time.Second))
	secs, fin, err := p.load(ctx, o, sched, raw)
	stop()
	all := samples()
	if err != nil {
		return Row{}, err
	}
	writeTrace(trace, time.Unix(0, fin.StartUnixNano), all)
	return analyse(mode, m, capacity, o.Warm, o.Overload, secs, fin, all), nil
}

// traceLine is one sample of gateway A in raw/<run>-a-admission.jsonl:
// seconds since the generator started, the admission's limit on calls in
// set-up to B and the calls in set-up (absent when not read, or the
// admission off for the limit), and whether either gateway was congested.
type traceLine struct {
	T         float64 `json:"t_s"`
	Limit     *int    `json:"limit,omitempty"`
	InSetup   *int    `json:"in_setup,omitempty"`
	Congested bool    `json:"congested"`
	Unread    bool    `json:"unread,omitempty"`
}

// writeTrace writes the samples of a run as traceLines: the limit second by
// second shows where it bound (results/notes.md: a 3x run at 14a53cb whose
// limit bound for the whole minute could not be told from one that did not).
func writeTrace(w io.Writer, start time.Time, all []sample) {
	enc := json.NewEncoder(w)
	for _, s := range all {
		l := traceLine{T: s.at.Sub(start).Round(time.Millisecond).Seconds(), Congested: s.congested, Unread: s.unread}
		if s.limit >= 0 {
			l.Limit = &s.limit
		}
		if s.inSetup >= 0 {
			l.InSetup = &s.inSetup
		}
		enc.Encode(l)
	}
}

// analyse turns one overload run's reports and congestion samples into a row.
func analyse(mode Mode, m, capacity float64, warm, over time.Duration, secs []loadgen.Second, fin *loadgen.Final, all []sample) Row {
	row := Row{Mode: mode, Multiplier: m, Asked: m * capacity, KeptUp: fin.KeptUp, MaxLagMS: fin.MaxLagMS}
	if len(fin.Phases) >= 2 {
		ph := fin.Phases[1]
		row.Offered = ph.OfferedRate
		row.P50MS, row.P99MS = ph.Setup.P50, ph.Setup.P99
		row.Refused, row.Failed, row.Causes, row.ACL = ph.Refused, ph.Failed, ph.Causes, ph.ACL
		if ph.FirstRefusal != nil {
			d := (*ph.FirstRefusal - ph.StartS) * 1000
			row.FirstRefusalMS = &d
		}
	}
	row.Unanswerd = uint64(fin.Unfinished)
	row.Completed = fin.Completed
	onset, drop := warm.Seconds(), (warm + over).Seconds()
	var sum float64
	n := 0
	for _, s := range secs {
		if s.T >= onset+2-0.05 && s.T <= drop+0.05 {
			sum += float64(s.Completed)
			n++
		}
	}
	if n > 0 {
		row.Goodput = sum / float64(n)
	}
	start := time.Unix(0, fin.StartUnixNano)
	dropAt := start.Add(warm + over)
	var last time.Time
	for _, s := range all {
		if s.at.After(start.Add(warm)) {
			row.Samples++
			if s.unread {
				row.Unread++
			}
			if s.congested {
				row.Congested = true
			}
		}
		if s.congested || s.unread && s.at.After(dropAt) {
			last = s.at
		}
	}
	if row.Congested && len(all) > 0 {
		if end := all[len(all)-1]; !end.congested && !end.unread {
			d := float64(max(0, last.Sub(dropAt)).Microseconds()) / 1000
			row.RecoveryMS = &d
		}
	}
	return row
}

// cpuPerCallUS is a CPU time divided by the calls completed, in µs (0 when
// none completed).
func cpuPerCallUS(cpu time.Duration, completed uint64) float64 {
	if completed == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(completed)
}

// Brief is a one-line summary of a row.
func (r Row) Brief() string {
	fr, rec := "-", "-"
	if r.FirstRefusalMS != nil {
		fr = fmt.Sprintf("%.0f ms", *r.FirstRefusalMS)
	}
	if r.RecoveryMS != nil {
		rec = fmt.Sprintf("%.0f ms", *r.RecoveryMS)
	} else if r.Congested {
		rec = "did not clear"
	}
	refused := uint64(0)
	for _, v := range r.Refused {
		refused += v
	}
	return fmt.Sprintf("asked %.0f/s offered %.0f/s goodput %.0f/s p99 %.1f ms refused %d failed %d first refusal %s recovery %s kept up %v machine speed %.0f/%.0f %% B CPU %.1f µs/call",
		r.Asked, r.Offered, r.Goodput, r.P99MS, refused, r.Failed, fr, rec, r.KeptUp, r.SpeedBefore, r.SpeedAfter, r.BCPUPerCallUS)
}

func (r *Results) json() []byte {
	b, _ := json.MarshalIndent(r, "", "  ")
	return append(b, '\n')
}

// procsLabel is childProcs' answer as results.md states it.
func procsLabel(n int) string {
	if n == 0 {
		return "Go's default"
	}
	return strconv.Itoa(n)
}
