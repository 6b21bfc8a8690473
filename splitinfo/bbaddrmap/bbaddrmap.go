// Package bbaddrmap decodes LLVM's basic-block address map, the
// .llvm_bb_addr_map section that clang writes with
// -fbasic-block-address-map (seeds 000 and 001: the RFC "A
// Section-Metadata-Based Approach for Mapping Binary Addresses to Machine
// Basic Blocks" and the reviews D85408, D88199 and D121346), in every
// version upstream LLVM has defined, as llvm/lib/Object/ELF.cpp
// (decodeBBAddrMapImpl; llvm/lib/Object/BBAddrMap.cpp upstream today) and
// llvm/include/llvm/Object/ELFTypes.h read it:
//
//   - section type SHT_LLVM_BB_ADDR_MAP_V0 (0x6fff4c08): version 0 with no
//     version and feature bytes (LLVM 14);
//   - section type SHT_LLVM_BB_ADDR_MAP (0x6fff4c0a): a version byte per
//     function, then a feature field, one byte before version 5 and two
//     bytes (in the file's byte order) from version 5. Version 0 measures
//     block offsets from the range's start, later versions from the end of
//     the previous block; version 2 adds block IDs, 3 callsite end
//     offsets, 4 block hashes, 5 the wider feature field and post-link CFG
//     counts. Upstream LLVM now rejects versions 0 and 1; this package
//     keeps them, as seed 001 promises backward compatibility.
//
// One function record is, with [x] present only under feature or version
// x (ULEB = unsigned LEB128):
//
//	u8 version, u8|u16 features                     (not in _V0 sections)
//	[MultiBBRange] ULEB number of ranges (> 0)
//	per range:  address (4 or 8 bytes, relocated in ET_REL files),
//	            ULEB number of blocks,
//	            per block (none with OmitBBEntries):
//	              [v>=2] ULEB ID
//	              ULEB offset (v0: from the range start; else from the end of the previous block)
//	              [CallsiteEndOffsets] ULEB count, ULEB deltas (each from the previous callsite end)
//	              ULEB size (from the last callsite end)
//	              ULEB metadata (HasReturn|HasTailCall|IsEHPad|CanFallThrough|HasIndirectBranch)
//	              [BBHash] u64 hash
//	[FuncEntryCount] ULEB function entry count
//	[BBFreq|BrProb] per block of all ranges:
//	              [BBFreq] ULEB frequency, [PostLinkCfg] ULEB post-link frequency
//	              [BrProb] ULEB successor count, per successor:
//	                       ULEB ID, ULEB probability, [PostLinkCfg] ULEB post-link frequency
//
// Values LLVM reads as uint32 (counts, IDs, offsets, sizes, metadata,
// probabilities, post-link counts) over 32 bits are errors, as are unknown
// feature or metadata bits, a feature used below its version (callsite
// offsets before 3, hashes before 4, post-link CFG before 5, any feature
// before 2), a zero range count and versions above 5. Every error is a
// *cursor.DecodeError with the section and the offset of the offending
// field (for a zero range count, the count's own offset; LLVM names the
// byte after it).
//
// Where this package and llvm-readobj 22 differ on purpose:
//   - it reads versions 0 and 1 and SHT_LLVM_BB_ADDR_MAP_V0 sections;
//   - in relocatable objects an address is the relocation's symbol value
//     plus its addend, in the symbol's section; LLVM takes the addend
//     alone, truncated to 32 bits, and fails on SHT_REL sections;
//   - block offsets and sizes whose sums overflow 32 bits are errors;
//     LLVM wraps them;
//   - a count larger than the bytes left is an error at once; given a
//     successor count of 2^35, llvm-readobj loops for minutes.
//
// A Decoder streams one section's functions; Read and ReadFile decode a
// whole file, and an Index maps addresses to blocks.
package bbaddrmap

import (
	"debug/elf"
	"strconv"
	"strings"
)

// Section types of the map.
const (
	// SHT_LLVM_BB_ADDR_MAP_V0 is the version-0 section type of LLVM 14 and
	// earlier, without version or feature bytes.
	SHT_LLVM_BB_ADDR_MAP_V0 elf.SectionType = 0x6fff4c08
	// SHT_LLVM_BB_ADDR_MAP is the versioned section type of LLVM 15 and later.
	SHT_LLVM_BB_ADDR_MAP elf.SectionType = 0x6fff4c0a
)

// MaxVersion is the newest map version this package reads.
const MaxVersion = 5

// Features are a function record's optional parts (BBAddrMap::Features).
type Features uint16

// Feature bits.
const (
	// FuncEntryCount: the PGO analysis has the function entry count.
	FuncEntryCount Features = 1 << iota
	// BBFreq: the PGO analysis has a frequency for every block.
	BBFreq
	// BrProb: the PGO analysis has every block's successors with branch
	// probabilities.
	BrProb
	// MultiBBRange: the function has a range count and may have several
	// ranges (it is split).
	MultiBBRange
	// OmitBBEntries: block counts are recorded but the blocks are not.
	OmitBBEntries
	// CallsiteEndOffsets: every block lists where its calls end (version 3).
	CallsiteEndOffsets
	// BBHash: every block has a 64-bit hash (version 4).
	BBHash
	// PostLinkCfg: the PGO analysis has post-link block and edge counts
	// (version 5).
	PostLinkCfg

	knownFeatures = PostLinkCfg<<1 - 1
)

var featureNames = []string{"FuncEntryCount", "BBFreq", "BrProb", "MultiBBRange",
	"OmitBBEntries", "CallsiteEndOffsets", "BBHash", "PostLinkCfg"}

// String returns the set bits' names joined by "|", or "0".
func (f Features) String() string { return bitNames(uint64(f), featureNames) }

// HasPGO reports whether records with these features carry a PGO analysis.
func (f Features) HasPGO() bool { return f&(FuncEntryCount|BBFreq|BrProb) != 0 }

// hasPGOBlocks reports whether the PGO analysis has per-block data.
func (f Features) hasPGOBlocks() bool { return f&(BBFreq|BrProb) != 0 }

// minVersion is the lowest version in which every bit of f may be set.
func (f Features) minVersion() uint8 {
	switch {
	case f&PostLinkCfg != 0:
		return 5
	case f&BBHash != 0:
		return 4
	case f&CallsiteEndOffsets != 0:
		return 3
	case f != 0:
		return 2
	}
	return 0
}

// Metadata describes how a block ends (BBEntry::Metadata).
type Metadata uint8

// Metadata bits.
const (
	// HasReturn: the block ends with a return or a tail call.
	HasReturn Metadata = 1 << iota
	// HasTailCall: the block ends with a tail call.
	HasTailCall
	// IsEHPad: the block is an exception-handling landing pad.
	IsEHPad
	// CanFallThrough: the block may fall through to the next one.
	CanFallThrough
	// HasIndirectBranch: the block ends with an indirect branch.
	HasIndirectBranch

	knownMetadata = HasIndirectBranch<<1 - 1
)

var metadataNames = []string{"HasReturn", "HasTailCall", "IsEHPad", "CanFallThrough", "HasIndirectBranch"}

// String returns the set bits' names joined by "|", or "0".
func (m Metadata) String() string { return bitNames(uint64(m), metadataNames) }

func bitNames(v uint64, names []string) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for i, n := range names {
		if v&(1<<i) != 0 {
			parts = append(parts, n)
			v &^= 1 << i
		}
	}
	if v != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(v, 16))
	}
	return strings.Join(parts, "|")
}

// Func is one function record: its ranges of blocks and its PGO analysis.
type Func struct {
	// Offset is the section offset of the record.
	Offset int64
	// Version is the record's version; 0 in SHT_LLVM_BB_ADDR_MAP_V0
	// sections.
	Version uint8
	// Features are the record's optional parts.
	Features Features
	// Ranges are the function's contiguous pieces; there is at least one,
	// and Ranges[0] begins at the function's entry. More than one means
	// the function is split.
	Ranges []Range
	// Callsites holds the callsite end offsets of all the function's
	// blocks (CallsiteEndOffsets), block after block; see
	// Func.CallsiteEndOffsets.
	Callsites []uint32
	// FuncEntryCount is the PGO function entry count (FuncEntryCount).
	FuncEntryCount uint64
	// PGO has one entry per block, for the blocks of all ranges in order,
	// when Features has BBFreq or BrProb; it is empty otherwise.
	PGO []PGOBlock
	// Successors holds the successors of all PGO blocks (BrProb), block
	// after block; see Func.SuccessorsOf.
	Successors []Successor
}

// CallsiteEndOffsets returns the offsets, relative to the start of block
// b of f, of the end of each of its call instructions.
func (f *Func) CallsiteEndOffsets(b *Block) []uint32 {
	if b.NumCalls == 0 || uint64(b.FirstCall)+uint64(b.NumCalls) > uint64(len(f.Callsites)) {
		return nil
	}
	return f.Callsites[b.FirstCall : b.FirstCall+b.NumCalls : b.FirstCall+b.NumCalls]
}

// SuccessorsOf returns the successors of PGO block p of f.
func (f *Func) SuccessorsOf(p *PGOBlock) []Successor {
	if p.NumSuccs == 0 || uint64(p.FirstSucc)+uint64(p.NumSuccs) > uint64(len(f.Successors)) {
		return nil
	}
	return f.Successors[p.FirstSucc : p.FirstSucc+p.NumSuccs : p.FirstSucc+p.NumSuccs]
}

// Addr returns the function's entry address, the start of its first range.
func (f *Func) Addr() uint64 {
	if len(f.Ranges) == 0 {
		return 0
	}
	return f.Ranges[0].Addr
}

// NumBlocks returns the number of blocks in all ranges.
func (f *Func) NumBlocks() int {
	n := 0
	for i := range f.Ranges {
		n += len(f.Ranges[i].Blocks)
	}
	return n
}

// Range is a contiguous piece of a function.
type Range struct {
	// Addr is where the range starts: a virtual address in executables
	// and shared objects; in relocatable objects, an offset within the
	// section Section, from the relocation of the address field (symbol
	// value plus addend).
	Addr uint64
	// Section is, in relocatable objects, the index of the section Addr is
	// relative to (that of the relocation's symbol); 0 for linked files
	// and absolute symbols.
	Section elf.SectionIndex
	// NumBlocks is the block count the record states. It equals
	// len(Blocks) unless the function has OmitBBEntries.
	NumBlocks uint32
	// Blocks are the range's basic blocks in address order.
	Blocks []Block
}

// Block is one basic block. It holds no pointers, so that large maps cost
// the garbage collector nothing to scan.
type Block struct {
	// ID is the block's ID within its function (the machine basic block
	// number); before version 2, its index within the range.
	ID uint32
	// Offset is where the block starts, relative to its range's Addr.
	Offset uint32
	// Size is the block's length in bytes.
	Size uint32
	// Metadata says how the block ends.
	Metadata Metadata
	// FirstCall and NumCalls locate the block's callsite end offsets in
	// its function's Callsites (see Func.CallsiteEndOffsets); both are 0
	// when it has none.
	FirstCall, NumCalls uint32
	// Hash is the block's hash (BBHash).
	Hash uint64
}

// PGOBlock is one block's PGO analysis.
type PGOBlock struct {
	// Freq is the block frequency (BBFreq), relative to the entry block's.
	Freq uint64
	// PostLinkFreq is the block's post-link profile count (PostLinkCfg).
	PostLinkFreq uint32
	// FirstSucc and NumSuccs locate the block's successors (BrProb) in its
	// function's Successors (see Func.SuccessorsOf); both are 0 when it
	// has none.
	FirstSucc, NumSuccs uint32
}

// Successor is a control-flow edge out of a block.
type Successor struct {
	// ID is the successor block's ID.
	ID uint32
	// Prob is the branch probability as a fraction of 1<<31
	// (llvm::BranchProbability's raw numerator).
	Prob uint32
	// PostLinkFreq is the edge's post-link profile count (PostLinkCfg).
	PostLinkFreq uint32
}
