// Package splitinfo rebuilds the logical functions (procedures) of an ELF
// file whose optimizer split them into fragments, and answers the
// consumer questions of the split-procedure proposal (seed 003, "Consumer
// Tasks"): which procedure an address belongs to in any fragment
// (address_to_procedure), a procedure's total size (sp_size) and its code
// ranges in logical order (sp_ranges).
//
// A Table is built once from every source of evidence the file carries
// (sp_init): the ELF symbol table's naming conventions (foo.cold,
// foo.cold.N, foo.warm, foo.part.N, foo.__part.N) and DWARF subprograms
// (DW_AT_ranges, DW_AT_low_pc/DW_AT_high_pc, DWARF 2 to 5). The entry of a
// procedure is always its ELF symbol, never the first or lowest DWARF
// range. Where the sources disagree the Table keeps the better evidence
// and records the disagreement as a Conflict.
//
// For each moved fragment the Table also finds, by decoding the x86-64
// code of the other fragments, every branch that reaches it: the seed's
// split record split_info{branch_addr, vaddr, size}.
package splitinfo

import (
	"debug/dwarf"
	"fmt"
	"iter"
	"strings"
)

// Kind says what a fragment is.
type Kind uint8

const (
	// Hot is the fragment that holds the entry.
	Hot Kind = iota
	// Cold is moved unlikely code: foo.cold, foo.cold.N.
	Cold
	// Warm is foo.warm.
	Warm
	// Part is a basic-block-section part (foo.__part.N), a GCC partial
	// inlining part (foo.part.N), or a range known only from DWARF.
	Part
)

var kindNames = [...]string{Hot: "hot", Cold: "cold", Warm: "warm", Part: "part"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Source is a set of evidence sources.
type Source uint16

const (
	// FromSymbols is the ELF symbol table.
	FromSymbols Source = 1 << iota
	// FromDWARF is .debug_info subprograms.
	FromDWARF
	// FromBBAddrMap is LLVM's SHT_LLVM_BB_ADDR_MAP.
	FromBBAddrMap
	// FromBAT is BOLT address translation (.note.bolt_bat).
	FromBAT
	// FromMIP is a Machine IR Profile map section.
	FromMIP
	// FromNative is splitdbg's own split-procedure record section.
	FromNative
)

// Names returns the names of the sources in s, in a fixed order.
func (s Source) Names() []string {
	var out []string
	for bit := Source(1); bit != 0 && bit <= s; bit <<= 1 {
		if s&bit != 0 {
			out = append(out, bit.name())
		}
	}
	return out
}

// name returns the name of the one source s.
func (s Source) name() string {
	switch s {
	case FromSymbols:
		return "symbols"
	case FromDWARF:
		return "dwarf"
	}
	for _, src := range splitSources {
		if src.bit == s {
			return src.name
		}
	}
	return fmt.Sprintf("Source(%#x)", uint16(s))
}

func (s Source) String() string { return strings.Join(s.Names(), "+") }

// Range is a half-open address range [Start, End).
type Range struct {
	Start, End uint64
}

// Len returns End - Start.
func (r Range) Len() uint64 { return r.End - r.Start }

// Contains reports whether addr is in r.
func (r Range) Contains(addr uint64) bool { return addr >= r.Start && addr < r.End }

// Fragment is one contiguous address range of a procedure.
type Fragment struct {
	Range
	// Symbol is the ELF symbol that starts the fragment, "" if none.
	Symbol string
	Kind   Kind
	// BranchAddr is the branch in the rest of the procedure through which
	// the logical flow reaches this fragment (the seed's branch_addr): the
	// first site in logical order. 0 for the entry fragment, or when no
	// direct branch reaches it (jump tables, landing pads, non-x86 code).
	BranchAddr uint64
	// BranchSites lists every direct jump, conditional jump or call in the
	// other fragments of the procedure that targets this fragment, in
	// address order.
	BranchSites []uint64
	// Sources are the sources that place this fragment in its procedure.
	Sources Source
	// Subprogram is the offset in .debug_info of the DWARF subprogram
	// whose ranges hold the fragment (normally the procedure's own), 0 if
	// none does: where a debugger finds the variables of code in it.
	Subprogram dwarf.Offset
}

// SplitRecord is the seed's split_info{branch_addr, vaddr, size}.
type SplitRecord struct {
	BranchAddr uint64
	VAddr      uint64
	Size       uint64
}

// VAddr returns where the fragment's code lives (split_info.vaddr).
func (f *Fragment) VAddr() uint64 { return f.Start }

// Size returns the fragment's length (split_info.size).
func (f *Fragment) Size() uint64 { return f.End - f.Start }

// Record returns the fragment's split record.
func (f *Fragment) Record() SplitRecord {
	return SplitRecord{BranchAddr: f.BranchAddr, VAddr: f.Start, Size: f.End - f.Start}
}

// Conflict records a disagreement between sources about a procedure.
type Conflict struct {
	Addr   uint64 // the address the disagreement is about
	Detail string
}

// Proc is a procedure: one source-level function and all its fragments.
type Proc struct {
	// Name is the ELF symbol at the entry (the linkage name); for a
	// procedure known only from DWARF, its DWARF name.
	Name string
	// Aliases are other symbol names at the entry.
	Aliases []string
	// SourceName is the DWARF DW_AT_name (through DW_AT_abstract_origin
	// and DW_AT_specification), "" without DWARF.
	SourceName string
	// Entry is the address of the entry symbol.
	Entry uint64
	// CompUnit is the compile unit: the DWARF DW_AT_name of the unit, or
	// the STT_FILE symbol for a local symbol without DWARF.
	CompUnit string
	// File and Line are the declaration (DW_AT_decl_file, DW_AT_decl_line).
	File string
	Line int
	// Fragments are in logical order; Fragments[0] holds the entry.
	Fragments []Fragment
	// Sources are all the sources that contributed to the procedure.
	Sources Source
	// Conflicts lists disagreements between the sources.
	Conflicts []Conflict
	// Local reports a file-local (static) entry symbol.
	Local bool
}

// Split reports whether the procedure has more than one fragment.
func (p *Proc) Split() bool { return len(p.Fragments) > 1 }

// Size returns the total size of all fragments (the seed's sp_size).
func (p *Proc) Size() uint64 {
	var n uint64
	for i := range p.Fragments {
		n += p.Fragments[i].Len()
	}
	return n
}

// Ranges yields the procedure's code ranges in logical order (the seed's
// sp_ranges).
func (p *Proc) Ranges() iter.Seq[Range] {
	return func(yield func(Range) bool) {
		for i := range p.Fragments {
			if !yield(p.Fragments[i].Range) {
				return
			}
		}
	}
}

// Fragment returns the index of the fragment containing addr, or -1.
func (p *Proc) Fragment(addr uint64) int {
	for i := range p.Fragments {
		if p.Fragments[i].Contains(addr) {
			return i
		}
	}
	return -1
}

// LogicalOffset returns the offset of addr within the procedure's
// fragments concatenated in logical order.
func (p *Proc) LogicalOffset(addr uint64) (uint64, bool) {
	var base uint64
	for i := range p.Fragments {
		f := &p.Fragments[i]
		if f.Contains(addr) {
			return base + addr - f.Start, true
		}
		base += f.Len()
	}
	return 0, false
}

// HasName reports whether name names the procedure: its symbol, an alias,
// its DWARF name, or the cgo view "C.name" of any of those.
func (p *Proc) HasName(name string) bool {
	if p.hasName(name) {
		return true
	}
	c, ok := strings.CutPrefix(name, "C.")
	return ok && p.hasName(c)
}

func (p *Proc) hasName(name string) bool {
	if name == "" {
		return false
	}
	if name == p.Name || name == p.SourceName {
		return true
	}
	for _, a := range p.Aliases {
		if a == name {
			return true
		}
	}
	return false
}
