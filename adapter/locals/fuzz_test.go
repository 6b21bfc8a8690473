package locals

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/internal/addrindex"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// FuzzLocationLists decodes location lists (DWARF 4 .debug_loc and DWARF 5
// .debug_loclists with .debug_addr, offsets and indexes) and unit headers
// from arbitrary bytes: errors, no panic.
func FuzzLocationLists(f *testing.F) {
	for _, name := range []string{"vars", "clang22-bbsections", "gcc-cold-dwarf4"} {
		e, err := elfx.Open(testbin.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range []string{".debug_loclists", ".debug_loc", ".debug_info"} {
			if b, _, _ := e.SectionData(s); len(b) > 0 {
				f.Add(b[:min(len(b), 512)], uint64(0), uint64(0x1073), uint64(0))
			}
		}
		e.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte, off, pc, idx uint64) {
		readUnits(data, binary.LittleEndian)
		r := &Reader{loc: data, loclists: data, addr: data, bo: binary.LittleEndian}
		for _, version := range []uint16{4, 5} {
			u := &unit{version: version, lowPC: 0x1000, addrBase: idx % 64, locBase: off % 64}
			r.findLocation(u, off%uint64(len(data)+8), pc)
			r.listOffset(u, idx)
		}
	})
}

// FuzzExpression walks, rewrites (indexes into .debug_addr, entry
// values) and evaluates arbitrary location expressions as place does:
// errors, no panic.
func FuzzExpression(f *testing.F) {
	f.Add([]byte{0xa3, 0x01, 0x55, 0x9f}, uint16(8))                               // DW_OP_entry_value(DW_OP_reg5), DW_OP_stack_value
	f.Add([]byte{0x73, 0x00, 0xa3, 0x01, 0x55, 0x1c, 0x32, 0x25, 0x9f}, uint16(8)) // breg3 0, entry_value(reg5), minus, lit2, shr, stack_value
	f.Add([]byte{0x91, 0x50}, uint16(8))                                           // fbreg -48
	f.Add([]byte{0x50, 0x93, 0x04, 0x93, 0x04}, uint16(8))                         // reg0, piece 4, piece 4
	f.Add([]byte{0x9e, 0x08, 1, 2, 3, 4, 5, 6, 7, 8}, uint16(8))                   // implicit_value
	f.Add([]byte{0xa1, 0x01}, uint16(4))                                           // addrx 1
	f.Add([]byte{0xa2, 0x00, 0xe0}, uint16(8))                                     // constx 0, form_tls_address
	f.Add([]byte{0xa1, 0x80, 0x80, 0x04}, uint16(4))                               // addrx beyond .debug_addr
	f.Fuzz(func(t *testing.T, expr []byte, size uint16) {
		for i := 0; i < len(expr); {
			next, ok := nextOp(expr, i)
			if !ok {
				break
			}
			if next <= i || next > len(expr) {
				t.Fatalf("nextOp(%x, %d) = %d", expr, i, next)
			}
			i = next
		}
		fr := testFrame()
		fr.Caller = func() (*Reader, *Frame, error) {
			return &Reader{}, testFrame(), nil // callValue: no tree, an error
		}
		r := &Reader{addr: make([]byte, 40), bo: binary.LittleEndian, units: []unit{{start: 0, end: 1 << 20, version: 5, addrBase: 8}}}
		r.dir = addrindex.NewDir(len(r.units), r.unitStart)
		rewritten, err := r.resolveIndexes(0x10, expr)
		if err != nil {
			return
		}
		if rewritten, err = r.resolveEntryValue(fr, rewritten); err != nil {
			return
		}
		if _, _, err := evaluate(fr, fr.Regs, rewritten, int64(size)); err != nil {
			return
		}
	})
}

// testFrame is a frame whose registers hold small numbers and whose
// memory is 4 KiB of zeros at 0x1000.
func testFrame() *Frame {
	regs := op.NewDwarfRegisters(0, nil, binary.LittleEndian, 16, 7, 6, 0)
	for n := range uint64(17) {
		regs.AddReg(n, op.DwarfRegisterFromUint64(0x1000+8*n))
	}
	regs.CFA = 0x1800
	return &Frame{Regs: regs, Mem: func(addr uint64, n int) ([]byte, error) {
		if addr < 0x1000 || addr+uint64(n) > 0x2000 || n < 0 {
			return nil, errors.New("unmapped")
		}
		return make([]byte, n), nil
	}}
}

// FuzzValues loads every local and parameter type of vars' inspect from
// arbitrary memory, with arbitrary limits: no panic, and no read larger
// than the biggest type.
func FuzzValues(f *testing.F) {
	types := varsTypes(f)
	f.Add([]byte("\x03\x00\x00\x00\xfc\xff\xff\xff\x00\x00\x00\x00\x00\x00\x04\x40"), uint8(2), uint8(16), uint8(8))
	f.Fuzz(func(t *testing.T, mem []byte, recurse, strLen, arrLen uint8) {
		const base = 0x10000
		read := func(addr uint64, n int) ([]byte, error) {
			if n > 1<<16 {
				t.Fatalf("read of %d bytes", n)
			}
			if addr < base || addr-base > uint64(len(mem)) || uint64(n) > uint64(len(mem))-(addr-base) {
				return nil, errors.New("unmapped")
			}
			return mem[addr-base : addr-base+uint64(n)], nil
		}
		l := &loader{mem: read, cfg: api.LoadConfig{FollowPointers: true, MaxVariableRecurse: int(recurse % 4), MaxStringLen: int(strLen), MaxArrayValues: int(arrLen), MaxStructFields: -1}}
		for _, typ := range types {
			l.load("v", typ, place{addr: base}, 0)
			l.load("r", typ, place{addr: FakeAddress, buf: mem}, 0)
		}
	})
}

// varsTypes returns the types of inspect's variables in testdata/bin/vars.
func varsTypes(tb testing.TB) []godwarf.Type {
	r, sub, _ := inspectFrame(tb)
	tree, err := r.tree(sub)
	if err != nil {
		tb.Fatal(err)
	}
	var types []godwarf.Type
	for _, c := range tree.Children {
		if off, ok := c.Val(dwarf.AttrType).(dwarf.Offset); ok {
			typ, err := r.typeAt(off)
			if err != nil {
				tb.Fatal(err)
			}
			types = append(types, typ)
		}
	}
	return types
}

// FuzzEval evaluates arbitrary expressions, in C's syntax and Delve's, in
// a frame of vars' inspect whose registers and memory hold small numbers
// and zeros: errors, no panic.
func FuzzEval(f *testing.F) {
	r, sub, pc := inspectFrame(f)
	for _, s := range []string{"n", "pt->x", "(*pt).label", "arr[n - 120]", "&local.y", "*&n", "(unsigned char)-1",
		"(struct point *)pt", "((struct point *)&local)->color", "(double)n / 2", "~n", "(_Bool)n", "(void *)0",
		"(long)&arr[1] - (long)&arr[0]", "(int)(char)(short)70000", "pt->name[0] == 'x'", "(nosuch)1", "(struct", "a->",
		"it->type", "-(int)-n", "pt + 1", "1 + pt", "&arr[3] - arr", "(void *)pt + 4", "arr + n - pt", "sizeof(arr) / sizeof arr[0]", "sizeof(struct point)", "sizeof", "sizeof(", "sizeof *pt", "(int)*pt", "(char *)\"s->t\"", "arr[(int)1.5]", "pt + 0.5", "pt - 1e30", "pt + \"s\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		fr := testFrame()
		fr.Subprogram, fr.PC = sub, pc
		r.Eval(fr, expr, api.LoadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 16, MaxArrayValues: 8, MaxStructFields: -1})
	})
}

// inspectFrame returns a Reader of testdata/bin/vars, the subprogram
// inspect and its entry address.
func inspectFrame(tb testing.TB) (*Reader, dwarf.Offset, uint64) {
	e, err := elfx.Open(testbin.Path(tb, "vars"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	r, err := New(e)
	if err != nil {
		tb.Fatal(err)
	}
	rd := r.d.Reader()
	for {
		ent, err := rd.Next()
		if err != nil || ent == nil {
			tb.Fatal("no subprogram inspect in vars")
		}
		if ent.Tag == dwarf.TagSubprogram && ent.Val(dwarf.AttrName) == "inspect" {
			tree, err := r.tree(ent.Offset)
			if err != nil || len(tree.Ranges) == 0 {
				tb.Fatalf("inspect: %v", err)
			}
			return r, ent.Offset, tree.Ranges[0][0]
		}
	}
}
