package main

import (
	"flag"
	"path/filepath"
	"strings"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// addBinFlags defines the flags of every command that reads a binary:
// -debug-file-directory, where separate debug files are looked for. The
// directories start as the default for each command run.
func addBinFlags(fs *flag.FlagSet, cmd *command) {
	elfx.DebugDirs = []string{elfx.DefaultDebugDir}
	if !strings.Contains(cmd.args, "BIN") {
		return
	}
	fs.Var(&debugDirs{}, "debug-file-directory",
		"look for separate debug files of a stripped BIN under `DIR` (repeatable, or DIR:DIR...; replaces the default /usr/lib/debug)")
}

// debugDirs is the -debug-file-directory flag: the first use replaces
// elfx.DebugDirs, later ones add to it.
type debugDirs struct{ set bool }

func (d *debugDirs) String() string { return "" }

func (d *debugDirs) Set(v string) error {
	if !d.set {
		elfx.DebugDirs, d.set = nil, true
	}
	for _, dir := range filepath.SplitList(v) {
		if dir != "" {
			elfx.DebugDirs = append(elfx.DebugDirs, dir)
		}
	}
	return nil
}
