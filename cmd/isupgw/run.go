package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/internal/app"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run the gateway (--config FILE; without it the embedded default, see config default)",
		Description: `Runs the gateway with the configuration file (without --config, an embedded
default on loopback: point code 1, one adjacent exchange with point code 2).
SIGHUP reloads congestion thresholds, constraints and ISUP timers without
dropping calls and logs what needs a restart; SIGTERM or SIGINT stops taking
new calls, waits up to --drain-timeout for calls to end, releases the rest and
shuts the associations down gracefully; a second SIGTERM or SIGINT during
the wait releases the calls and stops at once. Exit status: 0 stopped, 1 error,
2 usage error, 3 Code Red (restart me).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML configuration file"},
			&cli.StringFlag{Name: "log-format", Usage: "json (default) or console"},
			&cli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "pcap", Usage: "write the M3UA traffic to this pcap file"},
			&cli.DurationFlag{Name: "drain-timeout", Value: 30e9, Usage: "how long SIGTERM waits for calls to end"},
		},
		Action: func(c *cli.Context) error {
			sigs := make(chan os.Signal, 4)
			signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
			defer signal.Stop(sigs)
			err := app.Run(c.Context, app.Options{ConfigPath: c.String("config"), LogFormat: c.String("log-format"),
				LogLevel: c.String("log-level"), PCAP: c.String("pcap"), LogOut: c.App.ErrWriter, Signals: sigs,
				DrainTimeout: c.Duration("drain-timeout")})
			if errors.Is(err, app.ErrCodeRed) {
				return cli.Exit(err.Error(), gateway.ExitCodeRed)
			}
			return err
		},
	}
}
