package bat

import (
	"encoding/binary"
	"math/bits"
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

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
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
	b = appendULEB(b, uint64(len(fs)))
	prevIndex := 0
	for _, f := range fs {
		b = appendULEB(b, f.addr-*prev)
		*prev = f.addr
		var skew uint32
		if cold {
			b = appendULEB(b, uint64(f.parent-prevIndex))
			prevIndex = f.parent
			if len(f.entries) > 0 {
				skew = f.entries[0].InputOffset
			}
			b = appendULEB(b, uint64(skew))
		} else {
			b = binary.LittleEndian.AppendUint64(b, f.hash)
			b = appendULEB(b, f.numBlocks)
			b = appendULEB(b, uint64(len(f.sec)))
		}
		b = appendULEB(b, uint64(len(f.entries)))
		equal := 0
		for _, e := range f.entries {
			if e.OutputOffset != e.InputOffset-skew {
				break
			}
			equal++
		}
		b = appendULEB(b, uint64(equal))
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
			b = appendULEB(b, out-*prev)
			*prev = out
			v := uint64(e.InputOffset) << 1
			if e.Branch {
				v |= branchEntry
			}
			if j >= equal {
				b = appendSLEB(b, int64(v-in))
			}
			in = v
			if !e.Branch {
				b = binary.LittleEndian.AppendUint64(b, e.BlockHash)
				b = appendULEB(b, uint64(e.BlockIndex)-index) // wraps, as size_t does
				index = uint64(e.BlockIndex)
			}
		}
		var off uint32
		for _, s := range f.sec {
			b = appendULEB(b, uint64(s-off))
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
