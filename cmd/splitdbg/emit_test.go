package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// runCmd runs one command directly, registered or not.
func runCmd(t *testing.T, cmd *command, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	run := cmd.setup(fs)
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = run(&cli{strings.NewReader(""), &out, &errb}, pos)
	}
	return out.String(), errb.String(), err
}

// funcsView is funcs -json without what only DWARF can say: the sources
// and the conflicts between DWARF and symbols.
func funcsView(t *testing.T, bin string) []map[string]any {
	out, _, err := runCmd(t, funcsCmd, "-json", bin)
	if err != nil {
		t.Fatal(err)
	}
	var fs []map[string]any
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		delete(f, "sources")
		delete(f, "conflicts")
		for _, fr := range f["fragments"].([]any) {
			delete(fr.(map[string]any), "sources")
		}
	}
	return fs
}

// TestEmitStrip: after emit and strip --strip-debug, splitdbg reads the
// same split functions and the same cold-line breakpoints from its own
// sections alone, and the program still runs and prints the same.
func TestEmitStrip(t *testing.T) {
	if _, err := objcopy.Tool(); err != nil {
		t.Skip(err)
	}
	for _, name := range testbin.Linked(t) {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			dir := t.TempDir()
			emitted, stripped := filepath.Join(dir, "emitted"), filepath.Join(dir, "stripped")
			if _, _, err := runCmd(t, emitCmd, "-o", emitted, bin); err != nil {
				t.Fatal(err)
			}
			if _, _, err := runCmd(t, stripCmd, "-keep=split", "-o", stripped, emitted); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(funcsView(t, bin), funcsView(t, stripped)); diff != "" {
				t.Errorf("funcs after emit+strip (-original +stripped):\n%s", diff)
			}
			// The stripped file has no DWARF: the lines come from ESL.
			if out, err := exec.Command("readelf", "-S", stripped).Output(); err == nil && bytes.Contains(out, []byte(".debug_line")) {
				t.Fatal("strip left .debug_line")
			}
			for _, spec := range coldSpecs[name] {
				a, _, errA := runCmd(t, breakCmd, "-json", bin, spec)
				b, _, errB := runCmd(t, breakCmd, "-json", stripped, spec)
				if errA != nil || errB != nil || a != b {
					t.Errorf("break %s: original %v %s; stripped %v %s", spec, errA, a, errB, b)
				}
			}
			// readelf -a accepts the rewritten file without complaint.
			if readelf, err := exec.LookPath("readelf"); err == nil {
				cmd := exec.Command(readelf, "-a", emitted)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil || stderr.Len() > 0 {
					t.Errorf("readelf -a %s: %v: %s", name, err, stderr.String())
				}
			}
			for _, arg := range []string{"", "cold"} {
				want, errW := exec.Command(bin, arg).CombinedOutput()
				got, errG := exec.Command(emitted, arg).CombinedOutput()
				if (errW == nil) != (errG == nil) || !bytes.Equal(want, got) {
					t.Errorf("%s %q: the emitted binary prints %q (%v), the original %q (%v)", name, arg, got, errG, want, errW)
				}
			}
		})
	}
}

// coldSpecs are cold lines of the binaries (testdata/README.md).
var coldSpecs = map[string][]string{
	"gcc-cold":        {"main.c:49", "a.c:19", "b.c:16"},
	"clang22-mfs":     {"split.c:31", "split.c:57"},
	"bolt22":          {"bolt.c:34", "bolt.c:58"},
	"bolt22-over-gcc": {"bolt.c:34", "bolt.c:38"},
	"cgo":             {"split.c:25", "split.c:37"},
}
