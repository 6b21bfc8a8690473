package locals

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/dies"
)

// Names a frame sees beyond its subprogram: the variables and types
// declared at the top of each compilation unit (C's file scope). A name
// resolves as gdb resolves it from a C frame: the unit of the frame's
// function first (its file statics and globals), then the globals of the
// other units (DW_AT_external), then their file statics.

// symbols indexes the file-scope declarations of every unit, by name.
type symbols struct {
	vars  map[string][]global
	types map[string][]dwarf.Offset // struct/union/enum by tag and name, typedefs and base types by name
}

// global is a file-scope variable: its definition (the entry with the
// location) and its unit.
type global struct {
	def      dwarf.Offset
	unit     dwarf.Offset
	external bool
}

// symbols returns the index of file-scope names, built on first use.
func (r *Reader) symbols() (*symbols, error) {
	r.symOnce.Do(func() { r.syms, r.symErr = r.readSymbols() })
	return r.syms, r.symErr
}

// readSymbols reads the children of every unit's root entry.
func (r *Reader) readSymbols() (*symbols, error) {
	s := &symbols{vars: make(map[string][]global), types: make(map[string][]dwarf.Offset)}
	rd := dies.NewReader(r.d)
	for {
		cu, err := rd.Next()
		if err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
		if cu == nil {
			return s, nil
		}
		if !cu.Children {
			continue
		}
		decls := make(map[dwarf.Offset]*dwarf.Entry) // declarations a definition may point to
		for {
			e, err := rd.Next()
			if err != nil {
				return nil, fmt.Errorf("locals: %w", err)
			}
			if e == nil || e.Tag == 0 {
				break
			}
			if e.Children {
				rd.SkipChildren()
			}
			name, _ := e.Val(dwarf.AttrName).(string)
			switch e.Tag {
			case dwarf.TagVariable:
				decl := e
				if spec, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok && decls[spec] != nil {
					decl = decls[spec]
					name, _ = decl.Val(dwarf.AttrName).(string)
				}
				if _, ok := e.Val(dwarf.AttrLocation).([]byte); !ok {
					decls[e.Offset] = e // a declaration: no storage here
					continue
				}
				ext, _ := decl.Val(dwarf.AttrExternal).(bool)
				if name != "" {
					s.vars[name] = append(s.vars[name], global{def: e.Offset, unit: cu.Offset, external: ext})
				}
			case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagEnumerationType:
				if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); name != "" && !decl {
					s.types[tagWord[e.Tag]+" "+name] = append(s.types[tagWord[e.Tag]+" "+name], e.Offset)
				}
			case dwarf.TagTypedef:
				if name != "" {
					s.types[name] = append(s.types[name], e.Offset)
				}
			case dwarf.TagBaseType:
				if name != "" {
					k := baseTypeKey(strings.Fields(name))
					s.types[k] = append(s.types[k], e.Offset)
				}
			}
		}
	}
}

var tagWord = map[dwarf.Tag]string{dwarf.TagStructType: "struct", dwarf.TagUnionType: "union", dwarf.TagEnumerationType: "enum"}

// baseTypeKey is the one spelling of a C arithmetic type the words w name
// (C11 section 6.7.2: "unsigned long" is "long unsigned int"): the words
// sorted, "int" dropped beside another, "signed" beside int, short or
// long.
func baseTypeKey(w []string) string {
	var kept []string
	has := func(s string) bool { return strings.Contains(" "+strings.Join(w, " ")+" ", " "+s+" ") }
	for _, x := range w {
		switch {
		case x == "int" && len(w) > 1:
		case x == "signed" && !has("char"):
		default:
			kept = append(kept, x)
		}
	}
	if len(kept) == 0 {
		return "int" // "signed", "signed int"
	}
	for i := 1; i < len(kept); i++ { // insertion sort: a handful of words
		for j := i; j > 0 && kept[j] < kept[j-1]; j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	return strings.Join(kept, " ")
}

// global returns the file-scope variable name as the frame in subprogram
// sub sees it, nil if no unit declares one.
func (r *Reader) global(sub dwarf.Offset, name string) (*godwarf.Tree, error) {
	s, err := r.symbols()
	if err != nil {
		return nil, err
	}
	gs := s.vars[name]
	if len(gs) == 0 {
		return nil, nil
	}
	var own dwarf.Offset
	if u := r.unitOf(sub); u != nil {
		own = u.start
	}
	best := -1
	rank := func(g global) int {
		switch {
		case g.unit == own:
			return 0
		case g.external:
			return 1
		}
		return 2
	}
	for i, g := range gs {
		if best < 0 || rank(g) < rank(gs[best]) {
			best = i
		}
	}
	t, err := godwarf.LoadTree(gs[best].def, r.d, 0)
	if err != nil {
		return nil, fmt.Errorf("locals: variable %s at %#x: %w", name, gs[best].def, err)
	}
	return t, nil
}

// namedType returns the type a C type name spells — "struct item",
// "long unsigned" (baseTypeKey), a typedef — preferring the one of sub's
// unit, else the arithmetic type C defines (builtinType); nil if none.
func (r *Reader) namedType(sub dwarf.Offset, name string) (godwarf.Type, error) {
	s, err := r.symbols()
	if err != nil {
		return nil, err
	}
	offs := s.types[name]
	if len(offs) == 0 {
		return builtinType(name), nil
	}
	off := offs[0]
	if u := r.unitOf(sub); u != nil {
		for _, o := range offs {
			if o >= u.start && o < u.end {
				off = o
				break
			}
		}
	}
	return r.typeAt(off)
}

// builtinType returns the C arithmetic type key names (baseTypeKey) as
// the System V x86-64 psABI (section 3.1.2) sizes it, for a program whose
// DWARF has no such type (gdb knows them too); nil for another name.
func builtinType(key string) godwarf.Type {
	b := func(name string, size int64) godwarf.BasicType {
		return godwarf.BasicType{CommonType: godwarf.CommonType{ByteSize: size, Name: name}, BitSize: 8 * size}
	}
	switch key {
	case "char", "char signed":
		return &godwarf.CharType{BasicType: b(strings.ReplaceAll(key, "char signed", "signed char"), 1)}
	case "char unsigned":
		return &godwarf.UcharType{BasicType: b("unsigned char", 1)}
	case "short", "int", "long", "long long":
		return &godwarf.IntType{BasicType: b(key, map[string]int64{"short": 2, "int": 4, "long": 8, "long long": 8}[key])}
	case "short unsigned", "unsigned", "long unsigned", "long long unsigned":
		name := "unsigned " + strings.TrimSuffix(key, " unsigned")
		if key == "unsigned" {
			name = "unsigned int"
		}
		return &godwarf.UintType{BasicType: b(name, map[string]int64{"short unsigned": 2, "unsigned": 4, "long unsigned": 8, "long long unsigned": 8}[key])}
	case "float", "double":
		return &godwarf.FloatType{BasicType: b(key, map[string]int64{"float": 4, "double": 8}[key])}
	case "double long": // x87 extended precision, in 16 bytes
		return &godwarf.FloatType{BasicType: b("long double", 16)}
	case "_Bool":
		return &godwarf.BoolType{BasicType: b(key, 1)}
	}
	return nil
}

// isTypedef reports whether name is a typedef of some unit: "(name)x" is
// then a cast.
func (r *Reader) isTypedef(name string) bool {
	s, err := r.symbols()
	return err == nil && len(s.types[name]) > 0 && !strings.Contains(name, " ")
}

// Operations resolveIndexes rewrites (DWARF 5 sections 2.5.1.1 and
// 2.5.1.6, and the GNU forms of split DWARF).
const (
	opAddr          = 0x03
	opAddrx         = 0xa1
	opConstx        = 0xa2
	opConvert       = 0xa8
	opGNUAddrIndex  = 0xfb
	opGNUConstIndex = 0xfc
)

// resolveIndexes replaces the operations of expr, an expression of the
// entry at off, whose operand points into the unit or its tables by
// operations Delve's op package evaluates, which fails on them ("invalid
// instruction 0xa1"):
//   - DW_OP_addrx and DW_OP_constx, clang's DWARF 5 form of DW_OP_addr
//     for globals and statics, name an entry of .debug_addr by index
//     from the unit's DW_AT_addr_base: they become DW_OP_addr (relocated
//     by the load bias, as Delve's op package does) and DW_OP_const8u
//     (not relocated: constx holds TLS offsets).
//   - DW_OP_convert converts the top of the stack to the base type at a
//     unit offset (0: the generic type); see convertOps.
func (r *Reader) resolveIndexes(off dwarf.Offset, expr []byte) ([]byte, error) {
	return rewriteOps(expr, func(op []byte) ([]byte, error) {
		code := op[0]
		if code != opAddrx && code != opConstx && code != opGNUAddrIndex && code != opGNUConstIndex && code != opConvert {
			return nil, nil
		}
		u := r.unitOf(off)
		if u == nil {
			return nil, fmt.Errorf("entry at %#x is in no unit", off)
		}
		if code == opConvert {
			return r.convertOps(u, op)
		}
		c := cursor.New(".debug_addr", int64(u.addrBase), op[1:])
		a := r.debugAddr(c, u, c.ULEB128())
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("locals: %w", err)
		}
		repl := []byte{opConst8u}
		if code == opAddrx || code == opGNUAddrIndex {
			repl[0] = opAddr
		}
		return binary.LittleEndian.AppendUint64(repl, a), nil
	})
}

// convertOps returns the operations that do what DW_OP_convert op does
// (DWARF 5 section 2.5.1.6) on Delve's untyped stack of 64-bit values:
// to an integer base type of n < 8 bytes, keep the low n bytes, then
// sign-extend them for a signed type; to the generic type (operand 0) or
// one of 8 bytes, nothing. clang converts with it when it describes a
// narrow variable by a wider register (cold = R14 & 0xff, to 1 byte then
// to 4). A conversion to a floating-point type has no such form.
func (r *Reader) convertOps(u *unit, op []byte) ([]byte, error) {
	c := cursor.New("location expression", 0, op[1:])
	rel := c.ULEB128()
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("locals: %w", err)
	}
	if rel == 0 {
		return []byte{}, nil
	}
	at := uint64(u.start) + rel
	if at >= uint64(u.end) {
		return nil, fmt.Errorf("DW_OP_convert to the entry at %#x, outside its unit", at)
	}
	if r.d == nil {
		return nil, fmt.Errorf("DW_OP_convert to the entry at %#x: no DWARF entries", at)
	}
	rd := r.d.Reader()
	rd.Seek(dwarf.Offset(at))
	e, err := rd.Next()
	if err != nil || e == nil || e.Tag != dwarf.TagBaseType {
		return nil, fmt.Errorf("DW_OP_convert to the entry at %#x: not a base type", at)
	}
	size, _ := e.Val(dwarf.AttrByteSize).(int64)
	enc, _ := e.Val(dwarf.AttrEncoding).(int64)
	switch enc {
	case dwAteAddress, dwAteBoolean, dwAteUnsigned, dwAteUnsignedChar, dwAteSigned, dwAteSignedChar, dwAteUTF:
	default:
		return nil, fmt.Errorf("DW_OP_convert to a base type of encoding %#x", enc)
	}
	switch {
	case size == 8:
		return []byte{}, nil
	case size < 1 || size > 8:
		return nil, fmt.Errorf("DW_OP_convert to a base type of %d bytes", size)
	}
	out := binary.LittleEndian.AppendUint64([]byte{opConst8u}, 1<<(8*uint64(size))-1)
	out = append(out, opAnd)
	if enc == dwAteSigned || enc == dwAteSignedChar {
		shift := byte(64 - 8*size)
		out = append(out, opConstu, shift, opShl, opConstu, shift, opShra)
	}
	return out, nil
}

// The operations convertOps emits besides those GuardExpr rewrites.
const (
	opShl  = 0x24
	opShra = 0x26
)

// Base type encodings (DWARF 5 section 7.8).
const (
	dwAteAddress      = 0x1
	dwAteBoolean      = 0x2
	dwAteFloat        = 0x4
	dwAteSigned       = 0x5
	dwAteSignedChar   = 0x6
	dwAteUnsigned     = 0x7
	dwAteUnsignedChar = 0x8
	dwAteUTF          = 0x10
)
