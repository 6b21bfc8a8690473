// Package session starts the Delve a debugger door works with: Delve's
// debugger run in this process for a program it launches or a process it
// attaches to, called directly (package inproc: what Delve's JSON-RPC v2
// client asks, without the encoding), wrapped in the split-aware core
// (package adapter).
//
// The core itself speaks no protocol: it takes any service.Client. This
// package is where the in-process client is chosen, once for every door;
// splitdbg proxy gives the core Delve's rpc2 client to a remote Delve.
package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/debugger"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/adapter/session/inproc"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/precheck"
)

// Config says what to debug: a program to launch (Program, Args, Dir,
// Env) or a running process (Pid).
type Config struct {
	// Program is the executable to launch; with Pid set, the executable
	// of that process (read from /proc when empty).
	Program string
	Args    []string
	// Dir is the working directory of a launched program ("" keeps ours).
	Dir string
	// Env holds NAME=VALUE entries added to (or replacing) our environment
	// for a launched program.
	Env []string
	// Pid is a process to attach to instead of launching.
	Pid int
	// Stdout and Stderr receive a launched program's output (nil: ours).
	Stdout, Stderr *os.File
	// DebugInfoDirectories are where Delve looks for separate debug files
	// by build ID; nil means the build-id directories under splitdbg's
	// debug file directories (gdb's /usr/lib/debug), as "dlv exec" does by
	// default, so the C library's frames are named when its debug file is
	// installed.
	DebugInfoDirectories []string
}

// Session is a Delve debugger running in this process and the core's
// client over it.
type Session struct {
	// Client is the split-aware client of the core.
	Client *adapter.Client
	// Attached reports a session that attached to a running process.
	Attached bool
	// Pid is the debugged process's ID.
	Pid     int
	dc      *inproc.Client
	once    sync.Once
	stopErr error
}

// envMu serializes launches that change the process environment: Delve
// starts the debuggee with this process's environment.
var envMu sync.Mutex

// Start launches cfg.Program, or attaches to cfg.Pid, under Delve. The
// target is stopped at its entry (launch) or where it was (attach).
func Start(cfg Config) (*Session, error) {
	dirs := cfg.DebugInfoDirectories
	if dirs == nil {
		for _, d := range elfx.DebugDirs {
			dirs = append(dirs, filepath.Join(d, ".build-id"))
		}
	}
	dconf := debugger.Config{
		Backend:              "native",
		WorkingDir:           cfg.Dir,
		DebugInfoDirectories: dirs,
	}
	if cfg.Stdout != nil {
		dconf.Stdout = proc.OutputRedirect{File: cfg.Stdout}
	}
	if cfg.Stderr != nil {
		dconf.Stderr = proc.OutputRedirect{File: cfg.Stderr}
	}
	var args []string
	exe := cfg.Program
	if cfg.Pid > 0 {
		dconf.AttachPid = cfg.Pid
		if exe == "" {
			p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cfg.Pid))
			if err != nil {
				return nil, fmt.Errorf("process %d: %w", cfg.Pid, err)
			}
			exe = p
		}
	} else {
		if exe == "" {
			return nil, errors.New("no program to launch")
		}
		abs, err := filepath.Abs(exe)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(abs); err != nil {
			return nil, err
		} else if st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory, not a program", exe)
		}
		exe = abs
		dconf.ExecuteKind = debugger.ExecutingExistingFile
		args = append([]string{abs}, cfg.Args...)
	}
	if err := check(exe); err != nil {
		return nil, err
	}
	var dc *inproc.Client
	err := withEnv(cfg.Env, func() (err error) {
		dc, err = inproc.New(&service.Config{ProcessArgs: args, APIVersion: 2, Debugger: dconf})
		return err
	})
	if err != nil {
		if errors.Is(err, syscall.EPERM) || strings.Contains(err.Error(), "operation not permitted") {
			return nil, fmt.Errorf("%s: the kernel does not let splitdbg trace it (ptrace): %w", exe, err)
		}
		return nil, fmt.Errorf("%s: %w", exe, err)
	}
	client, err := adapter.New(dc, exe)
	if err != nil {
		dc.Stop()
		return nil, err
	}
	return &Session{Client: client, Attached: cfg.Pid > 0, Pid: dc.ProcessPid(), dc: dc}, nil
}

// check refuses an executable whose call frame information or line
// programs would crash Delve's readers (they panic on some damaged
// entries, before any of splitdbg's code could step in), naming the
// section and offset. A file that is no ELF file is Delve's to refuse.
func check(exe string) error {
	f, err := elfx.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	if err := precheck.Check(f); err != nil {
		return fmt.Errorf("%w (Delve's DWARF readers would crash on this; not debugging it)", err)
	}
	return nil
}

// withEnv runs f with env applied to this process's environment, and
// restores it after.
func withEnv(env []string, f func() error) error {
	if len(env) == 0 {
		return f()
	}
	envMu.Lock()
	defer envMu.Unlock()
	saved := os.Environ()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	defer func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	}()
	return f()
}

// Kill ends the debugged process with SIGKILL, whatever Delve is doing;
// the command that runs it then returns with its exit.
func (s *Session) Kill() error {
	if s.Pid <= 0 {
		return nil
	}
	return syscall.Kill(s.Pid, syscall.SIGKILL)
}

// Stop detaches Delve — killing a launched program when kill is set, and
// never an attached one unless kill is set — and stops the debugger.
// Later calls do nothing and return the first call's error.
func (s *Session) Stop(kill bool) error {
	s.once.Do(func() {
		err := s.Client.Detach(kill)
		s.dc.Stop()
		s.stopErr = err
	})
	return s.stopErr
}
