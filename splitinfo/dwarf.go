package splitinfo

import (
	"debug/dwarf"
	"fmt"
	"path"

	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
)

// dwarfFunc is a DW_TAG_subprogram with code.
type dwarfFunc struct {
	off     dwarf.Offset
	name    string // DW_AT_name, through abstract_origin/specification
	linkage string // DW_AT_linkage_name
	cu      string
	file    string
	line    int
	lowPC   uint64
	hasLow  bool
	ranges  []Range // in DW_AT_ranges order
}

type dieName struct {
	name, linkage string
	fileIdx       int64
	line          int64
}

// dwarfFuncs reads every subprogram that has code. isCode filters out
// ranges of discarded code (address 0 or a tombstone).
func dwarfFuncs(d *dwarf.Data, lines *dwarfline.Sections, isCode func(Range) bool) ([]dwarfFunc, error) {
	var out []dwarfFunc
	r := dies.NewReader(d)
	ref := dies.NewReader(d)
	cache := make(map[dwarf.Offset]dieName)
	var (
		cuEntry *dwarf.Entry
		cuName  string
		files   []string
		filesOK bool
	)
	var resolve func(off dwarf.Offset, depth int) dieName
	// nameOf is e's name, completed from the DIEs its DW_AT_abstract_origin
	// and DW_AT_specification refer to when it lacks a name or a
	// declaration file; depth is how many such references led to e.
	nameOf := func(e *dwarf.Entry, depth int) dieName {
		n := entryName(e)
		if depth < 8 && (n.name == "" || n.fileIdx < 0) {
			for _, a := range []dwarf.Attr{dwarf.AttrAbstractOrigin, dwarf.AttrSpecification} {
				if o, ok := e.Val(a).(dwarf.Offset); ok {
					n = n.fill(resolve(o, depth+1))
				}
			}
		}
		return n
	}
	resolve = func(off dwarf.Offset, depth int) dieName {
		if n, ok := cache[off]; ok {
			return n
		}
		ref.Seek(off)
		e, err := ref.Next()
		if err != nil || e == nil {
			return dieName{}
		}
		n := nameOf(e, depth)
		cache[off] = n
		return n
	}
	for {
		e, err := r.Next()
		if err != nil {
			return out, fmt.Errorf("DWARF: %w", err)
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
			cuEntry, filesOK, files = e, false, nil
			cuName, _ = e.Val(dwarf.AttrName).(string)
			continue
		case dwarf.TagSubprogram:
			// A subprogram's children are its parameters, variables,
			// blocks and inlined calls: skipping them (by DW_AT_sibling
			// where the producer gives it) is most of the saving. GCC's
			// nested functions, which live there, are then known from
			// their symbols only.
			r.SkipChildren()
		case dwarf.TagVariable, dwarf.TagBaseType, dwarf.TagPointerType, dwarf.TagTypedef,
			dwarf.TagConstType, dwarf.TagArrayType, dwarf.TagEnumerationType:
			r.SkipChildren()
			continue
		default:
			continue
		}
		rs, err := d.Ranges(e)
		if err != nil || len(rs) == 0 {
			continue // a declaration, an abstract instance, or unreadable ranges
		}
		fn := dwarfFunc{off: e.Offset, cu: cuName}
		for _, x := range rs {
			if rg := (Range{x[0], x[1]}); rg.Start < rg.End && isCode(rg) {
				fn.ranges = append(fn.ranges, rg)
			}
		}
		if len(fn.ranges) == 0 {
			continue
		}
		if lo, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
			fn.lowPC, fn.hasLow = lo, true
		}
		n := nameOf(e, 0)
		fn.name, fn.linkage, fn.line = n.name, n.linkage, int(n.line)
		if n.fileIdx >= 0 {
			if !filesOK && cuEntry != nil {
				filesOK = true
				files = unitFiles(cuEntry, lines, r.AddressSize())
			}
			if i := n.fileIdx; i >= 0 && i < int64(len(files)) {
				fn.file = files[i]
			}
		}
		out = append(out, fn)
	}
	return out, nil
}

// unitFiles returns the file table of a unit's line program; nil if the
// unit has none or it cannot be read (the names are then left out).
func unitFiles(cu *dwarf.Entry, lines *dwarfline.Sections, addrSize int) []string {
	off, ok := cu.Val(dwarf.AttrStmtList).(int64)
	if !ok || lines == nil {
		return nil
	}
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	p, err := dwarfline.New(lines, uint64(off), compDir, addrSize)
	if err != nil {
		return nil
	}
	files := p.Files
	for i, f := range files {
		if f != "" {
			files[i] = path.Clean(f)
		}
	}
	return files
}

func entryName(e *dwarf.Entry) dieName {
	n := dieName{fileIdx: -1}
	n.name, _ = e.Val(dwarf.AttrName).(string)
	n.linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
	if n.linkage == "" {
		n.linkage, _ = e.Val(attrMIPSLinkageName).(string)
	}
	if f, ok := e.Val(dwarf.AttrDeclFile).(int64); ok {
		n.fileIdx = f
	}
	if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
		n.line = l
	}
	return n
}

// fill completes n with what o knows.
func (n dieName) fill(o dieName) dieName {
	if n.name == "" {
		n.name = o.name
	}
	if n.linkage == "" {
		n.linkage = o.linkage
	}
	if n.fileIdx < 0 {
		n.fileIdx, n.line = o.fileIdx, o.line
	}
	return n
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, the pre-DWARF 4
// spelling of DW_AT_linkage_name that GCC still emits with -gdwarf-2/3.
const attrMIPSLinkageName dwarf.Attr = 0x2007
