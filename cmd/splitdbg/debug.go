package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-delve/delve/pkg/config"
	"github.com/go-delve/delve/pkg/terminal"
	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/debugger"
	"github.com/go-delve/delve/service/rpc2"
	"github.com/go-delve/delve/service/rpccommon"

	"github.com/splitdbg/splitdbg/adapter"
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
"print", "next", "step", "stepout", "list" and "disassemble" work in split
functions (plain Delve 1.27 creates such a breakpoint with no address,
shows ??? frames in moved code and reads no variables there).
Commands may also come on standard input, one per line.

Delve's configuration (~/.config/dlv/config.yml) applies. The kernel must
let this process trace BIN (ptrace).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		return func(c *cli, args []string) error {
			if len(args) < 1 {
				return usagef("want BIN")
			}
			client, stop, err := startDebugger(args[0], args[1:], debugger.Config{})
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

// startDebugger runs Delve's server in process on a loopback listener for
// bin with args and returns splitdbg's client over it, and a function
// that stops both.
func startDebugger(bin string, args []string, dc debugger.Config) (*adapter.Client, func(), error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	dc.Backend, dc.ExecuteKind = "native", debugger.ExecutingExistingFile
	srv := rpccommon.NewServer(&service.Config{
		Listener:    l,
		ProcessArgs: append([]string{abs}, args...),
		APIVersion:  2,
		Debugger:    dc,
	})
	if err := srv.Run(); err != nil {
		l.Close()
		if errors.Is(err, syscall.EPERM) || strings.Contains(err.Error(), "operation not permitted") {
			return nil, nil, fmt.Errorf("%s: the kernel does not let splitdbg trace it (ptrace): %w", bin, err)
		}
		return nil, nil, fmt.Errorf("%s: %w", bin, err)
	}
	conn, err := net.DialTimeout("tcp", l.Addr().String(), 30*time.Second)
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	rpc := rpc2.NewClientFromConn(conn)
	client, err := adapter.New(rpc, abs)
	if err != nil {
		rpc.Detach(true)
		srv.Stop()
		return nil, nil, err
	}
	stop := func() {
		client.Detach(true)
		srv.Stop()
		client.Close()
	}
	return client, stop, nil
}
