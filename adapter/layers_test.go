package adapter

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/rpc2"
)

// TestLayers checks the shape DESIGN.md draws, as "go list -deps" shows
// it: the core imports no protocol (DAP, Delve's JSON-RPC), and no door
// imports another door.
func TestLayers(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	deps := func(pkg string) []string {
		out, err := exec.Command(goCmd, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	const mod = "github.com/splitdbg/splitdbg/"
	protocols := []string{"github.com/google/go-dap", "github.com/go-delve/delve/service/rpc2", "github.com/go-delve/delve/service/rpccommon", "github.com/go-delve/delve/service/dap", "net/rpc"}
	for _, d := range deps(mod + "adapter") {
		for _, p := range protocols {
			if d == p || strings.HasPrefix(d, p+"/") {
				t.Errorf("the core (adapter) depends on the protocol package %s", d)
			}
		}
	}
	doors := []string{mod + "adapter/dap", mod + "adapter/proxy"}
	for _, door := range doors {
		for _, d := range deps(door) {
			for _, other := range doors {
				if other != door && d == other {
					t.Errorf("door %s imports door %s", door, other)
				}
			}
		}
	}
}

// TestExamineLimit keeps the core's copy of Delve's limit on one
// ExamineMemory call equal to Delve's.
func TestExamineLimit(t *testing.T) {
	if examineLimit != rpc2.ExamineMemoryLengthLimit {
		t.Errorf("examineLimit = %d, Delve's ExamineMemoryLengthLimit = %d", examineLimit, rpc2.ExamineMemoryLengthLimit)
	}
}
