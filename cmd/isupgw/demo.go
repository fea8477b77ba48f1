package main

import (
	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/internal/demo"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "two exchanges on loopback under a load that ramps past capacity and back: watch congestion control work",
		Description: `Runs exchange A (point code 1) and B (2) in this process, connected by M3UA over
SCTP-over-UDP on loopback with 2047 circuits, each with a built-in host
application (it alerts and answers after 10-50 ms and releases after a hold
time of 200-800 ms). Exchange A is made slow on purpose (--cost per message),
so that its capacity is known on any machine. The offered load (80% from A,
20% from B) starts at half of --rate, ramps to three times it, stays there,
then drops to a quarter of it while congestion clears. Congestion control runs
with the shipped defaults: the adaptive admission refuses the excess with
0x0C, its level 1 (alarm 0x16, ACL 1 in RELs) rises once and holds.
After a legend of its columns, one line a second shows offered, admitted and
completed calls, refusals by status, A's congestion levels and queue delays
per direction, Code Yellow, ACL sent and received, and alarms by number and
name; a summary ends the run.
`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "duration", Value: 60e9, Usage: "length of the run"},
			&cli.Float64Flag{Name: "rate", Value: 150, Usage: "base offered load in calls/s (the peak is 3x)"},
			&cli.DurationFlag{Name: "cost", Value: 1e6, Usage: "artificial processing cost per message in exchange A"},
			&cli.StringFlag{Name: "pcap", Usage: "write exchange A's M3UA traffic to this pcap file"},
		},
		Action: func(c *cli.Context) error {
			_, err := demo.Run(c.Context, demo.Options{Duration: c.Duration("duration"), Rate: c.Float64("rate"),
				Cost: c.Duration("cost"), PCAP: c.String("pcap"), Out: c.App.Writer})
			return err
		},
	}
}
