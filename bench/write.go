package bench

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Write puts the results into dir: results.md (the table, the machine, the
// settings), results.json, overload.png and configs/.
func Write(dir string, r *Results) error {
	if err := os.MkdirAll(filepath.Join(dir, "configs"), 0o755); err != nil {
		return err
	}
	for name, y := range r.Configs {
		p := filepath.Join(dir, "configs", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), r.json(), 0o644); err != nil {
		return err
	}
	if len(r.Rows) > 0 {
		if err := Plot(filepath.Join(dir, "overload.png"), r); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(Markdown(r)), 0o644)
}

func msOr(p *float64, none string) string {
	if p == nil {
		return none
	}
	return fmt.Sprintf("%.0f", *p)
}

func countsText(m map[string]uint64) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// Table is the overload table in Markdown.
func Table(r *Results) string {
	var b strings.Builder
	b.WriteString("| control | load | asked calls/s | offered calls/s | goodput calls/s | goodput / capacity | admitted p50 ms | admitted p99 ms | refusals (by status) | failed after admission | onset to first refusal ms | load drop to no congestion ms | generator kept up |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		rec := msOr(row.RecoveryMS, "")
		switch {
		case !row.Congested:
			rec = "never congested"
		case row.RecoveryMS == nil && row.Unread > 0:
			rec = "not known"
		case row.RecoveryMS == nil:
			rec = "did not clear"
		}
		if row.Unread > 0 {
			rec += fmt.Sprintf(" (%d of %d /metrics reads failed)", row.Unread, row.Samples)
		}
		kept := "yes"
		if !row.KeptUp {
			kept = fmt.Sprintf("no (max lag %.0f ms)", row.MaxLagMS)
		}
		failed := fmt.Sprint(row.Failed)
		if row.Failed > 0 {
			causes := map[string]uint64{}
			for k, v := range row.Causes {
				if k != "16" {
					causes["cause "+k] = v
				}
			}
			failed += " (" + countsText(causes) + ")"
		}
		fmt.Fprintf(&b, "| %s | %gx | %.0f | %.0f | %.0f | %.0f %% | %.1f | %.1f | %s | %s | %s | %s | %s |\n",
			row.Mode, row.Multiplier, row.Asked, row.Offered, row.Goodput, 100*row.Goodput/r.Capacity,
			row.P50MS, row.P99MS, countsText(row.Refused), failed, msOr(row.FirstRefusalMS, "none"), rec, kept)
	}
	return b.String()
}

// Markdown is results.md.
func Markdown(r *Results) string {
	var b strings.Builder
	m := r.Machine
	b.WriteString("# isupgw benchmark results\n\n")
	b.WriteString("Written by `isupgw bench` (see README, Development). Two gateway processes (`isupgw run`) on one machine, M3UA over SCTP-over-UDP on loopback; ")
	b.WriteString("`isupgw load` places calls on gateway A (host API), `isupgw load --answer` alerts and answers them on gateway B (host API); ")
	fmt.Fprintf(&b, "every call is a full call (IAM, ACM, ANM, REL, RLC), held %s after the answer and released by the caller.\n\n", r.Options["hold"])
	b.WriteString("## Machine\n\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n| CPUs (nproc) | %d |\n| CPU model | %s |\n| memory | %d MB |\n| Go | %s |\n| kernel | %s |\n| commit | %s |\n",
		m.CPUs, m.CPUModel, m.MemoryMB, m.GoVersion, m.Kernel, m.Commit)
	fmt.Fprintf(&b, "| load average (1 min) at start / end | %.2f / %.2f |\n| run | %s to %s |\n",
		m.LoadBefore, m.LoadAfter, r.Started.UTC().Format("2006-01-02 15:04:05"), r.Finished.UTC().Format("15:04:05 MST"))
	if m.SpeedMBs > 0 {
		fmt.Fprintf(&b, "| CPU speed at the start (SHA-256 on every CPU at once) | %.0f MB/s |\n", m.SpeedMBs)
	}
	if g := r.Options["gomaxprocs"]; g != "" {
		fmt.Fprintf(&b, "| GOMAXPROCS of each of the four processes | %s |\n", g)
	}
	b.WriteString("\nThe load generator, the answering host and both gateways share the machine's CPUs. The load average at the start is the machine before the benchmark (other work on it); at the end it includes the benchmark's own four processes. ")
	b.WriteString("Unless told otherwise (`--gomaxprocs`, or GOMAXPROCS in the bench's environment), the bench gives each process its share of the CPUs, nproc/4 and at least 1, in every mode alike: what separate machines would give them, and what docs/deployment.md advises for a gateway that shares a small machine. It is a setting of the process environment, not of the gateways' YAML.\n\n")
	b.WriteString("## Capacity\n\n")
	fmt.Fprintf(&b, "Maximum sustainable full-call rate: **%.0f calls/s** (searched with control %s). A rate is sustained when, over a %s step, the calls offered are answered and completed at the asked rate (>= 97 %%), at most one in a thousand is refused (the shipped admission refuses a few calls of a burst near its limit), none fails, the admitted p99 setup latency (outseize sent to answered received) is at most 100 ms, and the generator keeps up.\n\n",
		r.Capacity, cmp.Or(r.Options["search_control"], "off"), r.Options["search_step"])
	if len(r.Search) > 0 {
		b.WriteString("A rate that fails is tried once more (\"again\") and counts as sustained if either try sustains it: one slow moment of a shared machine does not set the capacity.\n\n")
		if st := r.Options["confirm_step"]; st != "" && !strings.HasPrefix(st, "-") {
			long := ""
			if st == r.Options["overload"] {
				long = ", as long as an overload,"
			}
			fmt.Fprintf(&b, "The rate found is then confirmed (\"confirm\"): held for %s%s at the same criterion, and lowered by a sixteenth of it at a time until sustained (at most %d tries), so that the capacity is what the machine carries for as long as an overload lasts, not its best 5 s. ", st, long, confirmTries)
			if r.Confirmed {
				b.WriteString("The capacity above was confirmed.\n\n")
			} else {
				b.WriteString("**No try sustained it: the capacity above is the last rate tried, not confirmed.**\n\n")
			}
		}
		b.WriteString("| asked calls/s | try | completed calls/s | refused | failed | p99 setup ms | sustained |\n|---|---|---|---|---|---|---|\n")
		for _, s := range r.Search {
			fmt.Fprintf(&b, "| %.0f | %s | %.0f | %d | %d | %.1f | %v |\n", s.Rate, s.try(), s.CompletedRate, s.Refused, s.Failed, s.P99MS, s.Sustained)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Overload\n\n")
	fmt.Fprintf(&b, "Each run: %s at half the capacity, then %s at the multiple of the capacity (the overload), then %s at half the capacity again, on fresh gateways. The modes take turns: at each multiple every mode runs once before any runs again, each round in the reverse order of the one before, so that drifting background load falls on every mode alike; control off runs right after shipped (before it in the reversed rounds), so the two the targets compare run side by side. ", r.Options["warm"], r.Options["overload"], r.Options["recover"])
	b.WriteString("Goodput is completed calls per second over the overload's full seconds (its first second left out); latencies are of the calls offered during the overload that were admitted and answered; ")
	b.WriteString("refusals are naks of outseize during the overload; \"failed after admission\" are admitted calls released by the far end or a timer before we released them (e.g. cause 42 from B's inbound control); ")
	b.WriteString("onset to first refusal is from the start of the overload to the first nak; load drop to no congestion is from the end of the overload to the last moment either gateway reported a congestion level, Code Yellow or a destination that answers slowly (alarm 0x1C, the admission limiting calls to a far end with its own queue quick) (its /metrics read every second during the overload and every 50 ms from 2 s before the load drops; a read that failed shows neither congestion nor calm: it is counted beside the cell, after the drop it counts as possibly congested, and a last one failed leaves the time not known).\n\n")
	if r.Options["repeat"] != "" && r.Options["repeat"] != "1" {
		fmt.Fprintf(&b, "Each row was run %s times; the table shows the run with the median goodput (of an even number of runs, the higher of the middle two), the goodput and p99 of every run follow it, with the machine's CPU speed right before and after each run (the gateways stopped) as a share of its speed at the start, and gateway B's CPU time per completed call over the run: the machine is shared, and a slow round shows there. B carries only admitted calls, so its CPU per call rises when the machine is slow during the run, which the probe between runs does not see.\n\n", r.Options["repeat"])
	}
	b.WriteString(Table(r))
	if r.Options["repeat"] != "" && r.Options["repeat"] != "1" {
		b.WriteString("\n| control | load | runs: goodput calls/s (admitted p99 ms; machine speed before / after, % of the start's; gateway B's CPU per completed call) |\n|---|---|---|\n")
		for _, row := range r.Rows {
			var parts []string
			for _, x := range row.Runs {
				part := fmt.Sprintf("%.0f (%.0f; %.0f / %.0f %%", x.Goodput, x.P99MS, x.SpeedBefore, x.SpeedAfter)
				if x.BCPUPerCallUS > 0 {
					part += fmt.Sprintf("; %.1f µs", x.BCPUPerCallUS)
				}
				parts = append(parts, part+")")
			}
			fmt.Fprintf(&b, "| %s | %gx | %s |\n", row.Mode, row.Multiplier, strings.Join(parts, ", "))
		}
	}
	b.WriteString(Paired(r))
	b.WriteString("\n![goodput and p99 setup latency against offered load](overload.png)\n\n")
	b.WriteString("## Settings\n\n")
	var any Settings
	for _, mode := range []Mode{ModeShipped, ModeCooperative} {
		s, ok := r.Settings["control-"+string(mode)]
		if !ok {
			continue
		}
		any = s
		fmt.Fprintf(&b, "Control %s: the shipped configuration, no congestion or code_yellow section (1 s probes, average over 10, level 1 at 10 s / 5 s, Code Yellow after 10 s above 20 ms; the adaptive admission on with its defaults, docs/congestion.md). ", mode)
		if mode == ModeCooperative {
			b.WriteString("The load generator is a cooperative host (`isupgw load --cooperative`): each 100 ms, a share of its outseizes refused with 0x0C or high traffic above 1 % cuts the share of due calls it places by that share (by at most half), and a window refused less raises it by a tenth; calls not placed are counted as skipped, not offered.")
		} else {
			b.WriteString("The load generator floods: it places every call due.")
		}
		b.WriteString("\n\n")
	}
	for _, mode := range []Mode{ModeOn, ModeThrottle} {
		s, ok := r.Settings["control-"+string(mode)]
		if !ok {
			continue
		}
		any = s
		fmt.Fprintf(&b, "Control %s: probe every %s, average over %d probes, level 1 at a probe delay of %s or an average of %s, clear below %s; ACC auto (1 s); Code Yellow after %d probes above %s average; the adaptive admission off (as before it existed). ",
			mode, s.Probe, s.AvgOver, s.L1Delay, s.L1Avg, s.ClearAvg, s.YellowSample, s.YellowEntry)
		if mode == ModeOn {
			b.WriteString("At level 1 every new outgoing call is refused (0x0C), the CSP procedure and the product's default (`congestion.level1_outseize: refuse`). ")
		} else {
			target := s.Throttle
			if target == "" {
				target = "halfway between the clear and level 1 averages (the default)"
			}
			fmt.Fprintf(&b, "At level 1 a new outgoing call is admitted while the outbound queue's wait is below %s and refused (0x0C) otherwise (`congestion.level1_outseize: throttle`). ", target)
		}
		if d, err := time.ParseDuration(s.Probe); err == nil {
			fmt.Fprintf(&b, "The product defaults (1 s probes, level 1 at 10 s / 5 s) are for a real exchange; two probe periods here are %v.", 2*d)
		}
		b.WriteString("\n\n")
	}
	if s, ok := r.Settings["control-off"]; ok {
		any = s
		b.WriteString("Control off: level 1 at the fixed level 2 thresholds (12 s probe delay, 6 s average; level 2 cannot be switched off), ACC off, Code Yellow off, the adaptive admission off, no out-of-service declarations.\n\n")
	}
	fmt.Fprintf(&b, "All: %d CICs, host send queue %d lines, %s host connections per side, hold %s. The configurations are in [configs/](configs/); the raw per-second reports in [raw/](raw/), beside each run's gateway A samples (`-a-admission.jsonl`: the admission's limit on calls in set-up to B and the calls in set-up, read every second and every 50 ms around the load drop); everything in [results.json](results.json).\n",
		any.CICs, any.QueueSize, r.Options["conns"], r.Options["hold"])
	return b.String()
}

// Paired compares each mode's runs with control off's run of the same
// round (the runs' order is the rounds'): how the machine ran drifts more
// between rounds than the modes differ, and a median of each mode's runs
// taken apart can put one mode's fast round beside another's slow one.
// Empty without control off or repeated runs.
func Paired(r *Results) string {
	off := map[float64][]RunBrief{}
	for _, row := range r.Rows {
		if row.Mode == ModeOff && len(row.Runs) > 1 {
			off[row.Multiplier] = row.Runs
		}
	}
	var b strings.Builder
	for _, row := range r.Rows {
		o := off[row.Multiplier]
		if row.Mode == ModeOff || len(o) == 0 || len(row.Runs) != len(o) {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nEach mode against control off in the same round (shipped and off run one after the other in every round): goodput as a share of off's, and admitted p99 against off's.\n\n")
			b.WriteString("| control | load | per round: goodput / off's (p99 ms against off's) | median share | rounds at or above off |\n|---|---|---|---|---|\n")
		}
		var parts []string
		var shares []float64
		atOrAbove := 0
		for i, x := range row.Runs {
			share := x.Goodput / max(o[i].Goodput, 1)
			shares = append(shares, share)
			if x.Goodput >= o[i].Goodput {
				atOrAbove++
			}
			parts = append(parts, fmt.Sprintf("%.0f %% (%.0f against %.0f)", 100*share, x.P99MS, o[i].P99MS))
		}
		fmt.Fprintf(&b, "| %s | %gx | %s | %.0f %% | %d of %d |\n", row.Mode, row.Multiplier, strings.Join(parts, ", "), 100*medianOf(shares), atOrAbove, len(shares))
	}
	return b.String()
}

// medianOf is the median (of an even number, the mean of the middle two).
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
