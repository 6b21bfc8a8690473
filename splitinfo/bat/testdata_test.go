package bat_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/arch/x86/x86asm"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
)

// The BOLT outputs of testdata/gen.sh and the inputs they were made from.
var bolted = []struct {
	name, input string
	hot, cold   []string // fragment names, in table order
	parents     map[string]string
	secondary   map[string][]uint32
	deleted     map[string][]uint32 // input offsets of deleted blocks
}{
	{
		name: "bolt19", input: "bolt-input",
		hot:     []string{"_init", "main", "_start", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux", "frame_dummy", "tally", "lookup", "_fini"},
		cold:    []string{"main.cold.0", "tally.cold.0", "lookup.cold.0"},
		parents: map[string]string{"main.cold.0": "main", "tally.cold.0": "tally", "lookup.cold.0": "lookup"},
		// The deleted blocks are alignment NOPs (lookup's padding between
		// the switch cases).
		deleted: map[string][]uint32{"main": {0x1cc}, "deregister_tm_clones": {0x29}, "register_tm_clones": {0x39},
			"__do_global_dtors_aux": {0x35, 0x39}, "frame_dummy": {0x9}, "tally": {0x5e}, "lookup": {0x18, 0x27, 0x37, 0x47}},
	},
	{
		name: "bolt22", input: "bolt-input",
		hot:     []string{"_init", "main", "_start", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux", "frame_dummy", "tally", "lookup", "_fini"},
		cold:    []string{"main.cold.0", "tally.cold.0", "lookup.cold.0"},
		parents: map[string]string{"main.cold.0": "main", "tally.cold.0": "tally", "lookup.cold.0": "lookup"},
		// The deleted blocks are alignment NOPs (lookup's padding between
		// the switch cases).
		deleted: map[string][]uint32{"main": {0x1cc}, "deregister_tm_clones": {0x29}, "register_tm_clones": {0x39},
			"__do_global_dtors_aux": {0x35, 0x39}, "frame_dummy": {0x9}, "tally": {0x5e}, "lookup": {0x18, 0x27, 0x37, 0x47}},
	},
	{
		// GCC's tally.cold and lookup.cold are functions of their own for
		// BOLT (hot table); the jumps back from them are secondary entry
		// points of tally (+0x52) and lookup (+0x25).
		name: "bolt19-over-gcc", input: "bolt-gcc-input",
		hot:       []string{"_init", "main", "_start", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux", "frame_dummy", "tally", "lookup", "_fini", "tally.cold", "lookup.cold"},
		cold:      []string{"main.cold.0", "tally.cold.0"},
		parents:   map[string]string{"main.cold.0": "main", "tally.cold.0": "tally"},
		secondary: map[string][]uint32{"tally": {0x52}, "lookup": {0x25}},
		deleted: map[string][]uint32{"main": {0x1cc}, "deregister_tm_clones": {0x29}, "register_tm_clones": {0x39},
			"__do_global_dtors_aux": {0x35, 0x39}, "frame_dummy": {0x9}, "tally": {0x62}},
	},
	{
		name: "bolt22-over-gcc", input: "bolt-gcc-input",
		hot:       []string{"_init", "main", "_start", "deregister_tm_clones", "register_tm_clones", "__do_global_dtors_aux", "frame_dummy", "tally", "lookup", "_fini", "tally.cold", "lookup.cold"},
		cold:      []string{"main.cold.0", "tally.cold.0"},
		parents:   map[string]string{"main.cold.0": "main", "tally.cold.0": "tally"},
		secondary: map[string][]uint32{"tally": {0x52}, "lookup": {0x25}},
		deleted: map[string][]uint32{"main": {0x1cc}, "deregister_tm_clones": {0x29}, "register_tm_clones": {0x39},
			"__do_global_dtors_aux": {0x35, 0x39}, "frame_dummy": {0x9}, "tally": {0x62}},
	},
}

// code is the disassembly of one function.
type code struct {
	addr  uint64
	insts map[uint32]x86asm.Inst // by offset
	offs  []uint32               // instruction offsets, sorted
}

// disassemble returns the code of every function symbol of bin by name.
func disassemble(t *testing.T, bin string) map[string]*code {
	t.Helper()
	f, err := elfx.Open(testbin.Path(t, bin))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.CodeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(syms, func(a, b elfx.Symbol) int { return cmp.Compare(a.Value, b.Value) })
	out := map[string]*code{}
	for i, s := range syms {
		size := s.Size
		if size == 0 && int(s.Section) < len(f.Sections) {
			// _init, _fini and the crtstuff functions have no size.
			sec := f.Sections[s.Section]
			size = sec.Addr + sec.Size - s.Value
			if i+1 < len(syms) && syms[i+1].Value > s.Value {
				size = min(size, syms[i+1].Value-s.Value)
			}
		}
		if size == 0 || !s.IsFunc() {
			continue
		}
		data, err := f.ReadVA(s.Value, size)
		if err != nil {
			continue
		}
		c := &code{addr: s.Value, insts: map[uint32]x86asm.Inst{}}
		for off := 0; off < len(data); {
			inst, err := x86asm.Decode(data[off:], 64)
			if err != nil {
				break
			}
			if bytes.HasPrefix(data[off:], endbr64) {
				inst = x86asm.Inst{Op: x86asm.NOP, Len: len(endbr64)} // x86asm sees a bare REP
			}
			c.insts[uint32(off)] = inst
			c.offs = append(c.offs, uint32(off))
			off += inst.Len
		}
		out[s.Name] = c
	}
	return out
}

var endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}

func isControl(in x86asm.Inst) bool {
	switch in.Op {
	case x86asm.CALL, x86asm.RET, x86asm.JMP, x86asm.UD2:
		return true
	}
	return strings.HasPrefix(in.Op.String(), "J") || strings.HasPrefix(in.Op.String(), "LOOP")
}

func isNop(in x86asm.Inst) bool {
	return in.Op == x86asm.NOP || in.Op == x86asm.XCHG && in.Args[0] == x86asm.AX && in.Args[1] == x86asm.AX
}

// TestBOLTOutputs decodes the notes of BOLT 19 and BOLT 22 and checks every
// decoded address against the symbol tables and every input offset
// against the input binary's code.
func TestBOLTOutputs(t *testing.T) {
	tables := map[string]*bat.Table{}
	for _, tt := range bolted {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := bat.Open(testbin.Path(t, tt.name))
			if err != nil {
				t.Fatal(err)
			}
			tables[tt.name] = tab
			var hot, cold []string
			for f := range tab.Hot() {
				hot = append(hot, f.Name)
			}
			for f := range tab.Cold() {
				cold = append(cold, f.Name)
			}
			if diff := gocmp.Diff(tt.hot, hot); diff != "" {
				t.Errorf("hot table (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tt.cold, cold); diff != "" {
				t.Errorf("cold table (-want +got):\n%s", diff)
			}
			in := disassemble(t, tt.input)
			out := disassemble(t, tt.name)
			for f := range tab.All() {
				checkFunc(t, tab, f, in, out, tt.parents, tt.secondary)
			}
			deleted := map[string][]uint32{}
			for f := range tab.Hot() {
				checkBlocks(t, f)
				for _, e := range f.Entries {
					if e.Deleted {
						deleted[f.Name] = append(deleted[f.Name], e.InputOffset)
					}
				}
			}
			if diff := gocmp.Diff(tt.deleted, deleted); diff != "" {
				t.Errorf("deleted blocks (-want +got):\n%s", diff)
			}
		})
	}
	for _, pair := range [][2]string{{"bolt19", "bolt22"}, {"bolt19-over-gcc", "bolt22-over-gcc"}} {
		a, b := tables[pair[0]], tables[pair[1]]
		if a == nil || b == nil {
			continue
		}
		if diff := gocmp.Diff(slices.Collect(a.All()), slices.Collect(b.All()), cmpopts.IgnoreUnexported(bat.Func{})); diff != "" {
			t.Errorf("%s and %s decode differently (-19 +22):\n%s", pair[0], pair[1], diff)
		}
	}
}

func checkFunc(t *testing.T, tab *bat.Table, f *bat.Func, in, out map[string]*code, parents map[string]string, secondary map[string][]uint32) {
	t.Helper()
	where := func(e *bat.Entry) string {
		return fmt.Sprintf("%s+%#x (input %s+%#x)", f.Name, e.OutputOffset, f.Parent().Name, e.InputOffset)
	}
	oc := out[f.Name]
	if oc == nil || oc.addr != f.Addr {
		t.Errorf("fragment at %#x (%q): no function symbol there", f.Addr, f.Name)
		return
	}
	if f.Cold {
		if want := parents[f.Name]; f.Parent().Name != want || f.Parent().Cold {
			t.Errorf("%s: parent %q, want %q", f.Name, f.Parent().Name, want)
		}
		if !slices.Contains(f.Parent().Fragments(), f) {
			t.Errorf("%s is not among its parent's fragments", f.Name)
		}
	} else if diff := gocmp.Diff(secondary[f.Name], f.SecondaryEntries, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: secondary entry points (-want +got):\n%s", f.Name, diff)
	}
	ic := in[f.Parent().Name]
	if ic == nil {
		t.Errorf("%s: input function %q not in the input binary", f.Name, f.Parent().Name)
		return
	}
	blocks := map[uint32]bool{}
	for _, g := range f.Fragments() {
		for _, e := range g.Entries {
			if !e.Branch {
				blocks[e.InputOffset] = true
			}
		}
	}
	for _, s := range f.SecondaryEntries {
		if _, ok := ic.insts[s]; !ok {
			t.Errorf("%s: secondary entry point %#x is not an input instruction", f.Name, s)
		}
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Deleted {
			if e.Branch || f.Cold {
				t.Errorf("%s: deleted entry is a branch or in a cold fragment", where(e))
			}
		} else {
			if uint64(e.OutputOffset) >= f.Size {
				t.Errorf("%s: past the fragment's end %#x", where(e), f.Size)
			}
			if _, ok := oc.insts[e.OutputOffset]; !ok {
				t.Errorf("%s: not an output instruction", where(e))
			}
		}
		inst, ok := ic.insts[e.InputOffset]
		if !ok {
			t.Errorf("%s: not an input instruction", where(e))
			continue
		}
		if !e.Branch {
			if e.BlockHash&0xffff != uint64(e.InputOffset&0xffff) {
				t.Errorf("%s: block hash %#x does not hold the input offset", where(e), e.BlockHash)
			}
			continue
		}
		// A branch entry is a call or the last instruction of an input
		// block: control leaves the block there.
		if isControl(inst) {
			continue
		}
		next := e.InputOffset + uint32(inst.Len)
		for {
			ni, ok := ic.insts[next]
			if !ok || !isNop(ni) || blocks[next] {
				break
			}
			next += uint32(ni.Len)
		}
		if !blocks[next] {
			t.Errorf("%s: branch entry %v is neither a control transfer nor the end of an input block", where(e), inst)
		}
	}
}

// checkBlocks: the block entries of all fragments of an input function
// (deleted blocks included) name each input block exactly once.
func checkBlocks(t *testing.T, f *bat.Func) {
	t.Helper()
	var idx []uint32
	seen := map[uint32]bool{}
	for _, g := range f.Fragments() {
		for _, e := range g.Entries {
			if !e.Branch {
				idx = append(idx, e.BlockIndex)
				if seen[e.InputOffset] {
					t.Errorf("%s: input block %#x has two entries", f.Name, e.InputOffset)
				}
				seen[e.InputOffset] = true
			}
		}
	}
	slices.Sort(idx)
	want := make([]uint32, f.NumBlocks)
	for i := range want {
		want[i] = uint32(i)
	}
	if diff := gocmp.Diff(want, idx, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: block indexes of %d blocks (-want +got):\n%s", f.Name, f.NumBlocks, diff)
	}
}

func TestNoBAT(t *testing.T) {
	for _, name := range []string{"bolt-input", "demo"} {
		_, err := bat.Open(testbin.Path(t, name))
		if !errors.Is(err, bat.ErrNoBAT) {
			t.Errorf("Open(%s) = %v, want ErrNoBAT", name, err)
		}
	}
}
