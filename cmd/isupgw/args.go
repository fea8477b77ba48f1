package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// argSpec is what a command takes besides flags. Commands not listed take no
// arguments.
type argSpec struct {
	min, max int    // max -1: any number
	want     string // what the arguments are, for the error
}

var argSpecs = map[string]argSpec{
	"decode":       {0, -1, "FILE, HEX or -"},
	"replay":       {1, 1, "one capture FILE"},
	"config check": {1, -1, "a configuration FILE"},
}

// guard makes a command's misuse a usage error: a flag it does not know, an
// argument it does not take, a subcommand that does not exist.
func guard(c *cli.Command, parent string) {
	full := strings.TrimSpace(parent + " " + c.Name)
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return usagef(full, "%s: %v", full, err)
	}
	spec := argSpecs[full]
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		if err := checkArgs(full, spec, ctx.Args().Slice()); err != nil {
			return err
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
	if len(c.Subcommands) > 0 {
		// Reached only when no subcommand matched. A command that also acts on
		// its own (`isupgw circuits` lists) keeps that action without arguments.
		own := c.Action
		c.Action = func(ctx *cli.Context) error {
			if ctx.NArg() == 0 && own != nil {
				return own(ctx)
			}
			if ctx.NArg() == 0 {
				return usagef(full, "%s: want a subcommand: %s", full, commandNames(c.Subcommands))
			}
			return unknownCommand(c.Subcommands, full, ctx.Args().First())
		}
		c.Before = nil           // the subcommand checks its own arguments
		c.HideHelpCommand = true // `isupgw config check --help` says the same
		for _, s := range c.Subcommands {
			guard(s, full)
		}
	}
}

func checkArgs(cmd string, spec argSpec, args []string) error {
	n := len(args)
	switch {
	case n < spec.min:
		return usagef(cmd, "%s: missing %s", cmd, spec.want)
	case spec.max < 0 || n <= spec.max:
		return nil
	case spec.max == 0:
		msg := fmt.Sprintf("%s: unexpected argument %q (%s takes no arguments", cmd, args[0], cmd)
		if cmd == "run" && looksLikeConfig(args[0]) {
			msg += fmt.Sprintf("; did you mean --config %s?", args[0])
		}
		return usagef(cmd, "%s)", msg)
	}
	return usagef(cmd, "%s: %d arguments %q (want %s)", cmd, n, args, spec.want)
}

func looksLikeConfig(s string) bool {
	ext := strings.ToLower(filepath.Ext(s))
	return ext == ".yaml" || ext == ".yml"
}

// reorderArgs moves the flags given after a command's arguments in front of
// them, where the flag parser (which stops at the first argument) sees them:
// `isupgw decode x.pcap --json` works as `isupgw decode --json x.pcap`.
// A flag's value stays with it; everything after "--" stays an argument.
// Before the command name nothing moves, so a command that does not exist is
// reported as such.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	// Root flags (--help, --version) come before the command.
	i := 0
	for i < len(rest) && strings.HasPrefix(rest[i], "-") && rest[i] != "-" && rest[i] != "--" {
		i++
	}
	out = append(out, rest[:i]...)
	rest = rest[i:]
	if len(rest) == 0 {
		return out
	}
	cmd := app.Command(rest[0])
	if cmd == nil {
		return append(out, rest...)
	}
	out = append(out, rest[0])
	return append(out, reorderFor(cmd, rest[1:])...)
}

// reorderFor reorders the arguments of one command, descending into the
// subcommand the first argument names.
func reorderFor(cmd *cli.Command, args []string) []string {
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			if len(pos) == 0 && len(cmd.Subcommands) > 0 {
				if sub := cmd.Command(a); sub != nil {
					return append(append(flags, a), reorderFor(sub, args[i+1:])...)
				}
			}
			pos = append(pos, a)
		}
	}
	if len(pos) == 0 || slices.ContainsFunc(flags, isHelpFlag) {
		return flags // the help for this command, whatever the arguments
	}
	return append(append(flags, "--"), pos...)
}

func isHelpFlag(a string) bool { return a == "--help" || a == "-help" || a == "-h" || a == "--h" }
