package proxy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/adapter"
	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// runTerminal drives Delve's own terminal (pkg/terminal, what "dlv
// connect" runs) over client, as a person at the (dlv) prompt would, and
// returns what each command printed, logged after who.
var runTerminal = delvetest.RunTerminal

// TestTerminal runs "dlv connect"'s terminal against the proxy on each
// binary's cold path: break on a cold line, continue, bt, disassemble,
// funcs, next and stepout in moved code, restart and continue again; and
// the same break and continue against Delve directly, which creates the
// breakpoint with no address and runs to the end.
func TestTerminal(t *testing.T) {
	for _, tc := range coldCases {
		t.Run(tc.bin, func(t *testing.T) {
			file, line := coldLine(t, tc.src, tc.marker)
			loc := fmt.Sprintf("%s:%d", file, line)
			at := func(line int) string {
				return regexp.QuoteMeta(tc.fn+"() ") + `\S*` + regexp.QuoteMeta(fmt.Sprintf("%s:%d", tc.file, line))
			}

			up := startDelve(t, tc.bin, "cold")
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			out := runTerminal(t, "proxy", c, "break "+loc, "breakpoints", "continue", "bt", "disassemble",
				"funcs "+regexp.QuoteMeta(tc.fn)+"$", "restart", "continue", "bt", "stepout")
			match(t, "break", out[0], `^Breakpoint 1 set at 0x[0-9a-f]+ for `+at(line)+`\n$`)
			match(t, "breakpoints", out[1], `(?m)^Breakpoint 1 \(enabled\) at 0x[0-9a-f]+ for `+at(line)+` \(0\)$`)
			for _, i := range []int{2, 7} {
				match(t, "continue", out[i], `^> \[Breakpoint 1\] `+at(line))
			}
			for _, i := range []int{3, 8} {
				checkBacktrace(t, out[i], tc, line)
			}
			match(t, "disassemble", out[4], `TEXT `+regexp.QuoteMeta(tc.fn)+`\(SB\)`)
			match(t, "disassemble", out[4], `(?m)^=>\t`+regexp.QuoteMeta(loc)+`\t`)
			if n := strings.Count(out[4], "\n"); n < 10 {
				t.Errorf("disassemble printed %d lines", n)
			}
			match(t, "funcs", out[5], `^`+regexp.QuoteMeta(tc.fn)+`\n$`)
			match(t, "restart", out[6], `^Process restarted with PID \d+\n$`)
			match(t, "stepout", out[9], `^> \S*`+regexp.QuoteMeta(tc.stack[0])+`\(\) `)

			// Plain Delve: a breakpoint with no address, and the program
			// runs to its end.
			p := startDelve(t, tc.bin, "cold")
			pout := runTerminal(t, "plain", p.direct, "break "+loc, "continue")
			match(t, "plain break", pout[0], `^Breakpoint 1 set at 0x0 for :0\n$`)
			match(t, "plain continue", pout[1], `has exited with status 0`)
		})
	}
}

// checkBacktrace checks a bt printed at a cold line: frame 0 names the
// logical function at the line, and the caller frames follow in order.
func checkBacktrace(t *testing.T, bt string, tc coldCase, line int) {
	t.Helper()
	match(t, "bt", bt, `^0  0x[0-9a-f]+ in `+regexp.QuoteMeta(tc.fn)+`\n   at \S*`+regexp.QuoteMeta(fmt.Sprintf("%s:%d", tc.file, line))+`\n`)
	delvetest.CheckBtCallers(t, bt, tc.stack)
}

// TestTerminalHotPath runs one session of commands on each binary's hot
// path in Delve's terminal twice, on two Delves: through the proxy and
// directly. The transcripts must be the same, but for addresses (each
// process has its own load address) and process and thread IDs. At one
// stop it also runs read-only commands in a terminal connected directly
// to the proxy's Delve: their output must be the same to the byte.
func TestTerminalHotPath(t *testing.T) {
	for _, tc := range hotCases {
		t.Run(tc.bin, func(t *testing.T) {
			script := []string{"break " + tc.fn, "continue", "bt", "args", "locals", "next", "next", "step", "bt"}
			finish := []string{"stepout", "print 1+2", "breakpoints", "disassemble -l " + tc.unsplit,
				"sources " + tc.bin, "clear 1", "continue"}
			// Past the C start-up code Delve lists one more unreadable frame
			// at each call: "bt 1" stops before.
			readOnly := []string{"bt 1 -full", "args -v", "locals -v", "regs", "threads", "goroutines", "breakpoints",
				"frame 1 locals", "funcs " + tc.fn, "types ^int$", "libraries", "print 7*6"}
			if tc.fn == tc.unsplit {
				// The proxy disassembles every fragment of a split function.
				readOnly = append(readOnly, "disassemble")
			}

			up := startDelve(t, tc.bin)
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			p := startDelve(t, tc.bin)
			out := runTerminal(t, "proxy", c, script...)
			pout := runTerminal(t, "plain", p.direct, script...)
			same := func(cmds, out, pout []string) {
				t.Helper()
				for i := range cmds {
					if got, want := mask(out[i]), mask(noGoReturnError(pout[i])); got != want && !repairedText(got, want) {
						t.Errorf("(dlv) %s printed\n%s\nthrough the proxy, and\n%s\ndirectly", cmds[i], got, want)
					}
				}
			}
			same(script, out, pout)
			match(t, "continue", out[1], `^> \[Breakpoint 1\] `+regexp.QuoteMeta(tc.fn)+`\(\)`)

			ro := runTerminal(t, "proxy", c, readOnly...)
			dro := runTerminal(t, "direct", up.direct, readOnly...)
			for i, cmd := range readOnly {
				got, want := ro[i], dro[i]
				// Delve lists threads, goroutines and the addresses of a
				// breakpoint in map order.
				got, want = sortAddrLists(got), sortAddrLists(want)
				if cmd == "threads" || cmd == "goroutines" {
					got, want = sortLines(got), sortLines(want)
				}
				if got != want && !repairedText(got, want) {
					t.Errorf("(dlv) %s printed\n%s\nthrough the proxy, and\n%s\ndirectly at the same stop", cmd, got, want)
				}
			}

			out = runTerminal(t, "proxy", c, finish...)
			pout = runTerminal(t, "plain", p.direct, finish...)
			same(finish, out, pout)
			match(t, "continue", out[len(out)-1], `has exited with status 0`)
		})
	}
}

// goReturnError is what Delve prints after stepping out of a C function:
// it reads return values through the goroutine, which a C program has
// none of. The adapter leaves it out (no value, not an error).
var goReturnError = regexp.MustCompile(`Values returned:\n\treturn value read error: "could not get g[^\n]*\n\n`)

// noGoReturnError is Delve's output without goReturnError.
func noGoReturnError(out string) string { return goReturnError.ReplaceAllString(out, "") }

// repairedText reports whether the proxy's output differs from Delve's
// only in variables Delve gave up on, which the proxy shows (the adapter
// reads those it can). A variable is a "name = value" line and the
// indented or continued lines after it.
func repairedText(proxy, plain string) bool {
	pb, db := varBlocks(proxy), varBlocks(plain)
	if len(pb) != len(db) {
		return false
	}
	for i := range db {
		name, _, ok := strings.Cut(db[i], " = ")
		// Both unreadable, for different reasons: Delve lacks a caller's
		// registers, the adapter finds no location there.
		unreadable := strings.HasPrefix(pb[i], name+" = (unreadable ") && strings.HasPrefix(db[i], name+" = (unreadable ")
		if pb[i] != db[i] && !unreadable && (!ok || !adapter.DelveGaveUp(db[i]) || !strings.HasPrefix(pb[i], name+" = ")) {
			return false
		}
	}
	return true
}

var varLine = regexp.MustCompile(`^[A-Za-z_][\w.]* = `)

// varBlocks splits terminal output into variables (see repairedText) and
// other lines.
func varBlocks(out string) []string {
	var blocks []string
	for _, l := range strings.Split(out, "\n") {
		if len(blocks) > 0 && !varLine.MatchString(l) && varLine.MatchString(blocks[len(blocks)-1]) && l != "" {
			blocks[len(blocks)-1] += "\n" + l
			continue
		}
		blocks = append(blocks, l)
	}
	return blocks
}

var addrList = regexp.MustCompile(`0x[0-9a-f]+(,0x[0-9a-f]+)+`)

// sortAddrLists sorts the addresses in each list "0xA,0xB,...".
func sortAddrLists(s string) string {
	return addrList.ReplaceAllStringFunc(s, func(l string) string {
		a := strings.Split(l, ",")
		slices.Sort(a)
		return strings.Join(a, ",")
	})
}

func sortLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`0x[0-9a-f]+`), "0x?"},
	{regexp.MustCompile(`(Process|Thread|PID) \d+`), "$1 ?"},
}

// mask hides what differs between two runs of one program.
func mask(s string) string {
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

// match reports an error unless what printed out matching re.
var match = delvetest.Match
