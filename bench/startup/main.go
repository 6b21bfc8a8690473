//go:build ignore

// startup measures the start-up of splitdbg's debugger doors against
// plain Delve's (issue 19: at most 1.2x of dlv exec), on each BIN, in
// interleaved rounds:
//
//	debug: splitdbg debug BIN <<< exit     dlv exec --allow-non-terminal-interactive=true BIN <<< exit
//	dap:   splitdbg dap                    dlv dap
//	       initialize, launch {mode: exec, program: BIN, stopOnEntry: true},
//	       then disconnect {terminateDebuggee: true}
//
// "debug" is the process from start to exit (the prompt, then exit), as
// bench/scale.sh's debug group; "dap" is wall from the process's start
// to the launch response, and the CPU and peak RSS of the whole process
// (to its exit after the disconnect). CPU is user+sys of GNU time's
// child, peak RSS GNU time's %M (see bench/scale/main.go, timed, for why
// not wait4's). Several splitdbg builds may be given (-splitdbg
// NAME=PATH, repeatable: a before and an after in the same run); each
// is compared with dlv. Prints a Markdown table of the medians.
//
//	go run bench/startup/main.go -splitdbg after=SD -dlv DLV [-runs 5] BIN...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type tool struct{ name, path string }

type tools []tool

func (t *tools) String() string { return fmt.Sprint(*t) }
func (t *tools) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok {
		name, path = "splitdbg", s
	}
	*t = append(*t, tool{name, path})
	return nil
}

var (
	sds     tools
	dlv     = flag.String("dlv", "", "dlv binary (Delve)")
	runs    = flag.Int("runs", 5, "rounds")
	doors   = flag.String("doors", "debug,dap", "doors to measure")
	gnuTime = flag.String("time", "/usr/bin/time", "GNU time, for the peak RSS")
	timeout = flag.Duration("timeout", 5*time.Minute, "longest one process may run")
)

type sample struct{ wall, cpu, rss float64 } // s, s, MiB

func main() {
	flag.Var(&sds, "splitdbg", "splitdbg binary, as NAME=PATH (repeatable)")
	flag.Parse()
	if len(sds) == 0 || *dlv == "" || flag.NArg() == 0 {
		log.Fatal("usage: startup -splitdbg [NAME=]SD... -dlv DLV [-runs N] BIN...")
	}
	all := append(tools{{"dlv", *dlv}}, sds...)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load before: %s\n", strings.Join(strings.Fields(string(load))[:3], " "))
	for _, bin := range flag.Args() {
		for _, door := range strings.Split(*doors, ",") {
			got := map[string][]sample{}
			for r := range *runs {
				for i := range all {
					t := all[(i+r)%len(all)] // rotate the order each round
					s, err := measure(door, t, bin)
					if err != nil {
						log.Fatalf("%s %s %s: %v", t.name, door, bin, err)
					}
					got[t.name] = append(got[t.name], s)
				}
			}
			ref := median(got["dlv"])
			fmt.Printf("\n%s, %s (medians of %d)\n\n| tool | wall s | CPU s | peak RSS MiB | / dlv (wall, CPU, RSS) |\n|---|---:|---:|---:|---|\n", filepath.Base(filepath.Dir(bin))+"/"+filepath.Base(bin), door, *runs)
			for _, t := range all {
				m := median(got[t.name])
				fmt.Printf("| %s | %.3f | %.3f | %.0f | %.2f, %.2f, %.2f |\n", t.name, m.wall, m.cpu, m.rss, m.wall/ref.wall, m.cpu/ref.cpu, m.rss/ref.rss)
			}
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload after: %s\n", strings.Join(strings.Fields(string(load))[:3], " "))
}

func median(ss []sample) sample {
	med := func(get func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = get(s)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return sample{med(func(s sample) float64 { return s.wall }), med(func(s sample) float64 { return s.cpu }), med(func(s sample) float64 { return s.rss })}
}

// measure runs one door of t on bin once.
func measure(door string, t tool, bin string) (sample, error) {
	var args []string
	switch {
	case door == "debug" && t.name == "dlv":
		args = []string{"exec", "--allow-non-terminal-interactive=true", bin}
	case door == "debug":
		args = []string{"debug", bin}
	case door == "dap":
		args = []string{"dap", "--listen=127.0.0.1:0"}
	default:
		return sample{}, fmt.Errorf("unknown door %q", door)
	}
	rssFile, err := os.CreateTemp("", "startup-rss")
	if err != nil {
		return sample{}, err
	}
	rssFile.Close()
	defer os.Remove(rssFile.Name())
	cmd := exec.Command(*gnuTime, append([]string{"-o", rssFile.Name(), "-f", "%M", t.path}, args...)...)
	var stdout io.Reader
	if door == "debug" {
		cmd.Stdin = strings.NewReader("exit\n")
	} else {
		p, err := cmd.StdoutPipe()
		if err != nil {
			return sample{}, err
		}
		stdout = p
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	timer := time.AfterFunc(*timeout, func() { cmd.Process.Kill() })
	defer timer.Stop()
	var wall time.Duration
	if door == "dap" {
		if wall, err = dapSession(stdout, bin, t0); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return sample{}, err
		}
		go io.Copy(io.Discard, stdout)
	}
	if err := cmd.Wait(); err != nil {
		return sample{}, err
	}
	if door == "debug" {
		wall = time.Since(t0)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	b, err := os.ReadFile(rssFile.Name())
	if err != nil {
		return sample{}, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return sample{}, fmt.Errorf("no RSS from %s", *gnuTime)
	}
	kib, err := strconv.ParseFloat(f[len(f)-1], 64)
	if err != nil {
		return sample{}, err
	}
	return sample{wall.Seconds(), cpu.Seconds(), kib / 1024}, nil
}

// dapSession connects to the DAP server that prints its address on
// stdout, launches bin stopped on entry, and disconnects; it returns the
// time from t0 to the launch response.
func dapSession(stdout io.Reader, bin string, t0 time.Time) (time.Duration, error) {
	br := bufio.NewReader(stdout)
	var addr string
	for addr == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("no listening address: %v", err)
		}
		if _, a, ok := strings.Cut(line, "listening at: "); ok {
			addr = strings.TrimSpace(a)
		}
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	seq := 0
	call := func(command string, args any) error {
		seq++
		body, _ := json.Marshal(map[string]any{"seq": seq, "type": "request", "command": command, "arguments": args})
		if _, err := fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			return err
		}
		for {
			msg, err := readMessage(rd)
			if err != nil {
				return fmt.Errorf("%s: %v", command, err)
			}
			if msg.Type == "response" && msg.RequestSeq == seq {
				if !msg.Success {
					return fmt.Errorf("%s failed: %s", command, msg.Message)
				}
				return nil
			}
		}
	}
	if err := call("initialize", map[string]any{"adapterID": "go", "clientID": "startup", "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path"}); err != nil {
		return 0, err
	}
	if err := call("launch", map[string]any{"mode": "exec", "program": bin, "stopOnEntry": true}); err != nil {
		return 0, err
	}
	wall := time.Since(t0)
	return wall, call("disconnect", map[string]any{"terminateDebuggee": true})
}

type message struct {
	Type       string `json:"type"`
	RequestSeq int    `json:"request_seq"`
	Success    bool   `json:"success"`
	Message    string `json:"message"`
}

func readMessage(r *bufio.Reader) (message, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return message{}, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 || n > 1<<26 {
		return message{}, fmt.Errorf("bad Content-Length %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return message{}, err
	}
	var m message
	return m, json.Unmarshal(body, &m)
}
