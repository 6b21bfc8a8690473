package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/splitdbg/splitdbg/adapter/proxy"
)

var proxyCmd = &command{
	name:    "proxy",
	args:    "[-listen ADDR] -upstream ADDR BIN",
	summary: "give any Delve client split-function support, between it and a headless Delve",
	help: `
Serves Delve's JSON-RPC API (version 2) at -listen and forwards it to the
headless Delve at -upstream, which debugs BIN. Clients that speak that API
("dlv connect", editors, scripts) connect to the proxy instead of Delve and
work in split functions as "splitdbg debug" does: "break file.c:LINE" on a
line whose code was moved to a cold fragment gets an address there, and
stops, backtraces and disassembly in moved code show the logical
function. Every other call goes to Delve unchanged.

  dlv exec --headless --accept-multiclient --api-version=2 --listen=127.0.0.1:4040 BIN
  splitdbg proxy -listen 127.0.0.1:4041 -upstream 127.0.0.1:4040 BIN
  dlv connect 127.0.0.1:4041

The proxy connects to -upstream once at start-up to check that Delve is
there (so Delve needs --accept-multiclient, as for more than one client).
BIN is the program as this machine sees it (splitdbg reads its symbols,
line table and call frame information). Each client connection gets its
own connection to Delve: run Delve with --accept-multiclient to serve more
than one. The first line on standard output is the address the proxy
listens at; it runs until interrupted.

The proxy listens on the loopback interface unless told otherwise, like
Delve: anyone who can connect can run code as you.`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		listen := fs.String("listen", "127.0.0.1:0", "address to serve Delve's API at (port 0: any free port)")
		upstream := fs.String("upstream", "", "address of the headless Delve (its --listen)")
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want BIN")
			}
			if *upstream == "" {
				return usagef("want -upstream ADDR, the address of the headless Delve")
			}
			// Fail now, not at the first client, when Delve is not there.
			probe, err := net.DialTimeout("tcp", *upstream, 5*time.Second)
			if err != nil {
				return fmt.Errorf("no headless Delve at -upstream %s: %w (start it first: dlv exec --headless --accept-multiclient --api-version=2 --listen=%s BIN)", *upstream, err, *upstream)
			}
			probe.Close()
			sessionGC()
			p, err := proxy.New(proxy.Config{
				Upstream:   *upstream,
				Executable: args[0],
				Logf: func(format string, a ...any) {
					fmt.Fprintf(c.stderr, "splitdbg proxy: "+format+"\n", a...)
				},
			})
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", *listen)
			if err != nil {
				return err
			}
			if a, ok := l.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
				fmt.Fprintf(c.stderr, "splitdbg proxy: listening on %s, not a loopback address: connections are neither authenticated nor encrypted, and a client can run any code as you through Delve\n", l.Addr())
			}
			fmt.Fprintf(c.stdout, "splitdbg proxy listening at: %s (Delve at %s)\n", l.Addr(), *upstream)

			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			served := make(chan error, 1)
			go func() { served <- p.Serve(l) }()
			select {
			case <-ctx.Done():
				p.Close()
				<-served
				return nil
			case err := <-served:
				p.Close()
				if errors.Is(err, proxy.ErrClosed) {
					return nil
				}
				return err
			}
		}
	},
}
