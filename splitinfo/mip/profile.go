package mip

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// The profile (MIPBinaryFormat.rst, ".mip"; little endian):
//
//	Header (file type 3)
//	u64 ProfileCount
//	FunctionProfile[ProfileCount] {
//	  u64 FunctionSignature          MD5Hash(FunctionName)
//	  u32 RawProfileDataOffset       in the raw section
//	  u32 FunctionStartOffset        function address - raw section address
//	  u32 FunctionSize
//	  u32 ControlFlowGraphSignature
//	  u32 NonEntryBlockCount
//	  u32 MergeCount
//	  u64 CallCount
//	  u64 TimestampSum
//	  BlockProfile[NonEntryBlockCount] { u32 Offset, u8 IsCovered }
//	  u32 CallEdgeCount
//	  CallEdges[CallEdgeCount]       reserved: no layout yet
//	}
//	u64 FunctionNamesLength
//	char FunctionNames[FunctionNamesLength]   NUL-separated
//
// A function's name is the one of FunctionNames whose MD5Hash is its
// signature. AppendProfile writes FunctionNamesLength as the byte length
// of the names, as the format document says; DecodeProfile also accepts
// the number of names there, which is what the MIP patch's MIPWriter
// writes (each name NUL-terminated, either way).

// minProfileFunc is the smallest encoded function profile.
const minProfileFunc = 8 + 6*4 + 2*8 + 4

// Profile is a decoded .mip profile.
type Profile struct {
	Header
	Funcs []Func
}

// Func is one function's profile.
type Func struct {
	// Name is the function's name; "" when no name in the file has the
	// function's signature.
	Name string
	// Signature is the FunctionSignature of the name.
	Signature uint64
	// RawOffset is the offset of the function's data in a raw profile.
	RawOffset uint32
	// FuncOffset is the function's address minus the raw section's
	// address, modulo 2^32 (see Addr).
	FuncOffset   uint32
	Size         uint32
	CFGSignature uint32
	// MergeCount is the number of merged raw profiles in which the
	// function ran.
	MergeCount uint32
	// CallCount and TimestampSum are the sums of the merged raw
	// profiles' call counts and, where the function ran, timestamps.
	CallCount    uint64
	TimestampSum uint64
	// Blocks are the non-entry blocks; the entry block is covered when
	// the function is.
	Blocks []Block
}

// Block is a non-entry block's profile.
type Block struct {
	// Offset is the block's offset from the function's entry (see
	// BlockAddr).
	Offset  uint32
	Covered bool
}

// Covered reports whether the function ran in any merged raw profile.
func (f *Func) Covered() bool { return f.MergeCount > 0 || f.CallCount > 0 }

// Addr returns the function's address in a binary whose raw section is at
// rawAddr.
func (f *Func) Addr(rawAddr uint64) uint64 { return rawAddr + uint64(int64(int32(f.FuncOffset))) }

// NewProfile returns the empty profile of a map, what "llvm-mipdata
// create" writes: the map's functions, in map order, with nothing
// covered.
func NewProfile(m *Map) *Profile {
	p := &Profile{Header: m.Header, Funcs: make([]Func, len(m.Funcs))}
	p.FileType = ProfileFile
	for i := range m.Funcs {
		mf := &m.Funcs[i]
		f := &p.Funcs[i]
		*f = Func{Name: mf.Name, Signature: FunctionSignature(mf.Name), RawOffset: uint32(mf.RawOffset()),
			FuncOffset: uint32(mf.FuncOffset()), Size: mf.Size, CFGSignature: mf.CFGSignature}
		if len(mf.BlockOffsets) > 0 {
			f.Blocks = make([]Block, len(mf.BlockOffsets))
			for j, o := range mf.BlockOffsets {
				f.Blocks[j].Offset = o
			}
		}
	}
	return p
}

// Clone returns a deep copy of p.
func (p *Profile) Clone() *Profile {
	q := &Profile{Header: p.Header, Funcs: slices.Clone(p.Funcs)}
	for i := range q.Funcs {
		q.Funcs[i].Blocks = slices.Clone(q.Funcs[i].Blocks)
	}
	return q
}

func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMismatch}, args...)...)
}

func (p *Profile) checkHeader(what string, h Header) error {
	if h.ModuleHash != p.ModuleHash {
		return mismatch("%s has module hash %#08x, the profile %#08x", what, h.ModuleHash, p.ModuleHash)
	}
	if h.ProfileType != p.ProfileType {
		return mismatch("%s has profile type %#x (%v), the profile %#x (%v)", what, uint32(h.ProfileType), h.ProfileType,
			uint32(p.ProfileType), p.ProfileType)
	}
	return nil
}

// MergeRaw returns p with the raw profile of one run merged in: a
// function that ran counts one more merge and adds its call count and
// timestamp, and block coverage is or-ed. p is not changed. A raw profile
// of another module or profile type, or whose data does not fit the
// profile's functions, is an error.
func (p *Profile) MergeRaw(r *Raw) (*Profile, error) {
	if err := p.checkHeader("the raw profile", r.Header); err != nil {
		return nil, err
	}
	q := p.Clone()
	end := int64(HeaderSize)
	for i := range q.Funcs {
		f := &q.Funcs[i]
		rec, err := r.Record(int64(f.RawOffset), len(f.Blocks))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", orUnnamed(f.Name), err)
		}
		end = max(end, int64(f.RawOffset)+int64(RecordSize(r.ProfileType, len(f.Blocks))))
		if rec.Covered {
			f.MergeCount++
			f.TimestampSum += uint64(rec.Timestamp)
		}
		f.CallCount += uint64(rec.CallCount)
		for j, b := range rec.Blocks {
			f.Blocks[j].Covered = f.Blocks[j].Covered || b
		}
	}
	// The section holds the data of every function of the link unit, and
	// no more: bytes past them belong to functions this profile lacks.
	if extra := int64(len(r.Data)) - end; extra >= 8 {
		return nil, mismatch("the raw profile has %d bytes past the data of the profile's %d functions (ending at %#x)", extra, len(q.Funcs), end)
	}
	return q, nil
}

// Merge returns p with another profile of the same binary merged in:
// merge counts, call counts and timestamps are summed and block coverage
// is or-ed. p is not changed. Functions are matched by their raw data
// offset and must agree in name, CFG signature, address, size and blocks.
func (p *Profile) Merge(o *Profile) (*Profile, error) {
	if err := p.checkHeader("the other profile", o.Header); err != nil {
		return nil, err
	}
	if err := p.sameFuncs("the other profile", o.Funcs); err != nil {
		return nil, err
	}
	q := p.Clone()
	idx := byRawOffset(o.Funcs)
	for i := range q.Funcs {
		f := &q.Funcs[i]
		g := &o.Funcs[idx[f.RawOffset]]
		f.MergeCount += g.MergeCount
		f.CallCount += g.CallCount
		f.TimestampSum += g.TimestampSum
		for j := range f.Blocks {
			f.Blocks[j].Covered = f.Blocks[j].Covered || g.Blocks[j].Covered
		}
	}
	return q, nil
}

// CheckMap reports an ErrMismatch unless p was made from map m: same
// module, profile type and functions (name, CFG signature, address,
// size, blocks).
func (p *Profile) CheckMap(m *Map) error {
	if err := p.checkHeader("the map", m.Header); err != nil {
		return err
	}
	return p.sameFuncs("the map", NewProfile(m).Funcs)
}

func byRawOffset(fs []Func) map[uint32]int {
	m := make(map[uint32]int, len(fs))
	for i := range fs {
		m[fs[i].RawOffset] = i
	}
	return m
}

// sameFuncs checks that others describe the same functions as p.
func (p *Profile) sameFuncs(what string, others []Func) error {
	if len(others) != len(p.Funcs) {
		return mismatch("%s has %d functions, the profile %d", what, len(others), len(p.Funcs))
	}
	idx := byRawOffset(others)
	if len(idx) != len(others) {
		return mismatch("%s has two functions with the same raw data offset", what)
	}
	for i := range p.Funcs {
		f := &p.Funcs[i]
		j, ok := idx[f.RawOffset]
		if !ok {
			return mismatch("%s has no function with raw data at %#x, where the profile has %s", what, f.RawOffset, orUnnamed(f.Name))
		}
		g := &others[j]
		switch {
		case f.Signature != g.Signature:
			return mismatch("%s has %s with raw data at %#x, the profile %s", what, orUnnamed(g.Name), f.RawOffset, orUnnamed(f.Name))
		case f.CFGSignature != g.CFGSignature:
			return mismatch("%s: CFG signature %#08x in %s, %#08x in the profile: the function changed", orUnnamed(f.Name),
				g.CFGSignature, what, f.CFGSignature)
		case f.FuncOffset != g.FuncOffset || f.Size != g.Size:
			return mismatch("%s: at raw section%+#x, %d bytes in %s; at raw section%+#x, %d bytes in the profile", orUnnamed(f.Name),
				int32(g.FuncOffset), g.Size, what, int32(f.FuncOffset), f.Size)
		case len(f.Blocks) != len(g.Blocks):
			return mismatch("%s: %d non-entry blocks in %s, %d in the profile", orUnnamed(f.Name), len(g.Blocks), what, len(f.Blocks))
		}
		for k := range f.Blocks {
			if f.Blocks[k].Offset != g.Blocks[k].Offset {
				return mismatch("%s: block %d at offset %#x in %s, %#x in the profile", orUnnamed(f.Name), k+1, g.Blocks[k].Offset, what, f.Blocks[k].Offset)
			}
		}
	}
	return nil
}

func orUnnamed(name string) string {
	if name == "" {
		return "(unnamed function)"
	}
	return name
}

// DecodeProfile decodes a .mip profile.
func DecodeProfile(data []byte) (*Profile, error) {
	c := cursor.New(ProfileSection, 0, data)
	p := &Profile{Header: decodeHeader(c, ProfileFile)}
	off := c.Offset()
	n := c.U64()
	if err := c.Err(); err != nil {
		return nil, err
	}
	if n > uint64(c.Len()/minProfileFunc) {
		return nil, cursor.Errorf(ProfileSection, off, cursor.ErrCorrupt, "function profile count %d exceeds the %d bytes left", n, c.Len())
	}
	p.Funcs = make([]Func, n)
	for i := range p.Funcs {
		f := &p.Funcs[i]
		f.Signature = c.U64()
		f.RawOffset = c.U32()
		f.FuncOffset = c.U32()
		f.Size = c.U32()
		f.CFGSignature = c.U32()
		blocksOff := c.Offset()
		nb := c.U32()
		f.MergeCount = c.U32()
		f.CallCount = c.U64()
		f.TimestampSum = c.U64()
		if c.Err() == nil && uint64(nb)*5 > uint64(c.Len()) {
			c.FailAt(blocksOff, cursor.ErrCorrupt, "non-entry block count %d exceeds the %d bytes left", nb, c.Len())
		}
		if c.Err() != nil {
			return nil, c.Err()
		}
		if nb > 0 {
			f.Blocks = make([]Block, nb)
		}
		for j := range f.Blocks {
			f.Blocks[j].Offset = c.U32()
			bo := c.Offset()
			switch v := c.U8(); v {
			case 0:
			case 1:
				f.Blocks[j].Covered = true
			default:
				c.FailAt(bo, cursor.ErrCorrupt, "block IsCovered %d is neither 0 nor 1", v)
			}
		}
		eo := c.Offset()
		if edges := c.U32(); c.Err() == nil && edges != 0 {
			c.FailAt(eo, cursor.ErrUnsupported, "%d call edges: their layout is reserved", edges)
		}
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	namesOff := c.Offset()
	nn := c.U64()
	if err := c.Err(); err != nil {
		return nil, err
	}
	rest := c.Bytes(c.Len())
	var names [][]byte
	switch {
	case nn == uint64(len(rest)): // the byte length, as the format says
		names = bytes.Split(bytes.TrimSuffix(rest, []byte{0}), []byte{0})
		if len(rest) == 0 {
			names = nil
		}
	case nn < uint64(len(rest)) && uint64(bytes.Count(rest, []byte{0})) == nn && rest[len(rest)-1] == 0:
		// The number of names, as MIPWriter writes it.
		names = bytes.Split(rest[:len(rest)-1], []byte{0})
	default:
		return nil, cursor.Errorf(ProfileSection, namesOff, cursor.ErrCorrupt,
			"function names length %d is neither the %d bytes that follow nor the number of names in them", nn, len(rest))
	}
	bySig := make(map[uint64][]int, len(p.Funcs))
	for i := range p.Funcs {
		bySig[p.Funcs[i].Signature] = append(bySig[p.Funcs[i].Signature], i)
	}
	for _, nm := range names {
		sum := signature(nm)
		idx, ok := bySig[sum]
		if !ok {
			continue
		}
		s := string(nm)
		for _, i := range idx {
			p.Funcs[i].Name = s
		}
		delete(bySig, sum)
	}
	return p, nil
}

// AppendProfile appends p as a .mip profile: the header with file type 3
// (p's FileType is ignored), the functions in p's order, then the
// distinct non-empty names, sorted, each NUL-terminated, after their byte
// length.
func AppendProfile(dst []byte, p *Profile) []byte {
	h := p.Header
	h.FileType = ProfileFile
	dst = appendHeader(dst, h)
	le := binary.LittleEndian
	dst = le.AppendUint64(dst, uint64(len(p.Funcs)))
	var names []string
	for i := range p.Funcs {
		f := &p.Funcs[i]
		dst = le.AppendUint64(dst, f.Signature)
		dst = le.AppendUint32(dst, f.RawOffset)
		dst = le.AppendUint32(dst, f.FuncOffset)
		dst = le.AppendUint32(dst, f.Size)
		dst = le.AppendUint32(dst, f.CFGSignature)
		dst = le.AppendUint32(dst, uint32(len(f.Blocks)))
		dst = le.AppendUint32(dst, f.MergeCount)
		dst = le.AppendUint64(dst, f.CallCount)
		dst = le.AppendUint64(dst, f.TimestampSum)
		for _, b := range f.Blocks {
			dst = le.AppendUint32(dst, b.Offset)
			if b.Covered {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
		dst = le.AppendUint32(dst, 0) // call edges
		if f.Name != "" {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	n := 0
	for _, s := range names {
		n += len(s) + 1
	}
	dst = le.AppendUint64(dst, uint64(n))
	for _, s := range names {
		dst = append(append(dst, s...), 0)
	}
	return dst
}
