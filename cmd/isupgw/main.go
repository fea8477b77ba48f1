// Command isupgw is the SS7 ISUP signaling gateway. See README.md.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

func main() {
	if err := newApp(os.Stdin, os.Stdout, os.Stderr).Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "isupgw:", err)
		os.Exit(1)
	}
}

// newApp builds the command line; tests run it with their own streams.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "isupgw",
		Usage:     "SS7 ISUP signaling gateway: M3UA/SCTP to a host socket API, with congestion control",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			decodeCommand(),
			demoCommand(),
			runCommand(),
			statusCommand(),
			circuitsCommand(), // circuits.go
			traceCommand(),    // trace.go
			replayCommand(),
			loadCommand(),
			benchCommand(),
		},
		HideHelpCommand: true,
	}
}
