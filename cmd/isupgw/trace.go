package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/host/client"
)

func traceCommand() *cli.Command {
	return &cli.Command{
		Name:  "trace",
		Usage: "stream a running gateway's ISUP messages and host requests of matching calls, live",
		Description: `One line per ISUP message, in the format of isupgw decode (time, OPC>DPC, SLS,
CIC, type and key parameters), and one per host request (host>gw), result with
its status (gw>host result) and release with its cause (gw>host released).
With --called, a circuit is traced from an IAM whose called number starts with
the prefix (either direction) to the next IAM on it that does not. The trace
runs until interrupted, --count lines or --for. It is a host API client: it
needs the gateway's token. With no trace running, the gateway pays nothing for
the feature (one pointer test per message).`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "dpc", Usage: "only calls to or from this adjacent exchange (a number, or 3-8-3 / 8-8-8)"},
			&cli.UintFlag{Name: "cic", Usage: "only this CIC"},
			&cli.StringFlag{Name: "called", Usage: "only calls whose called number starts with this prefix"},
			&cli.IntFlag{Name: "count", Usage: "stop after this many lines (0: no limit)"},
			&cli.DurationFlag{Name: "for", Usage: "stop after this long (0: until interrupted)"},
		}, apiFlags()...),
		Action: runTrace,
	}
}

func runTrace(c *cli.Context) error {
	f := client.TraceFilter{DPC: client.PointCode(c.String("dpc")), CIC: int(c.Uint("cic")), Called: c.String("called")}
	cl, err := dialAPI(c, "isupgw-trace")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := c.Context
	if d := c.Duration("for"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	start, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = cl.Trace(start, f)
	cancel()
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	n, limit := 0, c.Int("count")
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(ctx.Err(), context.Canceled) {
				return nil
			}
			return ctx.Err()
		case e, ok := <-cl.Events():
			if !ok {
				return fmt.Errorf("trace: the gateway closed the connection: %v", cl.Err())
			}
			line, isTrace := client.TraceText(e)
			if !isTrace {
				continue // alarms and the like
			}
			fmt.Fprintln(c.App.Writer, line)
			if n++; limit > 0 && n >= limit {
				return nil
			}
		}
	}
}
