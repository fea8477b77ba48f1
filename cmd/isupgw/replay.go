package main

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/isupgw/isupgw/replay"
)

// progressMin is the file size from which a progress bar is shown (on a
// terminal only).
const progressMin = 1 << 20

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "decode, check or replay the ISUP calls of a pcap/pcapng capture",
		ArgsUsage: "FILE",
		Description: `Reads a capture (pcap or pcapng; Ethernet, raw IP, Linux cooked SLL/SLL2, BSD
loopback, MTP2, MTP2 with pseudo-header or MTP3 link types; M3UA over SCTP or over
UDP 9899, draft M3UA) and, by default, prints the flow, one line per ISUP message
(frame, seconds since the first message, OPC>DPC, CIC, type, key parameters, call),
then a summary: messages by type, calls seen, answered, unanswered, releases by
cause, CFNs, and anomalies (a message that does not fit the call's state, a CIC used
by two calls at once, a missing RLC, unanswered or mismatched supervision).

--check runs every circuit (OPC, DPC, CIC) through the Q.764 call and circuit
supervision procedures and lists each violation with its frame number; the command
fails when there is one.

--to ADDR acts as the exchange with point code --as against a live gateway over
M3UA: it sends that side's messages (with the capture's timing divided by --speed;
--speed 0 sends as fast as per-CIC causality allows: a message goes only after the
gateway answered what preceded it on its CIC) and compares the gateway's answers,
per CIC, with what the other side did in the capture. It first answers the
gateway's start-up circuit resets (GRS), waiting up to --settle for them (less
once every CIC of the capture was reset), so that no IAM meets a circuit still
awaiting its GRA. Other supervision requests the capture does not show (a BLO)
are acknowledged automatically. The report names the cause of every REL; the
command fails when a CIC differs.

ANSI captures need --variant ansi.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "variant", Value: "itu", Usage: "ISUP variant: itu or ansi"},
			&cli.UintFlag{Name: "udp-port", Value: 9899, Usage: "UDP port that carries SCTP (RFC 6951) in the capture"},
			&cli.BoolFlag{Name: "check", Usage: "check the Q.764 procedures and list every violation"},
			&cli.BoolFlag{Name: "no-flow", Usage: "print the summary only"},
			&cli.BoolFlag{Name: "no-progress", Usage: "never draw a progress bar"},
			&cli.StringFlag{Name: "to", Usage: "replay against the gateway at this M3UA `ADDR` (host:port)"},
			&cli.UintFlag{Name: "as", Usage: "point code to act as with --to (default: the OPC of the first IAM)"},
			&cli.UintFlag{Name: "peer-pc", Usage: "the gateway's point code (default: the point code --as talks to)"},
			&cli.Float64Flag{Name: "speed", Value: 1, Usage: "timing: 1 as captured, N times faster, 0 as fast as causality allows"},
			&cli.StringFlag{Name: "role", Value: "ipsp", Usage: "M3UA role with --to: ipsp or asp"},
			&cli.StringFlag{Name: "transport", Value: "udp", Usage: "SCTP transport with --to: udp, kernel, raw or auto"},
			&cli.UintFlag{Name: "rc", Usage: "routing context to send in ASP Active and DATA (0: none)"},
			&cli.IntFlag{Name: "ni", Value: -1, Usage: "network indicator to send (default: the capture's)"},
			&cli.DurationFlag{Name: "wait", Value: 10e9, Usage: "how long to wait for an answer the capture shows before going on"},
			&cli.DurationFlag{Name: "settle", Value: 1e9, Usage: "with --to, wait this long (without a reset) for the gateway's start-up resets before replaying (0: do not wait)"},
			&cli.StringFlag{Name: "pcap", Usage: "with --to, write the live M3UA traffic to this pcap `FILE`"},
		},
		Action: runReplay,
	}
}

func runReplay(c *cli.Context) error {
	path := c.Args().First()
	v, err := isup.ParseVariant(c.String("variant"))
	if err != nil {
		return err
	}
	port := c.Uint("udp-port")
	if port == 0 || port > 65535 {
		return fmt.Errorf("--udp-port %d: want 1-65535", port)
	}
	opts := replay.Options{Variant: v, UDPPort: uint16(port)}
	stderr := c.App.ErrWriter
	var bar *replay.Progress
	if st, err := os.Stat(path); err == nil && st.Size() >= progressMin && !c.Bool("no-progress") && isTerminal(stderr) {
		bar = replay.NewProgress(stderr, "reading "+filepath.Base(path), "MiB")
		opts.Progress = bar.Update
	}
	capt, err := replay.Load(path, opts)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return err
	}
	for _, fe := range capt.FrameErrors {
		fmt.Fprintln(stderr, fe)
	}
	if c.IsSet("to") {
		return runLive(c, capt, v)
	}
	a, calls := replay.Analyze(capt, v)
	rep := a.Report()
	out := c.App.Writer
	if c.Bool("check") {
		if err := replay.WriteCheck(out, capt, rep); err != nil {
			return err
		}
		if n := len(rep.Violations); n > 0 {
			return fmt.Errorf("replay: %s: %d procedure violations", path, n)
		}
		return nil
	}
	if !c.Bool("no-flow") {
		if err := replay.WriteFlow(out, capt.Msgs, calls); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	return replay.WriteSummary(out, capt, rep)
}

func runLive(c *cli.Context, capt *replay.Capture, v isup.Variant) error {
	addr, err := netip.ParseAddrPort(c.String("to"))
	if err != nil {
		return fmt.Errorf("--to %q: want host:port with a numeric address: %v", c.String("to"), err)
	}
	kind, err := transport.ParseKind(c.String("transport"))
	if err != nil {
		return fmt.Errorf("--transport: %v", err)
	}
	var role m3ua.Role
	switch c.String("role") {
	case "ipsp":
		role = m3ua.RoleIPSP
	case "asp":
		role = m3ua.RoleASP
	default:
		return fmt.Errorf("--role %q: want ipsp or asp", c.String("role"))
	}
	if c.Float64("speed") < 0 {
		return fmt.Errorf("--speed %v: want 0 or more", c.Float64("speed"))
	}
	settle := c.Duration("settle")
	if settle <= 0 {
		settle = -1 // LiveConfig: negative does not wait
	}
	cfg := replay.LiveConfig{Addr: addr, Role: role, Transport: kind, Speed: c.Float64("speed"), Wait: c.Duration("wait"), Settle: settle,
		Variant: v, As: uint32(c.Uint("as")), Peer: uint32(c.Uint("peer-pc")), Log: c.App.ErrWriter}
	if cfg.As == 0 {
		for i := range capt.Msgs {
			if capt.Msgs[i].Type == isup.IAM {
				cfg.As = capt.Msgs[i].OPC
				break
			}
		}
		if cfg.As == 0 {
			return fmt.Errorf("replay: %s has no IAM; say which side to act as with --as", capt.File)
		}
	}
	if rc := c.Uint("rc"); rc != 0 {
		cfg.RoutingContext, cfg.HasRC = uint32(rc), true
	}
	if ni := c.Int("ni"); ni >= 0 {
		if ni > 3 {
			return fmt.Errorf("--ni %d: want 0-3", ni)
		}
		cfg.NI, cfg.HasNI = uint8(ni), true
	}
	if p := c.String("pcap"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		w, err := capture.NewWriter(f)
		if err != nil {
			return err
		}
		cfg.M3UAOptions = append(cfg.M3UAOptions, m3ua.WithCapture(w))
	}
	ctx, cancel := signal.NotifyContext(c.Context, os.Interrupt)
	defer cancel()
	res, err := replay.Live(ctx, cfg, capt.Msgs)
	if res != nil {
		if werr := replay.WriteLive(c.App.Writer, res); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	if n := res.Differ(); n > 0 {
		return fmt.Errorf("replay: %d of %d CICs differ from %s", n, len(res.CICs), capt.File)
	}
	return nil
}

// isTerminal reports whether w is a terminal (the progress bar's condition).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd())
}
