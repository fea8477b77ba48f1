package main

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/bench"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:      "bench",
		Usage:     "measure capacity and overload behaviour: two gateway processes, load generator and answering host on this machine",
		ArgsUsage: " ",
		Description: `Starts two gateways (isupgw run, generated configurations, M3UA over
SCTP-over-UDP on loopback), an answering host on B (isupgw load --answer) and
load generators on A (isupgw load). It finds the maximum sustainable full-call
rate (IAM, ACM, ANM, REL, RLC, host API on both ends), then offers 1x, 2x, 3x
and 5x that rate in five modes, each on fresh gateways: the shipped
configuration unchanged (the adaptive admission on) with a flooding host,
the same with a cooperative host that backs off on 0x0C, and for comparison
tuned probe thresholds with the level-1 policy refusing every new call,
with the level-1 throttle, and control off; it measures goodput, admitted p99 setup latency, refusals by
status, the time from overload onset to the first refusal and from load drop
to no congestion. It writes results.md (table, machine, settings),
overload.png, results.json, the configurations and the raw reports into --out.

The modes take turns: at each multiple every mode runs once, on fresh
gateways, before any runs again, each round in the reverse order of the one
before, so that drifting background load on the machine falls on every mode
alike; control off runs right after shipped, so the two are compared side by
side, and results.md compares each mode with off's run of the same round.
The capacity search runs with --search-control (default off); a rate that
fails is tried once more and passes if either try sustains it.

With 60 s overloads it takes about 25 minutes (three times that with --repeat 3). Measurements on a busy machine are not worth
much: --wait-load waits (polling every 30 s, at most --wait-max) for the load
average to fall below it first; the results record the load either way.

The four processes share the machine. Each gets its share of the CPUs as its
GOMAXPROCS (nproc/4, at least 1; --gomaxprocs or GOMAXPROCS in the
environment says otherwise), in every mode alike: with Go's default each
process has every CPU, and the threads its scheduler wakes and spins take
CPU from the other three. It is a setting of the process environment, not of
the gateways' configuration.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "results", Usage: "results folder"},
			&cli.Float64Flag{Name: "capacity", Usage: "skip the search and use this rate (calls/s) as the capacity"},
			&cli.Float64Flag{Name: "search-from", Value: 2000, Usage: "first rate of the capacity search"},
			&cli.DurationFlag{Name: "search-step", Value: 5 * time.Second, Usage: "length of each search step"},
			&cli.StringFlag{Name: "multipliers", Value: "1,2,3,5", Usage: "overload levels, multiples of the capacity"},
			&cli.DurationFlag{Name: "overload", Value: 60 * time.Second, Usage: "length of each overload (long enough for every mechanism to act)"},
			&cli.DurationFlag{Name: "hold", Value: 20 * time.Millisecond, Usage: "hold time of answered calls"},
			&cli.IntFlag{Name: "conns", Value: 4, Usage: "host connections of the load generator and of the answering host"},
			&cli.Float64Flag{Name: "wait-load", Value: 1.0, Usage: "wait for the 1-minute load average to fall below this"},
			&cli.DurationFlag{Name: "wait-max", Value: 10 * time.Minute, Usage: "wait at most this long for it (0: do not wait)"},
			&cli.BoolFlag{Name: "keep-logs", Usage: "keep the gateways' logs (their folder is printed)"},
			&cli.DurationFlag{Name: "confirm-step", Usage: "hold the searched rate this long to confirm it, lowering it a sixteenth at a time (at most 4 tries) until sustained (0: the overload's length; negative: do not confirm)"},
			&cli.BoolFlag{Name: "search-only", Usage: "only find the capacity"},
			&cli.StringFlag{Name: "search-control", Value: "off", Usage: "the mode the capacity search runs with (off: what the gateways carry with no overload control, so the admission's refusals near its limit do not lower it)"},
			&cli.StringFlag{Name: "control", Usage: "modes to run, comma-separated: shipped (the shipped configuration), cooperative (shipped, the host backs off on 0x0C), on (level 1 refuses every new call), throttle (level 1 throttles), off (default all five)"},
			&cli.StringFlag{Name: "probe", Value: "100ms", Usage: "control on: probe interval"},
			&cli.IntFlag{Name: "average-over", Value: 3, Usage: "control on: probes in the average"},
			&cli.StringFlag{Name: "level1-delay", Value: "50ms", Usage: "control on: level 1 at this probe delay"},
			&cli.StringFlag{Name: "level1-average", Value: "30ms", Usage: "control on: level 1 at this average"},
			&cli.StringFlag{Name: "clear-average", Value: "10ms", Usage: "control on: back to no congestion below this average"},
			&cli.StringFlag{Name: "throttle-target", Usage: "control throttle: the outbound queue wait to keep (default: halfway between the clear and level 1 averages)"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run each overload this many times; the table shows the run with the median goodput (of two, the higher)"},
			&cli.IntFlag{Name: "cics", Value: 4000, Usage: "circuits between the gateways (ITU: at most 4096)"},
			&cli.IntFlag{Name: "gomaxprocs", Usage: "GOMAXPROCS of each process the bench starts (0: GOMAXPROCS from this environment if set, else nproc/4 and at least 1, each process's share of the CPUs; -1: Go's default, every CPU in each)"},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			var mults []float64
			for _, s := range strings.Split(c.String("multipliers"), ",") {
				v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil || v <= 0 {
					return fmt.Errorf("--multipliers %q: want positive numbers, e.g. 1,2,3,5", s)
				}
				mults = append(mults, v)
			}
			var modes []bench.Mode
			if c.String("control") != "" {
				for _, m := range strings.Split(c.String("control"), ",") {
					md := bench.Mode(strings.TrimSpace(m))
					if !slices.Contains(bench.Modes, md) {
						return fmt.Errorf("--control %q: want shipped, cooperative, on, throttle or off (comma-separated)", m)
					}
					modes = append(modes, md)
				}
			}
			settings := func(mode bench.Mode) bench.Settings {
				s := bench.DefaultSettings(mode)
				s.Probe, s.AvgOver, s.L1Delay, s.L1Avg, s.ClearAvg = c.String("probe"), c.Int("average-over"), c.String("level1-delay"), c.String("level1-average"), c.String("clear-average")
				s.CICs = c.Int("cics")
				s.Throttle = c.String("throttle-target")
				return s
			}
			res, err := bench.Run(ctx, bench.Options{Settings: settings, Out: c.String("out"), Capacity: c.Float64("capacity"),
				SearchFrom: c.Float64("search-from"), SearchStep: c.Duration("search-step"), ConfirmStep: c.Duration("confirm-step"), Multipliers: mults,
				Overload: c.Duration("overload"), Hold: c.Duration("hold"), Conns: c.Int("conns"),
				WaitLoad: c.Float64("wait-load"), WaitMax: c.Duration("wait-max"), Log: c.App.ErrWriter,
				KeepLogs: c.Bool("keep-logs"), SkipOverload: c.Bool("search-only"), Modes: modes, Repeat: c.Int("repeat"), Procs: c.Int("gomaxprocs"), SearchMode: bench.Mode(c.String("search-control"))})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "capacity %.0f full calls/s\n\n%s\nresults in %s (results.md, overload.png)\n", res.Capacity, bench.Table(res), c.String("out"))
			return nil
		},
	}
}
