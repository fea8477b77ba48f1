package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/config"
)

// apiFlags say how to reach a running gateway's host API: the CLI's control
// commands are host API clients, with the same socket and token as any host.
func apiFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "host-api", Value: wire.DefaultTCP, Usage: "the gateway's host API TCP address"},
		&cli.StringFlag{Name: "unix", Usage: "the gateway's host API Unix socket (instead of --host-api)"},
		&cli.StringFlag{Name: "token", Usage: "the host API token (or env ISUPGW_TOKEN, or --token-file, or --config)", EnvVars: []string{"ISUPGW_TOKEN"}},
		&cli.StringFlag{Name: "token-file", Usage: "a file holding the host API token"},
		&cli.StringFlag{Name: "config", Usage: "the gateway's configuration file: its host_api address, socket and token"},
	}
}

// dialAPI connects to the host API as the flags say.
func dialAPI(c *cli.Context, app string) (*client.Client, error) {
	network, addr := "tcp", c.String("host-api")
	if u := c.String("unix"); u != "" {
		network, addr = "unix", u
	}
	token := c.String("token")
	if f := c.String("token-file"); f != "" && token == "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if path := c.String("config"); path != "" {
		cfg, err := config.Load(path)
		if err != nil {
			return nil, err
		}
		if token == "" && !cfg.TokenGenerated {
			token = cfg.Host.Token
		}
		if !c.IsSet("host-api") && !c.IsSet("unix") {
			switch {
			case cfg.Host.Unix != "":
				network, addr = "unix", cfg.Host.Unix
			case cfg.Host.TCP != "" && cfg.Host.TCP != "none":
				addr = cfg.Host.TCP
			}
		}
	}
	ctx, cancel := context.WithTimeout(c.Context, 5*time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, network, addr, client.Config{App: app, Token: token})
	if err != nil {
		var nak *client.Nak
		if errors.As(err, &nak) && nak.Status == wire.StatusBadToken {
			return nil, fmt.Errorf("%s %s: wrong or missing token (give it with --token, ISUPGW_TOKEN, --token-file or --config)", network, addr)
		}
		return nil, fmt.Errorf("host API %s %s: %w", network, addr, err)
	}
	return cl, nil
}

// parseCICs reads "N" or "N-M".
func parseCICs(s string) (first, last int, err error) {
	a, b, isRange := strings.Cut(s, "-")
	first, err = strconv.Atoi(strings.TrimSpace(a))
	if err != nil || first < 0 || first > 0x3FFF {
		return 0, 0, fmt.Errorf("--cic %q: want a CIC or a range like 1-31", s)
	}
	last = first
	if isRange {
		last, err = strconv.Atoi(strings.TrimSpace(b))
		if err != nil || last < first || last > 0x3FFF {
			return 0, 0, fmt.Errorf("--cic %q: want a range like 1-31, first not above last", s)
		}
	}
	return first, last, nil
}

func circuitsCommand() *cli.Command {
	target := []cli.Flag{
		&cli.StringFlag{Name: "dpc", Usage: "the adjacent exchange's point code: a number, or 3-8-3 (ITU) / 8-8-8 (ANSI) as the configuration writes it"},
		&cli.StringFlag{Name: "group", Usage: "the circuit group by name (instead of --dpc)"},
		&cli.StringFlag{Name: "cic", Usage: "a CIC or a range N-M (at most 32 circuits)", Required: true},
		&cli.DurationFlag{Name: "timeout", Value: 70 * time.Second, Usage: "how long to wait for the far end's acknowledgement"},
	}
	hw := &cli.BoolFlag{Name: "hardware", Usage: "hardware-failure oriented blocking (CGB/CGU), instead of maintenance"}
	sub := func(name, usage string, flags ...cli.Flag) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage,
			Flags:  append(append(append([]cli.Flag{}, target...), flags...), apiFlags()...),
			Action: func(c *cli.Context) error { return runMaintenance(c, name) },
		}
	}
	return &cli.Command{
		Name:  "circuits",
		Usage: "list a running gateway's circuits, or block, unblock, reset or query them",
		Description: `With no subcommand: a table of circuits (group, CIC, state, local and remote
blocking and its kind, what it awaits, call and direction, time in state) and a
one-line summary per group. The subcommands run the ISUP procedures (Q.764 §2.8,
§2.9): block/unblock send BLO/UBL for one circuit, CGB/CGU for a range or with
--hardware; reset sends RSC, or GRS for a range; query sends CQM. Each waits for
the far end's acknowledgement and exits non-zero if none came within the repeat
timer (the gateway keeps repeating the message and alarms at the long timer).
The commands are host API clients: they need the gateway's token.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "dpc", Usage: "only this adjacent exchange's circuits (a number, or 3-8-3 / 8-8-8)"},
			&cli.StringFlag{Name: "group", Usage: "only this circuit group"},
			&cli.StringFlag{Name: "cic", Usage: "only this CIC or range N-M"},
			&cli.StringFlag{Name: "state", Usage: "only circuits in this state: " + strings.Join(circuitStates, ", ")},
			&cli.BoolFlag{Name: "summary", Usage: "print only the per-group summaries"},
		}, apiFlags()...),
		Action: runCircuits,
		Subcommands: []*cli.Command{
			sub("block", "block circuits locally (BLO, or CGB for a range or --hardware)", hw),
			sub("unblock", "unblock circuits (UBL, or CGU for a range or --hardware)", hw),
			sub("reset", "reset circuits (RSC, or GRS for a range): calls on them are released"),
			sub("query", "ask the far end for the circuits' state (CQM)"),
		},
	}
}

var circuitStates = []string{"idle", "busy", "outgoing", "incoming", "releasing", "held", "blocked", "local", "remote", "awaiting"}

func runCircuits(c *cli.Context) error {
	f := client.CircuitFilter{DPC: client.PointCode(c.String("dpc")), Group: c.String("group"), State: c.String("state"), Summary: c.Bool("summary")}
	if s := c.String("cic"); s != "" {
		first, last, err := parseCICs(s)
		if err != nil {
			return err
		}
		f.CIC, f.Last = first, last
	}
	cl, err := dialAPI(c, "isupgw-circuits")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(c.Context, 30*time.Second)
	defer cancel()
	list, groups, err := cl.Circuits(ctx, f)
	if err != nil {
		return err
	}
	if !c.Bool("summary") {
		printCircuits(c.App.Writer, list)
	}
	for _, g := range groups {
		fmt.Fprintln(c.App.Writer, groupLine(g))
	}
	return nil
}

func printCircuits(out io.Writer, list []client.Circuit) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tDPC\tCIC\tSTATE\tLOCAL\tREMOTE\tAWAITING\tCALL\tDIR\tIN STATE")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, ci := range list {
		call := "-"
		if ci.Call != 0 {
			call = strconv.FormatUint(ci.Call, 10)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ci.Group, shownPC(ci.PC, ci.DPC), ci.CIC, ci.State,
			dash(ci.Local), dash(ci.Remote), dash(ci.Awaiting), call, dash(ci.Direction), inState(ci.InStateMS))
	}
	w.Flush()
}

func inState(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// shownPC is a point code as the gateway's configuration writes it (the
// "pc" the gateway sends), or the number from an older gateway.
func shownPC(text string, dpc uint32) string {
	if text != "" {
		return text
	}
	return strconv.FormatUint(uint64(dpc), 10)
}

func groupLine(g client.GroupSummary) string {
	return fmt.Sprintf("group %s (dpc %s): %d circuits: %d idle, %d outgoing, %d incoming, %d releasing, %d locally blocked, %d remotely blocked, %d awaiting an acknowledgement",
		g.Group, shownPC(g.PC, g.DPC), g.Total, g.Idle, g.Outgoing, g.Incoming, g.Releasing, g.LocallyBlocked, g.RemotelyBlocked, g.Awaiting)
}

func runMaintenance(c *cli.Context, op string) error {
	first, last, err := parseCICs(c.String("cic"))
	if err != nil {
		return err
	}
	m := client.Maintenance{DPC: client.PointCode(c.String("dpc")), Route: c.String("group"), CIC: first, Last: last, Hardware: c.Bool("hardware")}
	if m.DPC == "" && m.Route == "" {
		return errors.New("give --dpc or --group")
	}
	cl, err := dialAPI(c, "isupgw-circuits")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	where := "dpc " + string(m.DPC)
	if m.Route != "" {
		where = "group " + m.Route
	}
	cics := strconv.Itoa(first)
	if last != first {
		cics += "-" + strconv.Itoa(last)
	}
	r, err := cl.Maintain(ctx, op, m)
	if err != nil {
		return fmt.Errorf("%s %s CIC %s: %w", op, where, cics, err)
	}
	fmt.Fprintf(c.App.Writer, "%s %s CIC %s: %s sent, %s received after %d ms\n", op, where, cics, r.Sent, r.Ack, r.WaitedMS)
	for _, s := range r.States {
		fmt.Fprintf(c.App.Writer, "  CIC %d: %s (0x%s)\n", s.CIC, s.State, s.Coded)
	}
	return nil
}
