package adapter

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-delve/delve/pkg/config"
	"github.com/go-delve/delve/pkg/terminal"
	"github.com/go-delve/delve/service"
)

// runTerminal drives Delve's own terminal (pkg/terminal) over client, as
// a person at the (dlv) prompt would, and returns what each command
// printed.
func runTerminal(t *testing.T, client service.Client, cmds ...string) []string {
	t.Helper()
	t.Setenv("TERM", "dumb")
	term := terminal.New(client, &config.Config{}, false)
	defer term.Close()
	var out bytes.Buffer
	term.RedirectTo(&out)
	dc := terminal.DebugCommands(client)
	res := make([]string, len(cmds))
	for i, cmd := range cmds {
		out.Reset()
		if err := dc.Call(cmd, term); err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
		}
		res[i] = out.String()
		t.Logf("(dlv) %s\n%s", cmd, res[i])
	}
	return res
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
				rest := bt
				for _, fn := range tc.stack {
					i := strings.Index(rest, fn+"\n")
					if i < 0 {
						t.Errorf("bt lacks %s after the frames before it:\n%s", fn, bt)
						break
					}
					rest = rest[i:]
				}
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

func match(t *testing.T, what, out, re string) {
	t.Helper()
	if !regexp.MustCompile(re).MatchString(out) {
		t.Errorf("%s printed\n%s\nwant match for %s", what, out, re)
	}
}
