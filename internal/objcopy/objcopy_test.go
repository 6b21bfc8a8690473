package objcopy

import (
	"os/exec"
	"testing"
)

// TestToolIsRecent: the tool found keeps BOLT outputs runnable (15+).
func TestToolIsRecent(t *testing.T) {
	p, err := Tool()
	if err != nil {
		t.Skip(err)
	}
	if v := version(p); v < minVersion {
		t.Errorf("%s is version %d", p, v)
	}
	if _, err := exec.LookPath("llvm-objcopy-14"); err == nil && version("llvm-objcopy-14") != 14 {
		t.Errorf("version parsing: llvm-objcopy-14 reports %d", version("llvm-objcopy-14"))
	}
}
