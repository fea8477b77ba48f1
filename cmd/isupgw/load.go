package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/loadgen"
	"github.com/isupgw/isupgw/mtp"
)

func loadCommand() *cli.Command {
	return &cli.Command{
		Name:      "load",
		Usage:     "drive calls through a gateway over the host API (or, with --answer, answer them)",
		ArgsUsage: " ",
		Description: `Places calls through a gateway's host API at a scheduled rate: --rate for a
constant rate over --duration, --ramp FROM:TO:DURATION for a linear ramp, or
--steps RATE:DURATION,... for steps one after the other. Answered calls are
held for --hold and released by us (cause 16). Once a second a line shows
offered, admitted and completed calls, refusals by status, the setup latency
(outseize sent to answered) p50/p90/p99/max, released causes, ACL seen, calls
up, and the generator's own lag (how late it sent the outseizes). At the end a
report says whether it kept up with the asked load. --json writes the same as
JSON lines.

With --answer it is the other end: it subscribes to incoming calls, and
alerts and answers each after --delay, until --duration (0: until
interrupted). A full call (IAM, ACM, ANM, REL, RLC) needs both: e.g.

  isupgw load --answer --addr 127.0.0.1:7701 --token s3cret &
  isupgw load --addr 127.0.0.1:7700 --token s3cret --dpc 2 --rate 1000 --duration 30s

Several gateways: --addr A1,A2 (or --addr repeated) for an active/standby
pair or N gateways by point code. Each call goes to a gateway available for
its destination (connected, not standby, with circuits towards the DPC, the
DPC not reported unavailable), the least loaded; a standby's refusal (0x0120)
sends the call to the other, and a call stays on the gateway that took it.
A gateway whose connections end is dialled again until the run ends.
The report counts calls refused because of standby, outseizes redirected,
calls lost with a gateway whose connection ended, and each gateway's share.

Number patterns: every X is a digit of the call's sequence number, every ?
a random digit (--called 4930XXXXXX).`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "addr", Value: cli.NewStringSlice("127.0.0.1:7700"), Usage: "the gateway's host API: host:port, or a Unix socket path; repeat or comma-separate for several gateways (a pair, or N by point code): each call goes to one available for its destination"},
			&cli.StringFlag{Name: "token", Usage: "host API token (or ISUPGW_TOKEN)", EnvVars: []string{"ISUPGW_TOKEN"}},
			&cli.StringFlag{Name: "token-file", Usage: "read the token from this file"},
			&cli.StringFlag{Name: "app", Usage: "application name in hello"},
			&cli.IntFlag{Name: "conns", Value: 2, Usage: "host connections sharing the calls"},
			&cli.Float64Flag{Name: "rate", Usage: "calls/s, constant over --duration"},
			&cli.StringFlag{Name: "ramp", Usage: "FROM:TO:DURATION, a linear ramp of calls/s (e.g. 100:5000:60s)"},
			&cli.StringFlag{Name: "steps", Usage: "RATE:DURATION,... constant rates one after the other (FROM-TO:DURATION ramps)"},
			&cli.DurationFlag{Name: "duration", Value: 10 * time.Second, Usage: "length of a --rate run; with --answer, of the answering (0: until interrupted)"},
			&cli.DurationFlag{Name: "hold", Usage: "how long answered calls are held before we release them"},
			&cli.IntFlag{Name: "concurrency", Usage: "cap on calls up at once; calls due beyond it are skipped and counted (0: no cap)"},
			&cli.BoolFlag{Name: "cooperative", Usage: "back off on congestion refusals (0x0C, high traffic) as the CSP asks hosts to; calls not placed are skipped and counted"},
			&cli.StringSliceFlag{Name: "dpc", Usage: "destination point code: a number, or 3-8-3 (ITU) / 8-8-8 (ANSI) as the configuration writes it (repeat or comma-separate for several, used in turn)"},
			&cli.StringSliceFlag{Name: "route", Usage: "destination circuit group by name, instead of --dpc"},
			&cli.StringFlag{Name: "called", Value: "4930XXXXXX", Usage: "called number pattern (X: sequence digit, ?: random digit)"},
			&cli.StringFlag{Name: "calling", Usage: "calling number pattern"},
			&cli.UintFlag{Name: "cause", Value: 16, Usage: "cause of our releases"},
			&cli.DurationFlag{Name: "drain", Usage: "after the schedule, wait at most this long for calls to end (default hold + 10s)"},
			&cli.DurationFlag{Name: "lag-limit", Value: 100 * time.Millisecond, Usage: "a larger lag in sending outseizes means the generator did not keep up"},
			&cli.BoolFlag{Name: "json", Usage: "JSON lines (type second, final, answer)"},
			&cli.BoolFlag{Name: "quiet", Usage: "only the final report"},
			&cli.BoolFlag{Name: "answer", Usage: "answering side: take incoming calls, alert and answer them"},
			&cli.DurationFlag{Name: "delay", Usage: "--answer: wait this long before alerting and answering"},
			&cli.BoolFlag{Name: "no-alert", Usage: "--answer: answer without an ACM first"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write the generator's own CPU profile here"},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			if p := c.String("cpuprofile"); p != "" {
				f, err := os.Create(p)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			var addrs []string
			for _, s := range c.StringSlice("addr") {
				for _, a := range strings.Split(s, ",") {
					if a = strings.TrimSpace(a); a != "" {
						addrs = append(addrs, a)
					}
				}
			}
			if len(addrs) == 0 {
				return fmt.Errorf("--addr: no address")
			}
			network, addr := "tcp", addrs[0]
			if strings.Contains(addr, "/") {
				network = "unix"
			}
			token := c.String("token")
			if f := c.String("token-file"); f != "" {
				b, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				token = strings.TrimSpace(string(b))
			}
			if c.Bool("answer") {
				if len(addrs) > 1 {
					return fmt.Errorf("--answer takes one --addr (run one answering side per gateway)")
				}
				d := c.Duration("duration")
				if !c.IsSet("duration") {
					d = 0
				}
				return loadgen.Answer(ctx, loadgen.AnswerOptions{Network: network, Address: addr, Token: token, App: c.String("app"),
					Conns: c.Int("conns"), Delay: c.Duration("delay"), NoAlert: c.Bool("no-alert"), Duration: d,
					Out: c.App.Writer, JSON: c.Bool("json"), Quiet: c.Bool("quiet")})
			}
			o, dpcs, err := loadOptions(c)
			if err != nil {
				return err
			}
			// Dashed point codes are resolved against the first gateway.
			o.Network, o.Address, o.Addresses, o.Token = network, addr, addrs, token
			if o.DPCs, err = resolveDPCs(ctx, o, dpcs); err != nil {
				return err
			}
			fin, err := loadgen.Run(ctx, o)
			if err != nil {
				return err
			}
			if !fin.KeptUp {
				pprof.StopCPUProfile()
				return cli.Exit("", 2)
			}
			return nil
		},
	}
}

// loadOptions turns the flags of the calling side into options.
// The point codes come back as written (dpcs): resolveDPCs turns them into
// numbers with the gateway's help.
func loadOptions(c *cli.Context) (o loadgen.Options, dpcs []string, err error) {
	o = loadgen.Options{App: c.String("app"), Conns: c.Int("conns"), Hold: c.Duration("hold"), Concurrency: c.Int("concurrency"),
		Cooperative:  c.Bool("cooperative"),
		ReleaseCause: uint8(c.Uint("cause")), Drain: c.Duration("drain"), LagLimit: c.Duration("lag-limit"),
		Out: c.App.Writer, JSON: c.Bool("json"), Quiet: c.Bool("quiet")}
	n := 0
	for _, f := range []string{"rate", "ramp", "steps"} {
		if c.IsSet(f) {
			n++
		}
	}
	if n != 1 {
		return o, nil, fmt.Errorf("give exactly one of --rate, --ramp and --steps")
	}
	switch {
	case c.IsSet("rate"):
		if c.Float64("rate") <= 0 || c.Duration("duration") <= 0 {
			return o, nil, fmt.Errorf("--rate and --duration must be positive")
		}
		o.Schedule = loadgen.Constant(c.Float64("rate"), c.Duration("duration"))
	case c.IsSet("ramp"):
		o.Schedule, err = loadgen.ParseRamp(c.String("ramp"))
	default:
		o.Schedule, err = loadgen.ParseSteps(c.String("steps"))
	}
	if err != nil {
		return o, nil, err
	}
	if o.Called, err = loadgen.ParsePattern(c.String("called")); err != nil {
		return o, nil, err
	}
	if o.Calling, err = loadgen.ParsePattern(c.String("calling")); err != nil {
		return o, nil, err
	}
	for _, s := range c.StringSlice("dpc") {
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			_, errITU := mtp.PointCodeFormat{}.Parse(part)
			_, errANSI := mtp.PointCodeFormat{ANSI: true}.Parse(part)
			if errITU != nil && errANSI != nil {
				return o, nil, fmt.Errorf("--dpc %q: want a point code: a number, or 3-8-3 (ITU) / 8-8-8 (ANSI) as the configuration writes it", part)
			}
			dpcs = append(dpcs, part)
		}
	}
	for _, s := range c.StringSlice("route") {
		o.Routes = append(o.Routes, strings.Split(s, ",")...)
	}
	if len(dpcs) == 0 && len(o.Routes) == 0 {
		return o, nil, fmt.Errorf("give a destination: --dpc or --route")
	}
	return o, dpcs, nil
}

// resolveDPCs turns the --dpc texts into numbers: a number as it is; a
// dashed code (3-8-3 or 8-8-8) read against the gateway's circuit groups,
// whose variants say which structure is meant (one host API connection,
// made only when a dashed code is given).
func resolveDPCs(ctx context.Context, o loadgen.Options, texts []string) ([]uint32, error) {
	var out []uint32
	var hc *client.Client
	defer func() {
		if hc != nil {
			hc.Close()
		}
	}()
	for _, t := range texts {
		if v, err := strconv.ParseUint(t, 0, 32); err == nil {
			out = append(out, uint32(v))
			continue
		}
		if hc == nil {
			var err error
			if hc, err = client.Dial(ctx, o.Network, o.Address, client.Config{App: o.App + "-resolve", Token: o.Token}); err != nil {
				return nil, fmt.Errorf("--dpc %s: asking the gateway which point code it names: %w", t, err)
			}
		}
		pc, err := hc.ResolvePointCode(ctx, client.PointCode(t))
		if err != nil {
			return nil, fmt.Errorf("--dpc %s: %w", t, err)
		}
		out = append(out, pc)
	}
	return out, nil
}
