package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/internal/config"
)

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "check a configuration file, or print the embedded default",
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "check configuration files without starting anything",
				ArgsUsage: "FILE ...",
				Description: `Reads each file as isupgw run --config would and prints every error, one per
line as FILE:LINE: FIELD: what is wrong and what is expected; nothing is
started (no socket is opened, no file written). A file without errors gets one
line saying what it configures. Exit status: 0 all valid, 1 an error.`,
				Action: func(c *cli.Context) error {
					bad := 0
					for _, path := range c.Args().Slice() {
						cfg, err := config.Load(path)
						if err != nil {
							bad++
							for _, e := range unjoinErrors(err) {
								fmt.Fprintln(c.App.ErrWriter, e)
							}
							continue
						}
						fmt.Fprintln(c.App.Writer, describeConfig(path, cfg))
					}
					if bad > 0 {
						return fmt.Errorf("config check: %d of %d files have errors", bad, c.NArg())
					}
					return nil
				},
			},
			{
				Name:  "default",
				Usage: "print the embedded default configuration (what isupgw run uses without --config), with its comments",
				Action: func(c *cli.Context) error {
					_, err := c.App.Writer.Write(config.DefaultYAML())
					return err
				},
			},
		},
	}
}

// describeConfig is the one line `config check` prints for a valid file.
func describeConfig(path string, cfg *config.Config) string {
	st := cfg.Gateway.Stack
	circuits := 0
	for _, g := range st.Groups {
		for _, r := range g.CICs {
			circuits += int(r.Last) - int(r.First) + 1
		}
	}
	return fmt.Sprintf("%s: ok: point code %s, %d circuit groups with %d circuits, %d M3UA peers, transport %s (%s)",
		path, cfg.PointCodes.Format(st.OPC), len(st.Groups), circuits, len(cfg.Gateway.M3UA.Peers), cfg.Transport, cfg.TransportWhy)
}

func unjoinErrors(err error) []error {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoinErrors(e)...)
		}
		return out
	}
	return []error{err}
}
