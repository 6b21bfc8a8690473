package bbaddrmap

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// Section says how to read one map section's bytes.
type Section struct {
	// Name names the section in errors.
	Name string
	// Type is SHT_LLVM_BB_ADDR_MAP or SHT_LLVM_BB_ADDR_MAP_V0; any other
	// value reads as SHT_LLVM_BB_ADDR_MAP.
	Type elf.SectionType
	// Class is the ELF class: ELFCLASS32 files have 4-byte addresses,
	// all others 8-byte ones.
	Class elf.Class
	// ByteOrder is the file's byte order, for addresses, the 16-bit
	// feature field and hashes; nil means little-endian.
	ByteOrder binary.ByteOrder
	// Relocatable says the section is from a relocatable object (ET_REL):
	// every address field must then have a relocation in Relocs.
	Relocatable bool
	// Relocs are the relocations of the address fields, for relocatable
	// objects.
	Relocs []Reloc
}

// Reloc is a resolved relocation of an address field of a map section in
// a relocatable object. The address it gives is Value, plus the field's
// stored value for REL relocations, in section Section.
type Reloc struct {
	// Offset is the section offset of the relocated address field.
	Offset uint64
	// Section is the index of the section the relocation's symbol is
	// defined in; 0 for absolute symbols and symbol index 0.
	Section elf.SectionIndex
	// Value is the symbol's value plus, for SHT_RELA and SHT_CREL with
	// addends, the addend.
	Value uint64
	// REL says the addend is implicit: the value stored in the field
	// (SHT_REL, and SHT_CREL without addends).
	REL bool
}

// defaultWindow is how many bytes of a streamed section a Decoder holds
// at a time; it grows only for a function record longer than this.
const defaultWindow = 256 << 10

// A Decoder reads the function records of one map section in order. It
// holds no copy of the section: it either reads a byte slice in place or
// streams the section through a small window.
type Decoder struct {
	sec      Section
	addrSize int
	relocs   []Reloc // sorted by Offset

	src      io.Reader // nil when buf holds the whole section
	window   int       // initial window size for src
	size     int64     // bytes in the section
	buf      []byte    // buf[pos:] is undecoded; buf[0] is at section offset base
	base     int64
	pos      int
	complete bool  // buf reaches the end of the available data
	short    error // the stream ended before size bytes
	err      error // sticky: the first error, or io.EOF

	c cursor.Cursor
	s scratch
}

// scratch holds one record's decoded parts; Func slices alias it until
// the next call to Next.
type scratch struct {
	ranges  []Range
	rangeLo []int // first block of each range
	blocks  []Block
	calls   []uint32
	pgo     []PGOBlock
	succs   []Successor
}

// NewDecoder returns a Decoder over data, the whole contents of a map
// section (decompressed). The Decoder reads data in place and never
// modifies it.
func NewDecoder(sec Section, data []byte) *Decoder {
	d := newDecoder(sec)
	d.buf, d.size, d.complete = data, int64(len(data)), true
	return d
}

// NewStreamDecoder returns a Decoder that reads a map section of size
// bytes (decompressed) from r as it goes, holding a window of at most a
// few hundred kilobytes unless a single function record is longer.
func NewStreamDecoder(sec Section, r io.Reader, size int64) *Decoder {
	d := newDecoder(sec)
	d.src, d.size = r, max(size, 0)
	d.complete = d.size == 0
	return d
}

func newDecoder(sec Section) *Decoder {
	d := &Decoder{sec: sec, addrSize: 8, relocs: sec.Relocs, window: defaultWindow}
	if sec.Class == elf.ELFCLASS32 {
		d.addrSize = 4
	}
	d.c.SetByteOrder(sec.ByteOrder)
	if !slices.IsSortedFunc(d.relocs, cmpReloc) {
		d.relocs = slices.Clone(d.relocs)
		slices.SortStableFunc(d.relocs, cmpReloc)
	}
	return d
}

func cmpReloc(a, b Reloc) int { return cmp.Compare(a.Offset, b.Offset) }

// Next decodes the next function record into f and returns nil, or
// io.EOF after the last record, or the first error, a
// *cursor.DecodeError; after an error or io.EOF it keeps returning it.
// The slices in f belong to the Decoder and are valid until the next
// call to Next; use Clone to keep them.
func (d *Decoder) Next(f *Func) error {
	for d.err == nil {
		if d.pos >= len(d.buf) {
			if d.complete {
				d.err = io.EOF
				if d.short != nil {
					d.err = d.short
				}
				break
			}
			d.fill(false)
			continue
		}
		d.c.Reset(d.sec.Name, d.base+int64(d.pos), d.buf[d.pos:])
		d.decodeFunc(f)
		err := d.c.Err()
		if err == nil {
			d.pos += d.c.Pos()
			return nil
		}
		if !d.complete && errors.Is(err, cursor.ErrTruncated) {
			// The record runs past the window: slide it to the front, and
			// grow the window if the record already started there.
			d.fill(d.pos == 0)
			continue
		}
		if d.short != nil && errors.Is(err, cursor.ErrTruncated) {
			err = d.short // the stream ended early or failed
		}
		*f = Func{}
		d.err = err
	}
	return d.err
}

// fill moves the undecoded bytes to the front of the window and reads
// more, doubling the window first if grow is set.
func (d *Decoder) fill(grow bool) {
	n := copy(d.buf, d.buf[d.pos:])
	d.base += int64(d.pos)
	d.pos = 0
	want := max(cap(d.buf), d.window)
	if grow {
		want *= 2
	}
	if left := d.size - d.base; int64(want) > left {
		want = int(left)
	}
	if want > cap(d.buf) {
		nb := make([]byte, n, want)
		copy(nb, d.buf[:n])
		d.buf = nb
	}
	d.buf = d.buf[:want]
	m, err := io.ReadFull(d.src, d.buf[n:])
	d.buf = d.buf[:n+m]
	end := d.base + int64(n+m)
	if end >= d.size {
		d.complete = true
		// Read past the end, so that a compressed stream checks its
		// checksum.
		var probe [1]byte
		if _, err := d.src.Read(probe[:]); err != nil && err != io.EOF {
			d.short = &cursor.DecodeError{Section: d.sec.Name, Offset: end,
				Err: fmt.Errorf("%w: reading the section: %w", cursor.ErrCorrupt, err)}
		}
		return
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		d.complete = true
		d.short = cursor.Errorf(d.sec.Name, end, cursor.ErrTruncated,
			"the section data ends after %d of its %d bytes", end, d.size)
		return
	}
	if err != nil {
		d.complete = true
		d.short = &cursor.DecodeError{Section: d.sec.Name, Offset: end,
			Err: fmt.Errorf("%w: reading the section: %w", cursor.ErrCorrupt, err)}
	}
}

// ReadAll decodes the remaining records and appends them, with slices of
// their own, to dst. On error it returns the records decoded before it
// with the error.
func (d *Decoder) ReadAll(dst []Func) ([]Func, error) {
	var a cloner
	var f Func
	for {
		switch err := d.Next(&f); err {
		case nil:
			dst = append(dst, a.clone(&f))
		case io.EOF:
			return dst, nil
		default:
			return dst, err
		}
	}
}

// Decode decodes every function record of a map section's contents.
func Decode(sec Section, data []byte) ([]Func, error) {
	return NewDecoder(sec, data).ReadAll(nil)
}

// Clone returns a deep copy of f that shares no memory with it.
func (f *Func) Clone() Func {
	var a cloner
	return a.clone(f)
}

// cloner copies records into chunks shared by many records, so that
// decoding a whole section makes few allocations.
type cloner struct {
	ranges chunk[Range]
	blocks chunk[Block]
	calls  chunk[uint32]
	pgo    chunk[PGOBlock]
	succs  chunk[Successor]
}

func (a *cloner) clone(f *Func) Func {
	g := *f
	g.Ranges = a.ranges.copy(f.Ranges)
	for i := range g.Ranges {
		g.Ranges[i].Blocks = a.blocks.copy(g.Ranges[i].Blocks)
	}
	g.Callsites = a.calls.copy(f.Callsites)
	g.PGO = a.pgo.copy(f.PGO)
	g.Successors = a.succs.copy(f.Successors)
	return g
}

type chunk[T any] struct{ free []T }

const chunkLen = 1024

func (c *chunk[T]) copy(src []T) []T {
	if len(src) == 0 {
		return nil
	}
	if len(src) > cap(c.free)-len(c.free) {
		if len(src) >= chunkLen/4 {
			return slices.Clone(src)
		}
		c.free = make([]T, 0, chunkLen)
	}
	n := len(c.free)
	c.free = append(c.free, src...)
	return c.free[n : n+len(src) : n+len(src)]
}

// decodeFunc decodes the record at the cursor into f, leaving any error in
// the cursor.
func (d *Decoder) decodeFunc(f *Func) {
	c := &d.c
	s := &d.s
	s.ranges, s.rangeLo, s.blocks = s.ranges[:0], s.rangeLo[:0], s.blocks[:0]
	s.calls, s.pgo, s.succs = s.calls[:0], s.pgo[:0], s.succs[:0]
	*f = Func{Offset: c.Offset()}

	var version uint8
	var feat Features
	if d.sec.Type != SHT_LLVM_BB_ADDR_MAP_V0 {
		version = c.U8()
		if c.Err() != nil {
			return
		}
		if version > MaxVersion {
			c.FailAt(f.Offset, cursor.ErrUnsupportedVersion, "BB address map version %d (known: 0 to %d)", version, MaxVersion)
			return
		}
		off := c.Offset()
		if version < 5 {
			feat = Features(c.U8())
		} else {
			feat = Features(d.c.U16())
		}
		if c.Err() != nil {
			return
		}
		if unknown := feat &^ knownFeatures; unknown != 0 {
			c.FailAt(off, cursor.ErrCorrupt, "unknown feature bits %#x in features %#x", uint16(unknown), uint16(feat))
			return
		}
		if mv := feat.minVersion(); version < mv {
			c.FailAt(off, cursor.ErrCorrupt, "features %v need version %d or later, the record has version %d", feat, mv, version)
			return
		}
	}
	f.Version, f.Features = version, feat

	nranges := uint64(1)
	if feat&MultiBBRange != 0 {
		off := c.Offset()
		nranges = d.u32("range count")
		if c.Err() != nil {
			return
		}
		if nranges == 0 {
			c.FailAt(off, cursor.ErrCorrupt, "zero ranges")
			return
		}
		if !d.fits(off, nranges, d.addrSize+1, "range") {
			return
		}
	}
	minBlock := 3 // offset, size, metadata
	if version >= 2 {
		minBlock++
	}
	if feat&CallsiteEndOffsets != 0 {
		minBlock++
	}
	if feat&BBHash != 0 {
		minBlock += 8
	}
	for range nranges {
		var r Range
		r.Addr, r.Section = d.addr()
		off := c.Offset()
		nblocks := d.u32("block count")
		if c.Err() != nil {
			return
		}
		r.NumBlocks = uint32(nblocks)
		s.rangeLo = append(s.rangeLo, len(s.blocks))
		s.ranges = append(s.ranges, r)
		if feat&OmitBBEntries != 0 {
			continue
		}
		if !d.fits(off, nblocks, minBlock, "block") {
			return
		}
		if !d.decodeBlocks(version, feat, nblocks) {
			return
		}
	}

	if feat.HasPGO() {
		if feat&FuncEntryCount != 0 {
			f.FuncEntryCount = c.ULEB128()
		}
		if feat.hasPGOBlocks() && !d.decodePGO(feat) {
			return
		}
	}
	if c.Err() != nil {
		return
	}

	// Point the record's slices into the scratch arrays, now that they no
	// longer grow.
	if uint64(len(s.calls)) > math.MaxUint32 || uint64(len(s.succs)) > math.MaxUint32 {
		c.FailAt(f.Offset, cursor.ErrUnsupported, "function record with more than 2^32 callsites or successors")
		return
	}
	s.rangeLo = append(s.rangeLo, len(s.blocks))
	for i := range s.ranges {
		if lo, hi := s.rangeLo[i], s.rangeLo[i+1]; lo < hi {
			s.ranges[i].Blocks = s.blocks[lo:hi:hi]
		}
	}
	f.Ranges = s.ranges
	if len(s.calls) > 0 {
		f.Callsites = s.calls
	}
	if len(s.pgo) > 0 {
		f.PGO = s.pgo
	}
	if len(s.succs) > 0 {
		f.Successors = s.succs
	}
}

// decodeBlocks decodes n blocks of one range into the scratch arrays.
func (d *Decoder) decodeBlocks(version uint8, feat Features, n uint64) bool {
	c := &d.c
	s := &d.s
	var prevEnd uint64 // end of the previous block, relative to the range
	for i := range n {
		var b Block
		if version >= 2 {
			b.ID = uint32(d.u32("block ID"))
		} else {
			b.ID = uint32(i)
		}
		offOff := c.Offset()
		off := d.u32("block offset")
		var lastCall uint64
		b.FirstCall = uint32(len(s.calls))
		if feat&CallsiteEndOffsets != 0 {
			noff := c.Offset()
			ncalls := d.u32("callsite count")
			if !d.fits(noff, ncalls, 1, "callsite") {
				return false
			}
			for range ncalls {
				doff := c.Offset()
				lastCall += d.u32("callsite end offset")
				if lastCall > math.MaxUint32 {
					c.FailAt(doff, cursor.ErrCorrupt, "callsite end offset %d overflows 32 bits", lastCall)
				}
				if c.Err() != nil {
					return false
				}
				s.calls = append(s.calls, uint32(lastCall))
			}
		}
		sizeOff := c.Offset()
		size := d.u32("block size") + lastCall
		if size > math.MaxUint32 {
			c.FailAt(sizeOff, cursor.ErrCorrupt, "block size %d overflows 32 bits", size)
		}
		mdOff := c.Offset()
		md := d.u32("block metadata")
		if c.Err() != nil {
			return false
		}
		if md&^uint64(knownMetadata) != 0 {
			c.FailAt(mdOff, cursor.ErrCorrupt, "unknown block metadata bits in %#x", md)
			return false
		}
		if feat&BBHash != 0 {
			b.Hash = d.c.U64()
		}
		if c.Err() != nil {
			return false
		}
		if version >= 1 {
			off += prevEnd
		}
		if off+size > math.MaxUint32 {
			c.FailAt(offOff, cursor.ErrCorrupt, "block [%#x, %#x) ends beyond 32 bits", off, off+size)
			return false
		}
		prevEnd = off + size
		b.Offset, b.Size, b.Metadata = uint32(off), uint32(size), Metadata(md)
		if b.NumCalls = uint32(len(s.calls)) - b.FirstCall; b.NumCalls == 0 {
			b.FirstCall = 0
		}
		s.blocks = append(s.blocks, b)
	}
	return true
}

// decodePGO decodes the per-block PGO analysis of the record's blocks.
func (d *Decoder) decodePGO(feat Features) bool {
	c := &d.c
	s := &d.s
	minSucc := 2
	if feat&PostLinkCfg != 0 {
		minSucc = 3
	}
	for range len(s.blocks) {
		var p PGOBlock
		if feat&BBFreq != 0 {
			p.Freq = c.ULEB128()
		}
		if feat&PostLinkCfg != 0 {
			p.PostLinkFreq = uint32(d.u32("post-link block frequency"))
		}
		p.FirstSucc = uint32(len(s.succs))
		if feat&BrProb != 0 {
			off := c.Offset()
			n := c.ULEB128()
			if !d.fits(off, n, minSucc, "successor") {
				return false
			}
			for range n {
				var e Successor
				e.ID = uint32(d.u32("successor ID"))
				e.Prob = uint32(d.u32("branch probability"))
				if feat&PostLinkCfg != 0 {
					e.PostLinkFreq = uint32(d.u32("post-link edge frequency"))
				}
				if c.Err() != nil {
					return false
				}
				s.succs = append(s.succs, e)
			}
		}
		if c.Err() != nil {
			return false
		}
		if p.NumSuccs = uint32(len(s.succs)) - p.FirstSucc; p.NumSuccs == 0 {
			p.FirstSucc = 0
		}
		s.pgo = append(s.pgo, p)
	}
	return true
}

// fits checks that n items of at least size bytes each fit in what is
// left of the section after the count read at off.
func (d *Decoder) fits(off int64, n uint64, size int, what string) bool {
	c := &d.c
	if c.Err() != nil {
		return false
	}
	left := uint64(max(d.size-c.Offset(), 0))
	if n > left/uint64(size) {
		c.FailAt(off, cursor.ErrCorrupt, "%s count %d exceeds the %d bytes left", what, n, left)
		return false
	}
	return true
}

// u32 reads a ULEB128 value that LLVM reads as a uint32.
func (d *Decoder) u32(what string) uint64 {
	return d.c.ULEB128Max(math.MaxUint32, what)
}

// addr reads an address field, relocated in relocatable objects.
func (d *Decoder) addr() (uint64, elf.SectionIndex) {
	c := &d.c
	off := c.Offset()
	var v uint64
	if d.addrSize == 8 {
		v = c.U64()
	} else {
		v = uint64(c.U32())
	}
	if !d.sec.Relocatable || c.Err() != nil {
		return v, 0
	}
	// The last relocation at off wins, as in LLVM.
	i, _ := slices.BinarySearchFunc(d.relocs, uint64(off)+1, func(r Reloc, t uint64) int { return cmp.Compare(r.Offset, t) })
	if i == 0 || d.relocs[i-1].Offset != uint64(off) {
		c.FailAt(off, cursor.ErrCorrupt, "no relocation for the address field")
		return 0, 0
	}
	r := &d.relocs[i-1]
	a := r.Value
	if r.REL {
		a += v
	}
	if d.addrSize == 4 {
		a = uint64(uint32(a))
	}
	return a, r.Section
}
