package splitinfo

import (
	"errors"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo/mip"
)

// mipMap is a Machine IR Profile map of a linked file.
type mipMap struct{ *mip.Binary }

func readMIP(f *elfx.File) (sourceData, error) {
	bin, err := mip.FromELF(f)
	if errors.Is(err, mip.ErrNoMIP) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if bin.Map == nil || !bin.HasRaw {
		return nil, nil // the map was extracted, or nothing locates the functions
	}
	return mipMap{bin}, nil
}

// merge merges the Machine IR Profile map (__llvm_mipmap) of the file,
// when it has one: each function's [address, address+size) is the entry
// fragment of a procedure, and a non-entry block that the compiler moved
// out of that range (splitting) puts the fragment that starts at the
// block into the same procedure. Without symbols, the map makes the
// procedures. Block numbers give moved fragments their pre-split order
// when no BB address map does.
func (bin mipMap) merge(b *builder, keys map[uint64]uint32) {
	for i := range bin.Map.Funcs {
		fn := &bin.Map.Funcs[i]
		if fn.Size == 0 {
			continue
		}
		entry := bin.Addr(fn)
		r := Range{entry, entry + uint64(fn.Size)}
		owner := b.entryOrNewProc(r, fn.Name, FromMIP)
		if owner == nil {
			continue
		}
		owner.Sources |= FromMIP
		ev := evidence{src: FromMIP, name: fn.Name}
		b.claim(owner, ev, r)
		for k, off := range fn.BlockOffsets {
			blk := mip.BlockAddr(entry, off)
			if r.Contains(blk) {
				continue
			}
			// The map knows where a moved block starts, not where its
			// fragment ends: only a fragment known to start there counts.
			if ref, ok := b.fragAt[blk]; ok && !ref.p.dead {
				b.claim(owner, ev, ref.p.Fragments[ref.i].Range)
				if _, ok := keys[blk]; !ok && b.blocks == nil {
					keys[blk] = uint32(k + 1)
				}
			} else if j := owner.Fragment(blk); j > 0 {
				owner.Fragments[j].Sources |= FromMIP
			}
		}
	}
}
