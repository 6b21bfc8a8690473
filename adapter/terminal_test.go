package adapter

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/go-delve/delve/service"

	"github.com/splitdbg/splitdbg/internal/delvetest"
)

// runTerminal drives Delve's own terminal (pkg/terminal) over client, as
// a person at the (dlv) prompt would, and returns what each command
// printed.
func runTerminal(t *testing.T, client service.Client, cmds ...string) []string {
	t.Helper()
	return delvetest.RunTerminal(t, "", client, cmds...)
}

// TestTerminal runs break on a cold line, continue, bt, disassemble,
// restart and continue again in Delve's terminal over the Client, and the
// same break and continue over plain Delve.
func TestTerminal(t *testing.T) {
	cases := []struct {
		bin, src, marker, fn, file string
		stack                      []string
	}{
		{"demo", "demo/demo.c", "scale", "C.scale", "demo/demo.c", []string{"C.main"}},
		{"cgo", "cgo/split.c", "c_classify", "C.c_classify", "cgoprog/split.c",
			[]string{"_Cfunc_c_classify", "runtime.asmcgocall", "runtime.cgocall", "main.main"}},
	}
	for _, tc := range cases {
		t.Run(tc.bin, func(t *testing.T) {
			file, line := coldLine(t, tc.src, tc.marker)
			loc := spec(file, line)
			at := regexp.QuoteMeta(tc.fn+"() ") + `\S*` + regexp.QuoteMeta(fmt.Sprintf("%s:%d", tc.file, line))

			s := startDelve(t, tc.bin, "cold")
			out := runTerminal(t, s.client, "break "+loc, "continue", "bt", "disassemble", "break +1", "restart", "continue", "bt")
			match(t, "break", out[0], `^Breakpoint 1 set at 0x[0-9a-f]+ for .*`+at+`\n$`)
			match(t, "continue", out[1], `^> \[Breakpoint 1\] .*`+at)
			for _, bt := range []string{out[2], out[7]} {
				match(t, "bt", bt, `^0  0x[0-9a-f]+ in `+regexp.QuoteMeta(tc.fn)+`\n   at .*`+regexp.QuoteMeta(fmt.Sprintf("%s:%d", tc.file, line)))
				delvetest.CheckBtCallers(t, bt, tc.stack)
			}
			match(t, "disassemble", out[3], `TEXT `+regexp.QuoteMeta(tc.fn)+`\(SB\)`)
			match(t, "disassemble", out[3], `(?m)^=>\t`+regexp.QuoteMeta(loc)+`\t`)
			match(t, "break +1", out[4], `^Breakpoint 2 set at 0x[0-9a-f]+ for `+regexp.QuoteMeta(tc.fn+"() ")+`\S*`+regexp.QuoteMeta(fmt.Sprintf("%s:%d", tc.file, line+1))+`\n$`)
			match(t, "restart + continue", out[6], `^> \[Breakpoint 1\] .*`+at)
			if out[1] == out[6] {
				t.Logf("the restarted process stopped at the same address")
			}

			// Plain Delve: a breakpoint with no address, and the program
			// runs to its end.
			p := startDelve(t, tc.bin, "cold")
			pout := runTerminal(t, p.plain, "break "+loc, "continue")
			match(t, "plain break", pout[0], `^Breakpoint 1 set at 0x0 for :0\n$`)
			match(t, "plain continue", pout[1], `has exited with status 0`)
		})
	}
}

// match reports an error unless what printed out matching re.
var match = delvetest.Match
