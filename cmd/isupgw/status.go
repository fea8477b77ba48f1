package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/internal/app"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a running gateway's associations, destinations, circuits, congestion and active alarms",
		Description: `Exits non-zero when the gateway does not answer or when an association it is
configured with is not active or an MTP3 linkset is unavailable, so that it can
serve as a health check.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:9700", Usage: "the gateway's metrics and status address"},
			&cli.BoolFlag{Name: "json", Usage: "print the raw JSON"},
		},
		Action: func(c *cli.Context) error {
			st, body, err := app.FetchFullStatus(c.String("addr"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if _, err := c.App.Writer.Write(body); err != nil {
					return err
				}
			} else {
				app.PrintStatus(c.App.Writer, st.Status)
				app.PrintAlarms(c.App.Writer, st.Alarms)
			}
			if down := app.DownAssociations(st); len(down) > 0 {
				return fmt.Errorf("not up: %s", strings.Join(down, ", "))
			}
			return nil
		},
	}
}
