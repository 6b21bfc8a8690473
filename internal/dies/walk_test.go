package dies

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// testAttrs are the attributes the differential test compares: those
// splitdbg reads and the common ones of every class.
var testAttrs = []dwarf.Attr{
	dwarf.AttrName, 0x6e, 0x2007, dwarf.AttrDeclFile, dwarf.AttrDeclLine,
	dwarf.AttrLowpc, dwarf.AttrHighpc, dwarf.AttrRanges, dwarf.AttrAbstractOrigin,
	dwarf.AttrSpecification, dwarf.AttrCallFile, dwarf.AttrCallLine, dwarf.AttrCallColumn,
	0x2136, dwarf.AttrLocation, dwarf.AttrType, dwarf.AttrStmtList, dwarf.AttrCompDir,
	dwarf.AttrStrOffsetsBase, dwarf.AttrAddrBase, dwarf.AttrRnglistsBase, dwarf.AttrLoclistsBase,
	dwarf.AttrSibling, dwarf.AttrByteSize, dwarf.AttrProducer, dwarf.AttrLanguage,
	dwarf.AttrExternal, dwarf.AttrDeclaration, dwarf.AttrConstValue, dwarf.AttrFrameBase,
	dwarf.AttrInline, dwarf.AttrDataMemberLoc,
}

// TestWalkerMatchesDebugDWARF walks every test binary's entries with a
// Walker and with debug/dwarf's Reader, and compares each entry's
// offset, tag, depth and children, each asked-for attribute's value and
// the entry's ranges.
func TestWalkerMatchesDebugDWARF(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(testbin.Dir(), "*"))
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := filepath.Glob(filepath.Join(testbin.Dir(), "*", "*"))
	paths = append(paths, sub...)
	// glibc's separate debug file (libc6-dbg), found through libc's
	// build ID.
	if !testing.Short() {
		if _, err := os.Stat("/usr/lib/debug/.build-id"); err == nil {
			paths = append(paths, "/lib/x86_64-linux-gnu/libc.so.6")
		}
	}
	n := 0
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue
		}
		f, err := elfx.Open(p)
		if err != nil {
			continue // not ELF
		}
		dd, err := f.DWARF()
		if err != nil || dd == nil || f.Section(".debug_info") == nil {
			f.Close()
			continue
		}
		d, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			f.Close()
			continue
		}
		n++
		t.Run(filepath.Base(p), func(t *testing.T) { compareWalk(t, dd, d) })
		f.Close()
	}
	if n < 10 {
		t.Fatalf("only %d test binaries with DWARF in %s", n, testbin.Dir())
	}
}

func compareWalk(t *testing.T, dd *dwarf.Data, d *Data) {
	r := dd.Reader()
	w := d.NewWalker(testAttrs...)
	var ranges [][2]uint64
	entries, mismatches := 0, 0
	for ui := range d.Units() {
		w.Reset(ui)
		depth := 0
		for {
			e, err := w.Next()
			if err != nil {
				t.Fatalf("unit %d: %v", ui, err)
			}
			if e == nil {
				break
			}
			// debug/dwarf's next entry that is not null, and its depth.
			var want *dwarf.Entry
			for {
				want, err = r.Next()
				if err != nil || want == nil {
					t.Fatalf("debug/dwarf ends (%v) where the walker has %#x", err, e.Offset)
				}
				if want.Tag != 0 {
					break
				}
				depth--
			}
			entries++
			if e.Depth == 0 {
				depth = 0 // after the padding that ends the unit before
			}
			if e.Offset != want.Offset || e.Tag != want.Tag || e.Children != want.Children || e.Depth != depth {
				t.Fatalf("entry %#x %v children %v depth %d, debug/dwarf %#x %v %v depth %d",
					e.Offset, e.Tag, e.Children, e.Depth, want.Offset, want.Tag, want.Children, depth)
			}
			if want.Children {
				depth++
			}
			for i, a := range testAttrs {
				f := want.AttrField(a)
				got, ok := valueAs(e, i, f)
				if (f == nil) == e.Has(i) || (f != nil && (!ok || fmt.Sprint(got) != fmt.Sprint(f.Val))) {
					if mismatches++; mismatches <= 10 {
						var wv any
						if f != nil {
							wv = f.Val
						}
						t.Errorf("entry %#x %v: %v = %v (%v), debug/dwarf %v", e.Offset, e.Tag, a, got, e.Has(i), wv)
					}
				}
			}
			wr, werr := dd.Ranges(want)
			ranges, err = e.Ranges(ranges[:0])
			if (err == nil) != (werr == nil) || fmt.Sprint(ranges) != fmt.Sprint(wr) {
				if mismatches++; mismatches <= 10 {
					t.Errorf("entry %#x: ranges %v (%v), debug/dwarf %v (%v)", e.Offset, ranges, err, wr, werr)
				}
			}
		}
	}
	if e, _ := skipNulls(r); e != nil {
		t.Errorf("debug/dwarf has entry %#x after the walker's last", e.Offset)
	}
	if entries == 0 {
		t.Error("no entries")
	}
}

func skipNulls(r *dwarf.Reader) (*dwarf.Entry, error) {
	for {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag != 0 {
			return e, err
		}
	}
}

// valueAs reads attribute i of e as debug/dwarf gives the value of f.
func valueAs(e *Entry, i int, f *dwarf.Field) (any, bool) {
	if f == nil {
		return nil, true
	}
	switch f.Val.(type) {
	case string:
		return e.String(i)
	case int64:
		if v, ok := e.Int(i); ok {
			return v, true
		}
		v, ok := e.SecOffset(i)
		return int64(v), ok
	case uint64:
		switch f.Class {
		case dwarf.ClassAddress:
			return e.Addr(i)
		case dwarf.ClassRngList:
			off, err := e.w.rnglistx(e.vals[i].u)
			return off, err == nil
		}
		return e.vals[i].u, e.Has(i)
	case dwarf.Offset:
		return e.Ref(i)
	case []byte:
		if e.form(i) == formData16 {
			return e.vals[i].b, true
		}
		return e.Block(i)
	case bool:
		return e.Has(i) && e.vals[i].u != 0, true
	}
	return nil, false
}

// openTest opens testdata/bin/name both ways; the file is closed when
// the test ends.
func openTest(tb testing.TB, name string) (*dwarf.Data, *Data) {
	f, err := elfx.Open(testbin.Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	dd, err := f.DWARF()
	if err != nil {
		tb.Fatal(err)
	}
	d, err := Load(f)
	if err != nil {
		tb.Fatal(err)
	}
	return dd, d
}

// eachEntry calls fn with every entry w walks, failing the test on an
// error.
func eachEntry(t *testing.T, d *Data, w *Walker, fn func(e *Entry)) {
	for ui := range d.Units() {
		w.Reset(ui)
		for {
			e, err := w.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			fn(e)
		}
	}
}

// TestSkipChildren: skipping a subprogram's children (by DW_AT_sibling
// where GCC gives it, else by walking them) lands where debug/dwarf's
// SkipChildren does.
func TestSkipChildren(t *testing.T) {
	for _, name := range []string{"gcc-cold", "clang22-inl", "gcc-cold-dwarf4"} {
		dd, d := openTest(t, name)
		skip := func(tag dwarf.Tag) bool { return tag == dwarf.TagSubprogram || tag == dwarf.TagStructType }
		var got, want []dwarf.Offset
		w := d.NewWalker(dwarf.AttrName)
		eachEntry(t, d, w, func(e *Entry) {
			got = append(got, e.Offset)
			if skip(e.Tag) {
				w.SkipChildren()
			}
		})
		r := dd.Reader()
		for {
			e, err := skipNulls(r)
			if err != nil {
				t.Fatal(err)
			}
			if e == nil {
				break
			}
			want = append(want, e.Offset)
			if skip(e.Tag) {
				r.SkipChildren()
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %d entries, debug/dwarf %d", name, len(got), len(want))
		}
	}
}

// TestEntryAt reads every subprogram's abstract origin both ways.
func TestEntryAt(t *testing.T) {
	dd, d := openTest(t, "clang22-inl")
	w := d.NewWalker(dwarf.AttrAbstractOrigin, dwarf.AttrName)
	ref := d.NewWalker(dwarf.AttrName)
	ref.Reset(0) // positioned in the unit, its entry not yet read: EntryAt reads it for its bases
	r := dd.Reader()
	n := 0
	eachEntry(t, d, w, func(e *Entry) {
		o, ok := e.Ref(0)
		if !ok {
			return
		}
		x, err := ref.EntryAt(o)
		if err != nil {
			t.Fatal(err)
		}
		r.Seek(o)
		y, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		name, _ := x.String(0)
		if x.Offset != y.Offset || x.Tag != y.Tag || name != y.Val(dwarf.AttrName) {
			t.Errorf("at %#x: %v %q, debug/dwarf %v %v", o, x.Tag, name, y.Tag, y.Val(dwarf.AttrName))
		}
		n++
	})
	if n == 0 {
		t.Error("no abstract origins")
	}
}

// TestMalformed: cut and corrupted units give a *cursor.DecodeError
// naming the file and a section, never a panic or an endless walk.
func TestMalformed(t *testing.T) {
	abbrev := []byte{
		1, 0x11, 1, 0x03, 0x08, 0, 0, // 1: compile_unit, children, name string
		2, 0x2e, 0, 0x03, 0x0e, 0x49, 0x13, 0, 0, // 2: subprogram, name strp, type ref4
		0,
	}
	unit := func(body ...byte) []byte {
		h := []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8}
		h = append(h, body...)
		n := len(h) - 4
		h[0], h[1] = byte(n), byte(n>>8)
		return h
	}
	for _, tc := range []struct {
		name    string
		info    []byte
		section string
	}{
		{"unknown code", unit(1, 'a', 0, 9), ".debug_info"},
		{"unterminated code", unit(1, 'a', 0, 0x80), ".debug_info"},
		{"cut string", unit(1, 'a'), ".debug_info"},
		{"strp beyond .debug_str", unit(1, 'a', 0, 2, 0x40, 0, 0, 0, 0, 0, 0, 0), ".debug_str"},
		{"unit length beyond the section", []byte{0x40, 0, 0, 0, 4, 0}, ".debug_info"},
		{"version 9", []byte{2, 0, 0, 0, 9, 0}, ".debug_info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := walkAll(t, "x.elf", Sections{Info: tc.info, Abbrev: abbrev, Str: []byte("s\x00")})
			var de *cursor.DecodeError
			if !errors.As(err, &de) || de.Section != tc.section || !bytes.Contains([]byte(err.Error()), []byte("x.elf")) {
				t.Fatalf("err = %v, want a DecodeError in %s naming x.elf", err, tc.section)
			}
		})
	}
}

// walkAll walks every entry of secs reading every attribute and its
// ranges, following references, as the fuzz target does.
func walkAll(t testing.TB, file string, secs Sections) error {
	d, err := New(file, secs)
	if err != nil {
		return err
	}
	w := d.NewWalker(testAttrs...)
	ref := d.NewWalker(testAttrs...)
	var rs [][2]uint64
	for ui := range d.Units() {
		w.Reset(ui)
		for k := 0; ; k++ {
			e, err := w.Next()
			if err != nil || e == nil {
				if err != nil {
					return err
				}
				break
			}
			for i := range testAttrs {
				e.String(i)
				e.Int(i)
				e.Addr(i)
				e.Block(i)
				e.SecOffset(i)
				if o, ok := e.Ref(i); ok {
					if x, err := ref.EntryAt(o); err == nil {
						x.String(0)
						x.Ranges(nil)
					}
				}
			}
			rs, _ = e.Ranges(rs[:0])
			if k%3 == 1 {
				w.SkipChildren()
			}
		}
		if err := w.Err(); err != nil {
			return err
		}
	}
	return nil
}

// TestZdebug walks a copy of a test binary whose sections objcopy
// compressed in the GNU format before SHF_COMPRESSED (.zdebug_*).
func TestZdebug(t *testing.T) {
	objcopy := testbin.Tool(t, "objcopy")
	out := filepath.Join(t.TempDir(), "z")
	testbin.Run(t, objcopy, "--compress-debug-sections=zlib-gnu", testbin.Path(t, "clang22-inl"), out)
	f, err := elfx.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".zdebug_info") == nil {
		t.Fatal("objcopy left no .zdebug_info")
	}
	dd, err := f.DWARF()
	if err != nil || dd == nil {
		t.Fatalf("debug/dwarf: %v", err)
	}
	d, err := Load(f)
	if err != nil || d == nil {
		t.Fatalf("Load: %v, %v", d, err)
	}
	compareWalk(t, dd, d)
}

// TestBigEndian walks the DWARF of a big-endian object (clang 22 for
// 64-bit PowerPC), whose fixed-width values, string offsets and address
// and range list tables are in the ELF header's byte order.
func TestBigEndian(t *testing.T) {
	clang := testbin.Tool(t, "clang-22")
	dir := t.TempDir()
	src := filepath.Join(dir, "be.c")
	code := "static inline int sq(int x) { return x * x; }\nint g;\nint f(int a) { if (a > 3) g += sq(a); return sq(a + 1); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "be.o")
	// DWARF 4: an object's DWARF 5 string and address bases are
	// relocations, which debug/dwarf reads unapplied and fails on.
	testbin.Run(t, clang, "--target=powerpc64-linux-gnu", "-gdwarf-4", "-O2", "-c", src, "-o", obj)
	f, err := elfx.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.ByteOrder.String() != "BigEndian" {
		t.Fatalf("%s is %v", obj, f.ByteOrder)
	}
	dd, err := f.DWARF()
	if err != nil || dd == nil {
		t.Fatalf("debug/dwarf: %v", err)
	}
	d, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	compareWalk(t, dd, d)
}

// TestRareForms walks a hand-made DWARF 5 unit in each byte order with
// an entry whose forms no test binary has (strx3, addrx3, block2, block4, data16) and
// compares it with debug/dwarf: index 1 read in the wrong byte order, or
// a block or data16 read at the wrong length, makes the two differ.
func TestRareForms(t *testing.T) {
	for _, o := range []binary.AppendByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprint(o), func(t *testing.T) {
			u24 := func(b []byte, v uint32) []byte {
				if o == binary.BigEndian {
					return append(b, byte(v>>16), byte(v>>8), byte(v))
				}
				return append(b, byte(v), byte(v>>8), byte(v>>16))
			}
			abbrev := []byte{
				1, 0x11, 1, // 1: compile_unit, children
				0x72, 0x17, 0x73, 0x17, 0, 0, // str_offsets_base, addr_base: sec_offset
				2, 0x2e, 0, // 2: subprogram
				0x03, 0x27, 0x11, 0x2b, 0x12, 0x06, // name strx3, low_pc addrx3, high_pc data4
				0x02, 0x03, 0x1c, 0x1e, 0x40, 0x04, // location block2, const_value data16, frame_base block4
				0, 0, 0,
			}
			info := o.AppendUint32(nil, 0) // length, set below
			info = o.AppendUint16(info, 5)
			info = append(info, 1, 8) // DW_UT_compile, address size
			info = o.AppendUint32(info, 0)
			info = append(info, 1)         // abbreviation 1
			info = o.AppendUint32(info, 8) // str_offsets_base
			info = o.AppendUint32(info, 8) // addr_base
			info = append(info, 2)         // abbreviation 2
			info = u24(info, 1)            // name: string 1
			info = u24(info, 1)            // low_pc: address 1
			info = o.AppendUint32(info, 0x10)
			info = o.AppendUint16(info, 3)
			info = append(info, 0x9c, 0x9d, 0x9e)
			info = append(info, []byte("0123456789abcdef")...)
			info = o.AppendUint32(info, 2)
			info = append(info, 0x91, 0x00, 0)
			o.(binary.ByteOrder).PutUint32(info, uint32(len(info)-4))
			strOffs := o.AppendUint32(nil, 12)
			strOffs = o.AppendUint16(strOffs, 5)
			strOffs = o.AppendUint16(strOffs, 0)
			strOffs = o.AppendUint32(strOffs, 0)
			strOffs = o.AppendUint32(strOffs, 2)
			addr := o.AppendUint32(nil, 20)
			addr = o.AppendUint16(addr, 5)
			addr = append(addr, 8, 0)
			addr = o.AppendUint64(addr, 0x1000)
			addr = o.AppendUint64(addr, 0x2000)
			str := []byte("x\x00cu\x00")
			dd, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, str)
			if err != nil {
				t.Fatalf("debug/dwarf: %v", err)
			}
			for name, b := range map[string][]byte{".debug_str_offsets": strOffs, ".debug_addr": addr} {
				if err := dd.AddSection(name, b); err != nil {
					t.Fatalf("debug/dwarf: %v", err)
				}
			}
			d, err := New("rare.elf", Sections{Info: info, Abbrev: abbrev, Str: str, StrOffsets: strOffs, Addr: addr, ByteOrder: o.(binary.ByteOrder)})
			if err != nil {
				t.Fatal(err)
			}
			compareWalk(t, dd, d)
			w := d.NewWalker(dwarf.AttrName, dwarf.AttrLowpc)
			w.Reset(0)
			w.Next()
			e, err := w.Next()
			if err != nil || e == nil {
				t.Fatalf("Next: %v, %v", e, err)
			}
			name, _ := e.String(0)
			low, _ := e.Addr(1)
			if name != "cu" || low != 0x2000 {
				t.Errorf("name %q low_pc %#x, want \"cu\" 0x2000", name, low)
			}
		})
	}
}
