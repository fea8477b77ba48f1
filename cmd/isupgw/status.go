package main

import (
	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/internal/app"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a running gateway's associations, destinations, circuits and congestion",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:9700", Usage: "the gateway's metrics and status address"},
			&cli.BoolFlag{Name: "json", Usage: "print the raw JSON"},
		},
		Action: func(c *cli.Context) error {
			st, body, err := app.FetchStatus(c.String("addr"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				_, err := c.App.Writer.Write(body)
				return err
			}
			app.PrintStatus(c.App.Writer, st)
			return nil
		},
	}
}
