package adapter

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// FuzzUnwindRegisters runs call frame instructions — a CIE's initial
// ones and an FDE's — to the row at a PC, and applies that row to a
// frame's registers with memory that fails at some addresses: every
// register rule (offset, val_offset, register, same_value, undefined,
// expression, val_expression, restore, remembered states) on any bytes is
// an error or registers, never a panic.
func FuzzUnwindRegisters(f *testing.F) {
	for _, name := range []string{"clang22-inv", "gcc-inv", "bolt22", "cgo"} {
		r := newResolver(f, name)
		tab, err := r.exe.load()
		if err != nil {
			f.Fatal(err)
		}
		fdes, err := tab.frames()
		if err != nil {
			f.Fatal(err)
		}
		for i, fde := range fdes {
			if i%4 == 0 {
				f.Add(fde.CIE.InitialInstructions, fde.Instructions, uint16(fde.End()-fde.Begin())/2, int64(fde.CIE.DataAlignmentFactor), uint64(0x7ffc0000))
			}
		}
	}
	// DW_CFA_expression rbx: CFA-16; DW_CFA_val_expression rbp: rsp+8;
	// DW_CFA_def_cfa_expression: rsp+16.
	f.Add([]byte{0x0c, 7, 8, 0x90, 1}, []byte{0x10, 3, 3, 0x11, 0x70, 0x22, 0x16, 6, 2, 0x77, 8, 0x0f, 2, 0x77, 16}, uint16(1), int64(-8), uint64(0x7ffc0000))
	f.Fuzz(func(t *testing.T, cieInstr, fdeInstr []byte, pcOff uint16, daf int64, sp uint64) {
		cie := &frame.CommonInformationEntry{CodeAlignmentFactor: 1, DataAlignmentFactor: daf, ReturnAddressRegister: regRIP, InitialInstructions: cieInstr}
		row, err := cfiRowOf(cie, fdeInstr, 0x1000, 0x1000+uint64(pcOff))
		if err != nil {
			return
		}
		u := unwinder{mem: &memory{read: func(addr uint64, n int) ([]byte, error) {
			if addr%7 == 0 || n > 1<<16 {
				return nil, errors.New("unmapped")
			}
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(addr + uint64(i))
			}
			return b, nil
		}}}
		var regs regSet
		for n := range uint64(numReg) {
			regs.set(n, sp+n*8)
		}
		for _, entry := range []bool{true, false} {
			caller, cfa, err := u.apply(&row, &regs, entry, 0, 0)
			if err == nil && caller.v[regRSP] != cfa {
				t.Errorf("caller's stack pointer %#x is not the CFA %#x", caller.v[regRSP], cfa)
			}
		}
	})
}

// TestUnwindRules applies each kind of register rule to made-up
// registers and memory, with the CFA rules of DW_CFA_def_cfa and
// DW_CFA_def_cfa_expression, and checks DW_CFA_restore gives back the
// CIE's rule (none for rbx: same value, as gdb takes it), which Delve's
// EstablishFrame makes undefined.
func TestUnwindRules(t *testing.T) {
	const sp = 0x7ffc0000
	mem := map[uint64]uint64{sp + 8: 0x401000, sp: 0xb0b0, sp - 8: 0xc0c0}
	u := unwinder{mem: &memory{read: func(addr uint64, n int) ([]byte, error) {
		b := make([]byte, n)
		for i := 0; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], mem[addr+uint64(i)])
		}
		return b, nil
	}}}
	cie := &frame.CommonInformationEntry{CodeAlignmentFactor: 1, DataAlignmentFactor: -8, ReturnAddressRegister: regRIP,
		InitialInstructions: []byte{0x0c, 7, 8, 0x90, 1}} // def_cfa rsp+8; ra at CFA-8
	for _, tc := range []struct {
		name  string
		instr []byte
		want  map[uint64]uint64 // register → value; absent from want and not set: unknown
		gone  []uint64          // registers that must be unknown
	}{
		{"offset", []byte{0x0e, 16, 0x83, 2}, map[uint64]uint64{3: 0xb0b0, regRIP: 0x401000, regRSP: sp + 16}, nil},
		{"same value and none", []byte{0x08, 3}, map[uint64]uint64{3: 12, 12: 12, regRIP: 0xb0b0}, []uint64{0, 5}},
		{"register", []byte{0x09, 3, 12}, map[uint64]uint64{3: 12}, nil},
		{"undefined", []byte{0x07, 13}, nil, []uint64{13}},
		{"val_offset is factored", []byte{0x14, 6, 1}, map[uint64]uint64{6: sp}, nil},
		{"expression, CFA pushed first", []byte{0x10, 3, 2, 0x38, 0x1c}, map[uint64]uint64{3: 0xb0b0}, nil},      // *(CFA-8)
		{"val_expression", []byte{0x16, 6, 2, 0x7c, 5}, map[uint64]uint64{6: 17}, nil},                           // rbx+5
		{"CFA expression", []byte{0x0f, 2, 0x77, 16}, map[uint64]uint64{regRSP: sp + 16, regRIP: 0x401000}, nil}, // rsp+16
		{"restore gives the CIE's rule", []byte{0x83, 3, 0x41, 0xc3}, map[uint64]uint64{3: 12}, nil},             // rbx saved, then restored
		{"remember and restore state", []byte{0x0a, 0x83, 3, 0x41, 0x0b}, map[uint64]uint64{3: 12}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, err := cfiRowOf(cie, tc.instr, 0x1000, 0x1001)
			if err != nil {
				t.Fatal(err)
			}
			var regs regSet
			for n := range uint64(numReg) {
				regs.set(n, n)
			}
			regs.set(3, 12)
			regs.set(regRSP, sp)
			caller, _, err := u.apply(&row, &regs, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for n, want := range tc.want {
				if got, ok := caller.get(n); !ok || got != want {
					t.Errorf("register %d = %#x (known %v); want %#x", n, got, ok, want)
				}
			}
			for _, n := range tc.gone {
				if v, ok := caller.get(n); ok {
					t.Errorf("register %d = %#x; want unknown", n, v)
				}
			}
		})
	}
}
