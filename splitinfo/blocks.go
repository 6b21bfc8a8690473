package splitinfo

import (
	"slices"

	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

// Block is a basic block of a procedure, from the file's LLVM basic-block
// address map (SHT_LLVM_BB_ADDR_MAP): its ID and start address.
type Block struct {
	ID   uint32
	Addr uint64
}

// Blocks returns the basic blocks of p per fragment of p, in the map's
// order, or nil if the file's map has no function at p's entry. Block IDs
// follow the function's layout before splitting, so they say where a
// moved block belongs.
func (t *Table) Blocks(p *Proc) [][]Block {
	if t.blocks == nil {
		return nil
	}
	funcs := t.blocks.Funcs()
	i := slices.IndexFunc(funcs, func(fn bbaddrmap.Func) bool { return fn.Addr() == p.Entry })
	if i < 0 {
		return nil
	}
	frags := make([][]Block, len(p.Fragments))
	for _, rg := range funcs[i].Ranges {
		for _, b := range rg.Blocks {
			addr := rg.Addr + uint64(b.Offset)
			if loc, ok := t.Lookup(addr); ok && loc.Proc == p {
				frags[loc.Frag] = append(frags[loc.Frag], Block{b.ID, addr})
			}
		}
	}
	return frags
}
