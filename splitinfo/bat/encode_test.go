package bat

import (
	"encoding/binary"
	"math/bits"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// The test encoder writes notes the way BoltAddressTranslation::write and
// writeMaps do, so that tests can build notes with any content.

// testFunc is a fragment to encode. For a cold fragment, parent is the
// index of its hot fragment in the hot list.
type testFunc struct {
	addr      uint64
	hash      uint64
	numBlocks uint64
	parent    int
	entries   []Entry
	sec       []uint32
}

// appendNote appends a whole .note.bolt_bat section.
func appendNote(b []byte, hot, cold []testFunc) []byte {
	desc := appendDesc(nil, hot, cold)
	b = binary.LittleEndian.AppendUint32(b, 5)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, NoteType)
	b = append(b, "BOLT\x00\x00\x00\x00"...)
	return append(b, desc...)
}

func appendDesc(b []byte, hot, cold []testFunc) []byte {
	var prev uint64
	b = appendTable(b, hot, false, &prev)
	return appendTable(b, cold, true, &prev)
}

func appendTable(b []byte, fs []testFunc, cold bool, prev *uint64) []byte {
	b = cursor.AppendULEB128(b, uint64(len(fs)))
	prevIndex := 0
	for _, f := range fs {
		b = cursor.AppendULEB128(b, f.addr-*prev)
		*prev = f.addr
		var skew uint32
		if cold {
			b = cursor.AppendULEB128(b, uint64(f.parent-prevIndex))
			prevIndex = f.parent
			if len(f.entries) > 0 {
				skew = f.entries[0].InputOffset
			}
			b = cursor.AppendULEB128(b, uint64(skew))
		} else {
			b = binary.LittleEndian.AppendUint64(b, f.hash)
			b = cursor.AppendULEB128(b, f.numBlocks)
			b = cursor.AppendULEB128(b, uint64(len(f.sec)))
		}
		b = cursor.AppendULEB128(b, uint64(len(f.entries)))
		equal := 0
		for _, e := range f.entries {
			if e.OutputOffset != e.InputOffset-skew {
				break
			}
			equal++
		}
		b = cursor.AppendULEB128(b, uint64(equal))
		if equal > 0 {
			mask := make([]byte, (equal+7)/8)
			for j, e := range f.entries[:equal] {
				if e.Branch {
					mask[j/8] |= 1 << (j % 8)
				}
			}
			b = append(b, mask...)
		}
		var in uint64
		var index uint64
		for j, e := range f.entries {
			out := f.addr + uint64(e.OutputOffset)
			b = cursor.AppendULEB128(b, out-*prev)
			*prev = out
			v := uint64(e.InputOffset) << 1
			if e.Branch {
				v |= branchEntry
			}
			if j >= equal {
				b = cursor.AppendSLEB128(b, int64(v-in))
			}
			in = v
			if !e.Branch {
				b = binary.LittleEndian.AppendUint64(b, e.BlockHash)
				b = cursor.AppendULEB128(b, uint64(e.BlockIndex)-index) // wraps, as size_t does
				index = uint64(e.BlockIndex)
			}
		}
		var off uint32
		for _, s := range f.sec {
			b = cursor.AppendULEB128(b, uint64(s-off))
			off = s
		}
	}
	return b
}

// blockHash is a BlendedBlockHash-like value whose low 16 bits are the
// input offset, as BOLT's are.
func blockHash(in uint32) uint64 {
	return bits.RotateLeft64(0x9e3779b97f4a7c15*uint64(in+1), 16)&^0xffff | uint64(in&0xffff)
}
