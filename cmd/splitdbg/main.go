// Command splitdbg makes split functions first-class for debuggers and
// profilers: it rebuilds each logical function of an ELF binary from all
// its fragments (foo, foo.cold, foo.cold.0, foo.__part.1, ...) and
// answers address and name questions about them.
//
// Run "splitdbg help" for the commands.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// command is one subcommand. setup defines its flags on fs and returns
// the function that runs it on the positional arguments. A command with
// an argument syntax of its own (symbolize: llvm-symbolizer's) has main
// instead: it runs on all its arguments and returns the exit status.
type command struct {
	name, args, summary string
	help                string
	setup               func(fs *flag.FlagSet) func(c *cli, args []string) error
	main                func(c *cli, args []string) int
}

var commands []*command

func init() {
	commands = []*command{funcsCmd, addrCmd, breakCmd, linesCmd, bbaddrmapCmd, batCmd, emitCmd, stripCmd, eslCmd, mipCmd, debugCmd, proxyCmd, dapCmd, symbolizeCmd, demoCmd}
}

// cli carries the process's streams, so tests can run commands in-process.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func main() {
	// A command runs once over one file and exits: trade memory for fewer
	// collections.
	debug.SetGCPercent(400)
	c := &cli{os.Stdin, os.Stdout, os.Stderr}
	if ok, addr2line := symbolizeAs(os.Args[0]); ok {
		os.Exit(c.symbolize(os.Args[0], os.Args[1:], addr2line))
	}
	os.Exit(c.main(os.Args[1:]))
}

const overview = `splitdbg makes split functions first-class for debuggers and profilers.

Optimizers move parts of a function far from its entry (foo + foo.cold from
GCC, foo.__part.N and foo.cold from clang, foo.cold.N from BOLT). splitdbg
rebuilds each logical function from all its fragments.

Usage:
  splitdbg COMMAND [flags] ARGS

Commands:
`

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, overview)
	for _, cmd := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprint(w, "\nRun \"splitdbg help COMMAND\" or \"splitdbg COMMAND -help\" for details.\n"+
		"Exit status: 0 success, 1 error, 2 usage.\n")
}

func lookupCommand(name string) *command {
	for _, cmd := range commands {
		if cmd.name == name {
			return cmd
		}
	}
	return nil
}

func (c *cli) main(args []string) int {
	if len(args) == 0 {
		c.usage(c.stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if cmd := lookupCommand(args[1]); cmd != nil {
				c.commandHelp(c.stdout, cmd)
				return 0
			}
			fmt.Fprintf(c.stderr, "splitdbg: unknown command %q\n", args[1])
			return 2
		}
		c.usage(c.stdout)
		return 0
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		fmt.Fprintf(c.stderr, "splitdbg: unknown command %q\n\n", name)
		c.usage(c.stderr)
		return 2
	}
	if cmd.main != nil {
		return cmd.main(c, args[1:])
	}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	run := cmd.setup(fs)
	addBinFlags(fs, cmd)
	pos, err := parseFlags(fs, args[1:])
	if err == nil {
		err = run(c, pos)
	}
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		c.commandHelp(c.stdout, cmd)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "splitdbg %s: %s\nusage: splitdbg %s %s\n", cmd.name, ue.msg, cmd.name, cmd.args)
		return 2
	default:
		// Errors of a package that names the command are not prefixed twice.
		msg := strings.TrimPrefix(oneLine(err.Error()), "splitdbg "+cmd.name+": ")
		fmt.Fprintf(c.stderr, "splitdbg %s: %s\n", cmd.name, msg)
		return 1
	}
}

// writeJSON writes v to w as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (c *cli) commandHelp(w io.Writer, cmd *command) {
	fmt.Fprintf(w, "usage: splitdbg %s %s\n\n%s\n", cmd.name, cmd.args, strings.TrimSpace(cmd.help))
	if cmd.setup == nil {
		return // its options are in its help
	}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.setup(fs)
	addBinFlags(fs, cmd)
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

// parseFlags parses flags that may appear before or between positional
// arguments, and returns the positional arguments. A lone "-" is an
// argument.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
