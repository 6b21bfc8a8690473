package linetable

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"slices"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Scope is a DWARF subprogram or inlined subroutine (DWARF 5, sections
// 3.3 and 3.3.8): one frame of an address's inline chain.
type Scope struct {
	// Name and LinkageName are DW_AT_name and DW_AT_linkage_name (or
	// DW_AT_MIPS_linkage_name), found through DW_AT_abstract_origin and
	// DW_AT_specification; "" if absent.
	Name, LinkageName string
	// DeclFile and DeclLine are DW_AT_decl_file and DW_AT_decl_line,
	// found the same way; DeclFile is nil if absent.
	DeclFile *FileNames
	DeclLine int
	// LowPC is the DIE's own DW_AT_low_pc, if HasLowPC.
	LowPC    uint64
	HasLowPC bool
	// Inlined reports a DW_TAG_inlined_subroutine; its call site, in
	// the enclosing scope, is CallFile (nil if absent), CallLine,
	// CallColumn and CallDiscriminator (DW_AT_GNU_discriminator).
	Inlined                                 bool
	CallFile                                *FileNames
	CallLine, CallColumn, CallDiscriminator int
	parent                                  int32
}

// Inlines indexes the subprograms and inlined subroutines of a file's
// DWARF by address: for an address, the innermost one whose ranges hold
// it (an inlined subroutine's ranges may lie in several fragments of
// the function it is inlined into), and from it the chain out to the
// subprogram. It also knows which addresses a compile unit covers. It
// is immutable and safe for concurrent use.
type Inlines struct {
	scopes []Scope
	// The address partition: per interval, owner is -1 outside every
	// compile unit, 0 in a unit but no scope, else 1 + the innermost
	// scope.
	starts addrindex.Index
	owner  []int32
	vars   []Variable // by start
	varIdx addrindex.Index
}

// Variable is a variable at a fixed address (DW_AT_location
// DW_OP_addr or DW_OP_addrx): [Start, End) holds it, End - Start its
// type's size (1 if unknown), DeclFile (nil if absent, or given as
// DW_FORM_implicit_const, see NewInlines) and DeclLine where it is
// declared.
type Variable struct {
	Start, End uint64
	DeclFile   *FileNames
	DeclLine   int
}

// VariableAt returns the variable holding addr: the one starting last at
// or below it.
func (x *Inlines) VariableAt(addr uint64) (*Variable, bool) {
	if x == nil {
		return nil, false
	}
	i := x.varIdx.Find(addr)
	if i < 0 || addr >= x.vars[i].End {
		return nil, false
	}
	return &x.vars[i], true
}

// Chain yields the chain of scopes holding pc, innermost first: the
// inlined subroutines and last the subprogram they are inlined into (the
// chain ends early, without a subprogram, where DWARF nests none). It
// yields nothing where no scope holds pc, and reports whether a compile
// unit's ranges hold pc. It does not allocate.
func (x *Inlines) Chain(pc uint64, yield func(*Scope) bool) (inUnit bool) {
	return x.ChainOf(x.Piece(pc), yield)
}

// Piece returns the index of the piece of the address partition holding
// pc, or -1 below the first: every address of a piece has the same chain
// of scopes (ChainOf), and is in a unit or not alike.
func (x *Inlines) Piece(pc uint64) int {
	if x == nil {
		return -1
	}
	return x.starts.Find(pc)
}

// Pieces returns the number of pieces of the address partition.
func (x *Inlines) Pieces() int {
	if x == nil {
		return 0
	}
	return x.starts.Len()
}

// PieceBounds returns the addresses piece i holds, [lo, hi); the last
// piece has hi 0 and holds every address from lo on.
func (x *Inlines) PieceBounds(i int) (lo, hi uint64) {
	if i+1 < x.starts.Len() {
		hi = x.starts.Start(i + 1)
	}
	return x.starts.Start(i), hi
}

// ChainOf is Chain over the addresses of piece i (-1: none).
func (x *Inlines) ChainOf(i int, yield func(*Scope) bool) (inUnit bool) {
	if i < 0 || x.owner[i] < 0 {
		return false
	}
	for s := x.owner[i] - 1; s >= 0; {
		sc := &x.scopes[s]
		if !yield(sc) || !sc.Inlined {
			break
		}
		s = sc.parent
	}
	return true
}

// TouchPiece reads the first of the piece starts Piece(pc) searches,
// and returns it, as Touch does for scopes.
func (x *Inlines) TouchPiece(pc uint64) uint64 {
	if x == nil {
		return 0
	}
	return x.starts.Touch(pc)
}

// Innermost returns the innermost scope of piece i (-1: none), the
// first ChainOf yields, or nil.
func (x *Inlines) Innermost(i int) *Scope {
	if i < 0 || x.owner[i] <= 0 {
		return nil
	}
	return &x.scopes[x.owner[i]-1]
}

// Touch reads what a caller of ChainOf reads of the chain from scope s
// (from Innermost): the scopes and the first bytes of their names, and
// returns a sum of it. A caller that looks up many addresses touches
// each one's chain before answering any, so that their cache misses
// overlap instead of following each other.
func (x *Inlines) Touch(s *Scope) uint64 {
	var sum uint64
	for s != nil {
		sum += uint64(len(s.Name)) + uint64(s.CallLine)
		if n := s.LinkageName; n != "" {
			sum += uint64(n[0])
		} else if n := s.Name; n != "" {
			sum += uint64(n[0])
		}
		if !s.Inlined || s.parent < 0 {
			break
		}
		s = &x.scopes[s.parent]
	}
	return sum
}

// InUnit reports whether a compile unit's ranges hold pc.
func (x *Inlines) InUnit(pc uint64) bool {
	return x.Chain(pc, func(*Scope) bool { return false })
}

// Attributes Go's debug/dwarf has no names for.
const (
	attrLinkageName     dwarf.Attr = 0x6e
	attrMIPSLinkageName dwarf.Attr = 0x2007
	attrDiscriminator   dwarf.Attr = 0x2136 // DW_AT_GNU_discriminator
	tagGNUCallSite      dwarf.Tag  = 0x4109 // DW_TAG_GNU_call_site
)

type span struct {
	lo, hi uint64
	id     int32 // 1 + a scope, or for units 0
}

// inlineAttrs are the attributes NewInlines reads, indexed by the ia*
// constants.
var inlineAttrs = []dwarf.Attr{
	dwarf.AttrName, attrLinkageName, attrMIPSLinkageName, dwarf.AttrDeclFile, dwarf.AttrDeclLine,
	dwarf.AttrAbstractOrigin, dwarf.AttrSpecification, dwarf.AttrLowpc, dwarf.AttrHighpc, dwarf.AttrRanges,
	dwarf.AttrCallFile, dwarf.AttrCallLine, dwarf.AttrCallColumn, attrDiscriminator,
	dwarf.AttrLocation, dwarf.AttrType, dwarf.AttrStmtList, dwarf.AttrCompDir,
}

const (
	iaName = iota
	iaLinkage
	iaMIPSLinkage
	iaDeclFile
	iaDeclLine
	iaAbstractOrigin
	iaSpecification
	iaLowpc
	iaHighpc
	iaRanges
	iaCallFile
	iaCallLine
	iaCallColumn
	iaDiscriminator
	iaLocation
	iaType
	iaStmtList
	iaCompDir
)

// NewInlines indexes the DWARF of f in the compile units of scope s
// (nil: every unit); a file without DWARF gives an empty index.
func NewInlines(f *elfx.File, s *splitinfo.Scope) (*Inlines, error) {
	x := &Inlines{}
	d, err := dies.Load(f)
	if err != nil || d == nil {
		x.finish(nil)
		return x, err
	}
	secs, err := dwarfline.Load(f)
	if err != nil {
		return nil, err
	}
	var (
		offs    []dwarf.Offset // per scope, its DIE's offset (increasing)
		origins []dwarf.Offset // and its DW_AT_abstract_origin or DW_AT_specification, 0 if none
		spans   []span
		units   []span
		rs      [][2]uint64
		types   *dwarf.Reader // for the sizes of variables, made when needed
		names   = make(map[string]string)
	)
	str := func(e *dies.Entry, i int) string {
		b, ok := e.StringBytes(i)
		if !ok {
			return ""
		}
		if s, ok := names[string(b)]; ok {
			return s
		}
		s := string(b)
		names[s] = s
		return s
	}
	w := d.NewWalker(inlineAttrs...)
	for ui := range s.Units(len(d.Units())) {
		w.Reset(ui)
		cu, err := w.Next()
		if err != nil {
			return nil, err
		}
		if cu == nil || cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
			continue
		}
		if rs, err = cu.Ranges(rs[:0]); err == nil {
			for _, rg := range rs {
				units = append(units, span{rg[0], rg[1], 0})
			}
		}
		addrSize := int(w.Unit().AddrSize)
		var files []*FileNames
		if off, ok := cu.SecOffset(iaStmtList); ok {
			compDir, _ := cu.String(iaCompDir)
			if p, err := dwarfline.New(secs, off, compDir, addrSize); err == nil {
				files = appendFileNames(nil, p)
			}
		}
		file := func(e *dies.Entry, i int) *FileNames {
			if v, ok := e.Int(i); ok && v >= 0 && v < int64(len(files)) {
				return files[v]
			}
			return nil
		}
		if !cu.Children {
			continue
		}
		// stack[k] is the innermost scope enclosing depth k+1, -1 if none.
		stack := []int32{-1}
		for {
			e, err := w.Next()
			if err != nil {
				return nil, err
			}
			if e == nil {
				break
			}
			if e.Depth > len(stack) || e.Depth == 0 {
				break // a second top-level entry: not a compile unit's
			}
			stack = stack[:e.Depth]
			parent := stack[e.Depth-1]
			self := parent
			if e.Tag == dwarf.TagVariable {
				if v, ok := x.variable(&types, f, addrSize, e); ok {
					v.DeclFile, v.DeclLine = file(e, iaDeclFile), intVal(e, iaDeclLine)
					if e.IsImplicitConst(iaDeclFile) {
						v.DeclFile = nil
					}
					x.vars = append(x.vars, v)
				}
			}
			if e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine {
				s := Scope{Inlined: e.Tag == dwarf.TagInlinedSubroutine, parent: parent, CallFile: file(e, iaCallFile)}
				// A DW_AT_decl_file of the form DW_FORM_implicit_const
				// (DWARF 5, section 7.5.3: the value lives in the
				// abbreviation) gives no name: LLVM 22's symbolizer reads
				// none from it (GCC 12 writes most decl_file attributes
				// this way).
				if !e.IsImplicitConst(iaDeclFile) {
					s.DeclFile = file(e, iaDeclFile)
				}
				s.Name = str(e, iaName)
				if s.LinkageName = str(e, iaLinkage); s.LinkageName == "" {
					s.LinkageName = str(e, iaMIPSLinkage)
				}
				s.DeclLine = intVal(e, iaDeclLine)
				origin, ok := e.Ref(iaAbstractOrigin)
				if !ok {
					origin, _ = e.Ref(iaSpecification)
				}
				offs, origins = append(offs, e.Offset), append(origins, origin)
				if v, ok := e.Addr(iaLowpc); ok {
					s.LowPC, s.HasLowPC = v, true
				}
				s.CallLine, s.CallColumn = intVal(e, iaCallLine), intVal(e, iaCallColumn)
				s.CallDiscriminator = intVal(e, iaDiscriminator)
				self = int32(len(x.scopes))
				x.scopes = append(x.scopes, s)
				if rs, err = e.Ranges(rs[:0]); err == nil {
					for _, rg := range rs {
						if rg[1] > rg[0] {
							spans = append(spans, span{rg[0], rg[1], self + 1})
						}
					}
				}
			}
			switch {
			case !e.Children:
			case e.Tag == dwarf.TagCallSite || e.Tag == tagGNUCallSite || e.Tag == dwarf.TagEnumerationType:
				// Their children are parameters and enumerators.
				w.SkipChildren()
			default:
				stack = append(stack, self)
			}
		}
		if err := w.Err(); err != nil {
			return nil, err
		}
	}
	// Names through abstract origins and specifications, nearest first:
	// each scope takes what it lacks from the first DIE along its chain
	// of origins that has it. A scope earlier in DIE order has already
	// taken everything its own chain gives, so the walk stops there.
	for i := range x.scopes {
		s := &x.scopes[i]
		o := origins[i]
		for hops := 1; o != 0 && hops < 16; hops++ {
			k, ok := slices.BinarySearch(offs, o)
			if !ok {
				break
			}
			n := &x.scopes[k]
			if s.Name == "" {
				s.Name = n.Name
			}
			if s.LinkageName == "" {
				s.LinkageName = n.LinkageName
			}
			if s.DeclFile == nil {
				s.DeclFile = n.DeclFile
			}
			if s.DeclLine == 0 {
				s.DeclLine = n.DeclLine
			}
			if k <= i {
				break
			}
			o = origins[k]
		}
	}
	x.finish(append(spans, units...))
	slices.SortStableFunc(x.vars, func(a, b Variable) int { return cmp.Compare(a.Start, b.Start) })
	starts := make([]uint64, len(x.vars))
	for i := range x.vars {
		starts[i] = x.vars[i].Start
	}
	x.varIdx = addrindex.New(starts)
	return x, nil
}

// variable reads a variable's address (a location of one DW_OP_addr,
// or one DW_OP_addrx into .debug_addr at the unit's addr_base) and size;
// *types reads the sizes of its type, made from f's debug/dwarf data
// when first needed.
func (x *Inlines) variable(types **dwarf.Reader, f *elfx.File, addrSize int, e *dies.Entry) (Variable, bool) {
	loc, ok := e.Block(iaLocation)
	if !ok || len(loc) == 0 {
		return Variable{}, false
	}
	var v Variable
	switch loc[0] {
	case 0x03: // DW_OP_addr
		if len(loc) != 9 {
			return v, false
		}
		v.Start = binary.LittleEndian.Uint64(loc[1:])
	case 0xa1: // DW_OP_addrx
		i, n := cursor.DecodeULEB128(loc[1:])
		if n <= 0 || 1+n != len(loc) {
			return v, false
		}
		if v.Start, ok = e.AddrIndex(i); !ok {
			return v, false
		}
	default:
		return v, false
	}
	size := int64(1)
	if off, ok := e.Ref(iaType); ok {
		if *types == nil {
			if dd, err := f.DWARF(); err == nil && dd != nil {
				*types = dd.Reader()
			}
		}
		if *types != nil {
			if n, ok := typeSize(*types, off, addrSize); ok && n > 0 {
				size = n
			}
		}
	}
	v.End = v.Start + uint64(size)
	return v, v.End > v.Start
}

// finish builds the address partition: at each address, the latest
// scope in DIE order whose ranges hold it (DIEs come before their
// children), or whether some unit holds it (spans of id 0).
func (x *Inlines) finish(spans []span) {
	starts, owner := partition(spans)
	x.starts, x.owner = addrindex.New(starts), owner
}

// partition splits the address space at every span boundary and gives
// each piece the highest id of the spans holding it (-1 for none).
func partition(spans []span) ([]uint64, []int32) {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	bounds := make([]uint64, 0, 2*len(spans))
	for _, s := range spans {
		bounds = append(bounds, s.lo, s.hi)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var starts []uint64
	var owner []int32
	var active spanHeap
	next := 0
	for _, b := range bounds {
		for next < len(spans) && spans[next].lo <= b {
			active.push(spans[next])
			next++
		}
		// Spans ending at or below b but hidden under a higher id
		// stay in the heap until they surface.
		id := int32(-1)
		for len(active) > 0 {
			if top := active[0]; top.hi > b {
				id = top.id
				break
			}
			active.pop()
		}
		if len(owner) > 0 && owner[len(owner)-1] == id {
			continue
		}
		starts, owner = append(starts, b), append(owner, id)
	}
	return starts, owner
}

func intVal(e *dies.Entry, i int) int {
	v, _ := e.Int(i)
	return int(v)
}

// spanHeap is a max-heap by id (typed: container/heap's interface would
// allocate on every push).
type spanHeap []span

func (h *spanHeap) push(v span) {
	*h = append(*h, v)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].id >= a[i].id {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

// pop removes the top.
func (h *spanHeap) pop() {
	a := *h
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, big := 2*i+1, i
		if l < n && a[l].id > a[big].id {
			big = l
		}
		if r := l + 1; r < n && a[r].id > a[big].id {
			big = r
		}
		if big == i {
			break
		}
		a[i], a[big] = a[big], a[i]
		i = big
	}
	*h = a
}
