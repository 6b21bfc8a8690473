package dap

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestNodeDebugClient drives a server per cold case with the DebugClient
// of @vscode/debugadapter-testsupport (testdata/node/dap.test.js), the
// client VS Code's debug adapters are tested with: hitBreakpoint on the
// cold line, frame 0 named by the logical function, variables, the
// disassembly and the run to the end.
func TestNodeDebugClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (.ci/run installs nodejs and npm)")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "node"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@vscode", "debugadapter-testsupport")); err != nil {
		t.Skip("@vscode/debugadapter-testsupport is not installed: run npm ci in adapter/dap/testdata/node (.ci/run does)")
	}
	type nodeCase struct {
		Name    string `json:"name"`
		Port    int    `json:"port"`
		Program string `json:"program"`
		Path    string `json:"path"`
		Line    int    `json:"line"`
		Fn      string `json:"fn"`
		Vars    bool   `json:"vars"`
	}
	var cases []nodeCase
	for _, tc := range coldCases {
		bin := testbin.Path(t, tc.bin)
		path, line := editorPath(t, bin, tc)
		addr := serve(t)
		_, port, _ := strings.Cut(addr, ":")
		p, _ := strconv.Atoi(port)
		cases = append(cases, nodeCase{tc.bin, p, bin, path, line, tc.fn, tc.bin != "bolt22-over-gcc"})
	}
	js, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(f, js, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "dap.test.js"), f)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("node dap.test.js: %v", err)
	}
	if n := strings.Count("\n"+string(out), "\nok "); n != len(cases) {
		t.Errorf("%d of %d cases passed", n, len(cases))
	}
}
