// Command isupgw is the SS7 ISUP signaling gateway. See README.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/internal/suggest"
)

// Exit statuses: 0 done, 1 an error, 2 a usage error (unknown command, a
// flag or argument the command does not take), 3 Code Red (restart me; only
// `isupgw run`).
const (
	exitError = 1
	exitUsage = 2
)

func main() {
	setGC(os.Getenv)
	err := execute(os.Stdin, os.Stdout, os.Stderr, os.Args)
	report(os.Stderr, err)
	os.Exit(exitStatus(err))
}

// execute runs one command line (args[0] is the program name). Flags given
// after the arguments are moved in front of them first.
func execute(stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	app := newApp(stdin, stdout, stderr)
	return app.Run(reorderArgs(app, args))
}

// usageError is a command line the program cannot run as given: exit status
// 2, with a pointer to the help.
type usageError struct {
	msg  string
	help string // the command whose help tells more, "" for the program's
}

func (e *usageError) Error() string { return e.msg }

func usagef(help, format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...), help: help}
}

// exitStatus maps Run's error to the process's exit status.
func exitStatus(err error) int {
	var ue *usageError
	var ec cli.ExitCoder
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ec):
		return ec.ExitCode()
	}
	return exitError
}

// report prints Run's error, and for a usage error where the help is.
func report(w io.Writer, err error) {
	if err == nil || err.Error() == "" {
		return
	}
	fmt.Fprintln(w, "isupgw:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "Run 'isupgw %s--help' for usage.\n", strings.TrimPrefix(ue.help+" ", " "))
	}
}

// newApp builds the command line; tests run it with their own streams.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	info := readBuildInfo()
	cli.VersionPrinter = func(c *cli.Context) { info.write(c.App.Writer) }
	app := &cli.App{
		Name:      "isupgw",
		Usage:     "SS7 ISUP signaling gateway: M3UA/SCTP to a host socket API, with congestion control",
		Version:   info.Version,
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
			configCommand(),
			versionCommand(),
		},
		HideHelpCommand: true,
		// Errors come back to execute; nothing in the library exits.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usagef("", "%v", err)
		},
		Action: rootAction,
	}
	for _, c := range app.Commands {
		guard(c, "")
	}
	return app
}

// rootAction runs when no command matched: `isupgw`, `isupgw help [CMD]` or
// a command that does not exist.
func rootAction(c *cli.Context) error {
	args := c.Args().Slice()
	switch {
	case len(args) == 0:
		_ = cli.ShowAppHelp(c)
		return usagef("", "no command given (want one of %s)", commandNames(c.App.Commands))
	case args[0] == "help" && len(args) == 1:
		return cli.ShowAppHelp(c)
	case args[0] == "help":
		if c.App.Command(args[1]) == nil {
			return unknownCommand(c.App.Commands, "", args[1])
		}
		return cli.ShowCommandHelp(c, args[1])
	}
	return unknownCommand(c.App.Commands, "", args[0])
}

func unknownCommand(cmds []*cli.Command, parent, name string) error {
	msg := fmt.Sprintf("unknown command %q", strings.TrimSpace(parent+" "+name))
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if s := suggest.Nearest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", strings.TrimSpace(parent+" "+s))
	}
	return usagef(parent, "%s; want one of %s", msg, commandNames(cmds))
}

func commandNames(cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
