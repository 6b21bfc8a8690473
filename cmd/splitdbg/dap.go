package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/splitdbg/splitdbg/adapter/dap"
)

var dapCmd = &command{
	name:    "dap",
	args:    "[--listen=ADDR | --client-addr=ADDR]",
	summary: "serve the Debug Adapter Protocol, split functions included (a drop-in for dlv dap)",
	help: `
Serves one debug session over the Debug Adapter Protocol, as "dlv dap"
does, for VS Code, nvim-dap, Emacs dap-mode and other DAP clients.
Breakpoints on lines whose code was moved to a cold fragment are verified
and hit, frames in moved code are named by their function with source
and line, their variables are shown and disassembly covers every
fragment. Programs without goroutines (C, C++) show their OS threads and
stacks.

With --listen it prints "DAP server listening at: ADDR" and serves the
first client that connects; with --client-addr it dials the client
instead. Either way it exits when the session ends. Launch requests take
mode "exec" (program: a built executable) or "debug" (program: a Go main
package, built without optimizations); attach requests a local
processId. Delve's --log, --log-output and --log-dest are accepted, so
an editor that runs "dlv dap --listen=127.0.0.1:PORT ..." runs splitdbg
when told that splitdbg is its dlv, e.g. in VS Code's settings:

  "go.alternateTools": {"dlv": "/path/to/splitdbg"}

It listens on the loopback interface unless told otherwise, like Delve:
anyone who can connect can run code as you.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		listen := fs.String("listen", "127.0.0.1:0", "address to serve at (port 0: any free port)")
		fs.StringVar(listen, "l", "127.0.0.1:0", "short for --listen")
		clientAddr := fs.String("client-addr", "", "address of a DAP client to dial instead of listening")
		logOn := fs.Bool("log", false, "log the session's requests and failures")
		fs.String("log-output", "", "accepted for Delve compatibility (what to log)")
		logDest := fs.String("log-dest", "", "where the log goes: a file name or a file descriptor number (default: standard error)")
		fs.Bool("check-go-version", true, "accepted for Delve compatibility")
		fs.Bool("only-same-user", true, "accepted for Delve compatibility")
		fs.Var(&debugDirs{}, "debug-file-directory",
			"look for separate debug files of the program and its libraries under `DIR` (repeatable; replaces the default /usr/lib/debug)")
		return func(c *cli, args []string) error {
			if len(args) != 0 {
				return usagef("unexpected arguments %q: the program comes in the client's launch request", args)
			}
			sessionGC()
			var opts dap.Options
			if *logOn {
				w, err := logWriter(*logDest, c.stderr)
				if err != nil {
					return err
				}
				opts.Logf = func(format string, a ...any) {
					fmt.Fprintf(w, time.Now().Format("2006-01-02T15:04:05.000")+" splitdbg dap: "+format+"\n", a...)
				}
			}
			var conn net.Conn
			if *clientAddr != "" {
				var err error
				if conn, err = net.DialTimeout("tcp", *clientAddr, 30*time.Second); err != nil {
					return err
				}
			} else {
				l, err := net.Listen("tcp", *listen)
				if err != nil {
					return err
				}
				if a, ok := l.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
					fmt.Fprintf(c.stderr, "splitdbg dap: listening on %s, not a loopback address: connections are neither authenticated nor encrypted, and a client can run any code as you\n", l.Addr())
				}
				fmt.Fprintf(c.stdout, "DAP server listening at: %s\n", l.Addr())
				if f, ok := c.stdout.(interface{ Sync() error }); ok {
					f.Sync()
				}
				conn, err = l.Accept()
				l.Close()
				if err != nil {
					return err
				}
			}
			return dap.New(conn, opts).Serve()
		}
	},
}

// logWriter opens Delve's --log-dest: a file descriptor number or a file
// name; empty is def.
func logWriter(dest string, def io.Writer) (io.Writer, error) {
	if dest == "" {
		return def, nil
	}
	if fd, err := strconv.Atoi(dest); err == nil && fd > 2 {
		return os.NewFile(uintptr(fd), "log-dest"), nil
	}
	return os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
}
