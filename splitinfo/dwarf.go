package splitinfo

import (
	"debug/dwarf"
	"iter"
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

// funcAttrs are the attributes dwarfFuncs reads, indexed by the fa*
// constants.
var funcAttrs = []dwarf.Attr{
	dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName, dwarf.AttrDeclFile, dwarf.AttrDeclLine,
	dwarf.AttrAbstractOrigin, dwarf.AttrSpecification, dwarf.AttrLowpc, dwarf.AttrHighpc, dwarf.AttrRanges,
	dwarf.AttrStmtList, dwarf.AttrCompDir,
}

const (
	faName = iota
	faLinkage
	faMIPSLinkage
	faDeclFile
	faDeclLine
	faAbstractOrigin
	faSpecification
	faLowpc
	faHighpc
	faRanges
	faStmtList
	faCompDir
)

// dwarfFuncs calls yield with every subprogram that has code in the
// units whose indices units yields; the subprogram and its ranges are
// reused after yield returns. isCode filters out ranges of discarded
// code (address 0 or a tombstone).
func dwarfFuncs(d *dies.Data, lines *dwarfline.Sections, isCode func(Range) bool, units iter.Seq[int], yield func(*dwarfFunc)) error {
	var fnRanges []Range
	var fn dwarfFunc // one for all: it escapes to yield
	w := d.NewWalker(funcAttrs...)
	ref := d.NewWalker(funcAttrs...)
	cache := make(map[dwarf.Offset]dieName)
	var resolve func(off dwarf.Offset, depth int) dieName
	// nameOf is e's name, completed from the DIEs its DW_AT_abstract_origin
	// and DW_AT_specification refer to when it lacks a name or a
	// declaration file; depth is how many such references led to e.
	nameOf := func(e *dies.Entry, depth int) dieName {
		n := entryName(e)
		if depth < 8 && (n.name == "" || n.fileIdx < 0) {
			// Both references are read first: resolving one reuses the
			// entry e may be.
			origin, hasOrigin := e.Ref(faAbstractOrigin)
			spec, hasSpec := e.Ref(faSpecification)
			if hasOrigin {
				n = n.fill(resolve(origin, depth+1))
			}
			if hasSpec {
				n = n.fill(resolve(spec, depth+1))
			}
		}
		return n
	}
	resolve = func(off dwarf.Offset, depth int) dieName {
		if n, ok := cache[off]; ok {
			return n
		}
		e, err := ref.EntryAt(off)
		if err != nil || e == nil {
			return dieName{}
		}
		n := nameOf(e, depth)
		cache[off] = n
		return n
	}
	var rs [][2]uint64
	for ui := range units {
		w.Reset(ui)
		var (
			cuName   string
			stmtList uint64
			hasStmt  bool
			compDir  string
			files    []string
			filesOK  bool
		)
		for {
			e, err := w.Next()
			if err != nil {
				return err
			}
			if e == nil {
				break
			}
			switch e.Tag {
			case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
				cuName, _ = e.String(faName)
				stmtList, hasStmt = e.SecOffset(faStmtList)
				compDir, _ = e.String(faCompDir)
				filesOK, files = false, nil
				continue
			case dwarf.TagSubprogram:
				// A subprogram's children are its parameters, variables,
				// blocks and inlined calls: skipping them (by DW_AT_sibling
				// where the producer gives it) is most of the saving. GCC's
				// nested functions, which live there, are then known from
				// their symbols only.
				w.SkipChildren()
			case dwarf.TagVariable, dwarf.TagBaseType, dwarf.TagPointerType, dwarf.TagTypedef,
				dwarf.TagConstType, dwarf.TagArrayType, dwarf.TagEnumerationType:
				w.SkipChildren()
				continue
			default:
				continue
			}
			if rs, err = e.Ranges(rs[:0]); err != nil || len(rs) == 0 {
				continue // a declaration, an abstract instance, or unreadable ranges
			}
			fn = dwarfFunc{off: e.Offset, cu: cuName}
			fnRanges = fnRanges[:0]
			for _, x := range rs {
				if rg := (Range{x[0], x[1]}); rg.Start < rg.End && isCode(rg) {
					fnRanges = append(fnRanges, rg)
				}
			}
			if len(fnRanges) == 0 {
				continue
			}
			fn.ranges = fnRanges
			fn.lowPC, fn.hasLow = e.Addr(faLowpc)
			n := nameOf(e, 0)
			fn.name, fn.linkage, fn.line = n.name, n.linkage, int(n.line)
			if n.fileIdx >= 0 {
				if !filesOK && hasStmt {
					filesOK = true
					files = unitFiles(stmtList, compDir, lines, int(w.Unit().AddrSize))
				}
				if i := n.fileIdx; i >= 0 && i < int64(len(files)) {
					fn.file = files[i]
				}
			}
			yield(&fn)
		}
		if err := w.Err(); err != nil {
			return err
		}
	}
	return nil
}

// unitFiles returns the file table of a unit's line program at off; nil
// if it cannot be read (the names are then left out).
func unitFiles(off uint64, compDir string, lines *dwarfline.Sections, addrSize int) []string {
	if lines == nil {
		return nil
	}
	p, err := dwarfline.New(lines, off, compDir, addrSize)
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

func entryName(e *dies.Entry) dieName {
	n := dieName{fileIdx: -1}
	n.name, _ = e.String(faName)
	n.linkage, _ = e.String(faLinkage)
	if n.linkage == "" {
		n.linkage, _ = e.String(faMIPSLinkage)
	}
	if f, ok := e.Int(faDeclFile); ok {
		n.fileIdx = f
	}
	if l, ok := e.Int(faDeclLine); ok {
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
