package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/splitdbg/splitdbg/esl"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/linetable"
)

var eslCmd = &command{
	name:    "esl",
	args:    "[-json] BIN [ENTRY]",
	summary: "dump the Extended Source Location rows of BIN",
	help: `
Decodes the .splitdbg.esl section that "splitdbg emit" writes and prints
every procedure's rows as its program gives them (fragments in logical
order, each ended by an end_sequence row), or only the procedure whose
entry address is ENTRY (found through the section's index, without a
scan).`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(c *cli, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("want BIN and an optional ENTRY")
			}
			f, err := elfx.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			data, sec, err := f.SectionData(esl.SectionName)
			if err != nil {
				return err
			}
			if sec == nil {
				return fmt.Errorf("%s: no %s section (splitdbg emit writes one)", args[0], esl.SectionName)
			}
			t, err := esl.Parse(esl.SectionName, data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			var procs []esl.Proc
			if len(args) == 2 {
				entry, err := linetable.ParseAddr(args[1])
				if err != nil {
					return usagef("%v", err)
				}
				p, ok, err := t.Find(entry)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if !ok {
					return fmt.Errorf("%s: no procedure at %#x in %s", args[0], entry, esl.SectionName)
				}
				procs = append(procs, p)
			} else {
				for p, err := range t.Procs() {
					if err != nil {
						return fmt.Errorf("%s: %w", args[0], err)
					}
					procs = append(procs, p)
				}
			}
			type jsonRow struct {
				Addr        uint64 `json:"addr"`
				File        string `json:"file"`
				Line        uint32 `json:"line"`
				Column      uint32 `json:"column"`
				IsStmt      bool   `json:"is_stmt"`
				EndSequence bool   `json:"end_sequence,omitempty"`
			}
			type jsonProc struct {
				Entry uint64    `json:"entry"`
				Rows  []jsonRow `json:"rows"`
			}
			var out []jsonProc
			for _, p := range procs {
				jp := jsonProc{Entry: p.Entry(), Rows: []jsonRow{}}
				for r, err := range p.Rows() {
					if err != nil {
						return fmt.Errorf("%s: %w", args[0], err)
					}
					jr := jsonRow{Addr: r.Address, Line: r.Line, Column: r.Column, IsStmt: r.IsStmt, EndSequence: r.EndSequence}
					if !r.EndSequence && int(r.File) < len(p.Files) {
						jr.File = p.Files[r.File]
					}
					jp.Rows = append(jp.Rows, jr)
				}
				out = append(out, jp)
			}
			if *asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			for _, p := range out {
				fmt.Fprintf(c.stdout, "procedure %#x\n", p.Entry)
				for _, r := range p.Rows {
					if r.EndSequence {
						fmt.Fprintf(c.stdout, "  %#x  end of fragment\n", r.Addr)
						continue
					}
					stmt := ""
					if r.IsStmt {
						stmt = " stmt"
					}
					fmt.Fprintf(c.stdout, "  %#x  %s:%d:%d%s\n", r.Addr, r.File, r.Line, r.Column, stmt)
				}
			}
			return nil
		}
	},
}
