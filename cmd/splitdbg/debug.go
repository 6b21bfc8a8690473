package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/go-delve/delve/pkg/config"
	"github.com/go-delve/delve/pkg/terminal"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/adapter/session"
)

var debugCmd = &command{
	name:    "debug",
	args:    "BIN [-- ARGS]",
	summary: "debug BIN with Delve's terminal, split functions included",
	help: `
Runs BIN (with ARGS) under Delve's debugger, in process, and opens Delve's
own terminal at the familiar (dlv) prompt through splitdbg's client:
"break file.c:LINE" on a line whose code was moved to a cold fragment gets
an address there, and "continue", "bt", "frame N", "args", "locals",
"print" (globals, statics, ->, *p, &x and casts too), "set", "watch",
"cond", "next", "step", "stepout", "list" and "disassemble" work in split
functions, with callers' variables read through their saved registers
and calls inlined into moved code shown as frames of their own, each
with its variables, as gdb shows them (plain Delve 1.27 creates such a
breakpoint with no address, shows ??? frames in moved code and reads no
variables there). "break FUNC" on a
name several static functions share stops in each; "break FILE:FUNC"
picks one. Commands may also come on standard input, one per line.

Delve's configuration (~/.config/dlv/config.yml) applies. The kernel must
let this process trace BIN (ptrace).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		return func(c *cli, args []string) error {
			if len(args) < 1 {
				return usagef("want BIN")
			}
			sessionGC()
			client, stop, err := startDebugger(args[0], args[1:], nil)
			if err != nil {
				return err
			}
			defer stop()
			cfg, err := config.LoadConfig()
			if err != nil || cfg == nil {
				cfg = &config.Config{}
			}
			term := terminal.New(client, cfg, false)
			status, err := term.Run()
			if err != nil {
				return err
			}
			if status != 0 {
				return fmt.Errorf("debugger exited with status %d", status)
			}
			return nil
		}
	},
}

// sessionGC sets Go's default collector pacing (GOGC 100) for a
// debugging session (debug, dap, proxy): main's 400 suits a command that runs once over one
// file and exits, not a session that lives long beside Delve's own data
// (it held the heap at 5x what was live: 2.5x dlv's peak RSS at start-up
// on the 30,000-function scale inputs).
func sessionGC() { debug.SetGCPercent(100) }

// startDebugger runs BIN with args under Delve in this process and
// returns splitdbg's client over it, and a function that stops both.
func startDebugger(bin string, args []string, out *os.File) (*adapter.Client, func(), error) {
	s, err := session.Start(session.Config{Program: bin, Args: args, Stdout: out, Stderr: out})
	if err != nil {
		return nil, nil, err
	}
	return s.Client, func() { s.Stop(true) }, nil
}
