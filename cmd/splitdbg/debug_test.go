package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestMain lets a test run this very binary as the splitdbg command: with
// SPLITDBG_MAIN=1 it is splitdbg.
func TestMain(m *testing.M) {
	if os.Getenv("SPLITDBG_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestDebugCommand drives "splitdbg debug" as a person would, typing
// commands on its standard input, and checks what Delve's terminal prints
// on the demo binary's cold path: the stop, the backtrace, the disassembly
// and the arguments of scale, in scale.cold, which plain Delve cannot
// read ("unable to find function context").
func TestDebugCommand(t *testing.T) {
	bin := testbin.Path(t, "demo")
	cmd := exec.Command(os.Args[0], "debug", bin, "--", "cold")
	cmd.Env = append(os.Environ(), "SPLITDBG_MAIN=1", "TERM=dumb")
	cmd.Stdin = strings.NewReader("break demo.c:25\ncontinue\nbt\ndisassemble\nargs\nprint x * 1\nprint k\nexit\n")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "ptrace") || strings.Contains(text, "operation not permitted") {
		t.Skipf("the kernel does not let this process trace: %s", text)
	}
	if err != nil {
		t.Fatalf("splitdbg debug: %v\n%s", err, text)
	}
	// The COLD-LINE of scale is demo.c:25, in scale.cold.
	for _, want := range []string{
		`Breakpoint 1 set at 0x[0-9a-f]+ for C\.scale\(\) demo/demo\.c:25`,
		`> \[Breakpoint 1\] C\.scale\(\) demo/demo\.c:25`,
		`(?m)(^|\(dlv\) )0  0x[0-9a-f]+ in (\x1b\[1m)?C\.scale`,
		`(?m)^1  0x[0-9a-f]+ in (\x1b\[1m)?C\.main`,
		`TEXT C\.scale\(SB\)`,
		// scale(7, 0): sum(1, 2, -3, 4) skipping the negative element.
		`(?m)^(\(dlv\) )?x = 7\nk = 0\n`,
		`(?m)^(\(dlv\) )?7\n(\(dlv\) )?0\n`, // print x * 1, print k
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("output lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "unable to find function context") {
		t.Errorf("Delve's error reached the terminal:\n%s", text)
	}
	if strings.Contains(text, "??? at ?:-1\n1") {
		t.Errorf("frame 0 is unnamed:\n%s", text)
	}
}

// TestDebugStackBottom checks the frames below main at a stop in moved
// code: with glibc's debug file installed they are named as "dlv exec"
// names them (__libc_start_call_main, __libc_start_main_impl), not "0x0
// in ???".
func TestDebugStackBottom(t *testing.T) {
	glibc(t)
	for _, name := range []string{"demo", "clang22-mfs"} {
		bin := testbin.Path(t, name)
		loc := map[string]string{"demo": "demo.c:25", "clang22-mfs": "split.c:31"}[name]
		cmd := exec.Command(os.Args[0], "debug", bin, "--", "cold")
		cmd.Env = append(os.Environ(), "SPLITDBG_MAIN=1", "TERM=dumb")
		cmd.Stdin = strings.NewReader("break " + loc + "\ncontinue\nbt\nexit\n")
		out, err := cmd.CombinedOutput()
		text := string(out)
		if strings.Contains(text, "operation not permitted") {
			t.Skipf("the kernel does not let this process trace: %s", text)
		}
		if err != nil {
			t.Fatalf("splitdbg debug %s: %v\n%s", name, err, text)
		}
		want := `(?s)in (\x1b\[1m)?C\.main.*\n2  0x[0-9a-f]+ in (\x1b\[1m)?C\.__libc_start_call_main.*\n3  0x[0-9a-f]+ in (\x1b\[1m)?C\.__libc_start_main_impl`
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("%s: bt lacks the C library's frames below main:\n%s", name, text)
		}
		if regexp.MustCompile(`0x0000000000000000 in|NULL address`).MatchString(text) {
			t.Errorf("%s: bt has a frame at address 0:\n%s", name, text)
		}
	}
}
