// Package objcopy rewrites ELF files with llvm-objcopy, as the ELF
// ecosystem does: it adds splitdbg's sections and strips files at the
// levels splitdbg defines. GNU objcopy is not used: on BOLT outputs its
// --add-section produces executables that crash (TOOLCHAINS.md).
package objcopy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ErrNoTool means no usable llvm-objcopy is installed.
var ErrNoTool = errors.New("llvm-objcopy 15 or later not found (apt-get install llvm-22)")

// minVersion is the oldest llvm-objcopy that keeps BOLT outputs
// runnable: llvm-objcopy 14 --add-section makes them crash.
const minVersion = 15

// Tool returns the path of an llvm-objcopy of version 15 or later: LLVM
// 22's or 19's by name or in their tool directories, else llvm-objcopy on
// PATH if its version is recent enough.
func Tool() (string, error) {
	for _, n := range []string{"llvm-objcopy-22", "/usr/lib/llvm-22/bin/llvm-objcopy", "llvm-objcopy-19", "/usr/lib/llvm-19/bin/llvm-objcopy"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("llvm-objcopy"); err == nil && version(p) >= minVersion {
		return p, nil
	}
	return "", ErrNoTool
}

var versionRe = regexp.MustCompile(`LLVM version (\d+)`)

// version returns the major version llvm-objcopy reports, 0 if unknown.
func version(tool string) int {
	out, err := exec.Command(tool, "--version").Output()
	if err != nil {
		return 0
	}
	m := versionRe.FindSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// Run runs llvm-objcopy with args on in, writing out.
func Run(in, out string, args ...string) error {
	tool, err := Tool()
	if err != nil {
		return err
	}
	cmd := exec.Command(tool, append(args, in, out)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", filepath.Base(tool), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// AddSections writes out as in plus non-allocated sections with the given
// contents, replacing sections of the same names.
func AddSections(in, out string, sections map[string][]byte) error {
	dir, err := os.MkdirTemp("", "splitdbg-objcopy")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names := make([]string, 0, len(sections))
	for n := range sections {
		names = append(names, n)
	}
	sort.Strings(names)
	var args []string
	for i, n := range names {
		f := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := os.WriteFile(f, sections[n], 0o600); err != nil {
			return err
		}
		args = append(args, "--remove-section="+n, "--add-section="+n+"="+f, "--set-section-flags="+n+"=readonly")
	}
	return Run(in, out, args...)
}
