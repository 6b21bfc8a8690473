// Package native reads and writes splitdbg's split-procedure record
// section, the ELF form of the split-procedure proposal's CM_SPLIT_PRC
// comment records (seed 003): for each split procedure its entry and, for
// each moved fragment, split_info{branch_addr, vaddr, size}. Following the
// proposal's question 9, addresses are stored as offsets from the entry
// where that is smaller. The byte layout is in docs/FORMAT.md, "Split
// procedure records".
//
// A record also keeps what a debugger otherwise learns from DWARF (the
// source name, compile unit and declaration), so that a file stripped of
// its debug sections still describes its split procedures.
package native

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// SectionName is the ELF section that holds the records.
const SectionName = ".splitdbg.split"

// Version is the format version this package reads and writes.
const Version = 1

var magic = [3]byte{'S', 'P', 'R'}

// Record tags. Readers skip tags they do not know.
const (
	tagEnd      = 0
	TagSplitPrc = 1 // CM_SPLIT_PRC: one split procedure
)

// Kind is a fragment's kind, as splitinfo names them.
type Kind uint8

// Fragment kinds.
const (
	Cold Kind = 1
	Warm Kind = 2
	Part Kind = 3
)

// Split is one moved fragment: the proposal's split_info plus its symbol
// and every branch that reaches it.
type Split struct {
	BranchAddr uint64 // 0 when no direct branch is known
	VAddr      uint64
	Size       uint64
	Kind       Kind
	Symbol     string
	// Sites are every branch reaching the fragment, BranchAddr among them.
	Sites []uint64
}

// Record is one split procedure.
type Record struct {
	Entry      uint64
	EntrySize  uint64 // the entry fragment's size
	Name       string // the entry symbol
	SourceName string // DW_AT_name
	CompUnit   string
	File       string
	Line       int
	Moved      []Split // in logical order
}

// ErrNoRecords is returned when a file has no record section.
var ErrNoRecords = errors.New("no split procedure records")

// flags of a split
const (
	flagKindMask  = 0x03
	flagHasBranch = 0x04
)

// Append appends a section holding records to dst. Records are written in
// entry order; every moved fragment must lie within 2^63 of its entry.
func Append(dst []byte, recs []Record) ([]byte, error) {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b Record) int { return cmp.Compare(a.Entry, b.Entry) })
	// The string table: every name once.
	var strs []byte
	index := map[string]uint64{}
	str := func(s string) uint64 {
		if s == "" {
			return 0
		}
		if i, ok := index[s]; ok {
			return i
		}
		i := uint64(len(strs)) + 1
		strs = append(append(strs, s...), 0)
		index[s] = i
		return i
	}
	var body []byte
	var prev uint64
	for i := range recs {
		r := &recs[i]
		if i > 0 && r.Entry == prev {
			return nil, fmt.Errorf("native: two records for entry %#x", r.Entry)
		}
		var v []byte
		v = cursor.AppendULEB128(v, r.Entry-prev)
		prev = r.Entry
		v = cursor.AppendULEB128(v, r.EntrySize)
		v = cursor.AppendULEB128(v, str(r.Name))
		v = cursor.AppendULEB128(v, str(r.SourceName))
		v = cursor.AppendULEB128(v, str(r.CompUnit))
		v = cursor.AppendULEB128(v, str(r.File))
		v = cursor.AppendULEB128(v, uint64(max(r.Line, 0)))
		v = cursor.AppendULEB128(v, uint64(len(r.Moved)))
		for _, s := range r.Moved {
			flags := byte(s.Kind) & flagKindMask
			if s.BranchAddr != 0 {
				flags |= flagHasBranch
			}
			v = append(v, flags)
			v = cursor.AppendSLEB128(v, int64(s.VAddr-r.Entry))
			v = cursor.AppendULEB128(v, s.Size)
			if s.BranchAddr != 0 {
				v = cursor.AppendSLEB128(v, int64(s.BranchAddr-r.Entry))
			}
			v = cursor.AppendULEB128(v, str(s.Symbol))
			v = cursor.AppendULEB128(v, uint64(len(s.Sites)))
			for _, site := range s.Sites {
				v = cursor.AppendSLEB128(v, int64(site-r.Entry))
			}
		}
		body = cursor.AppendULEB128(body, TagSplitPrc)
		body = cursor.AppendULEB128(body, uint64(len(v)))
		body = append(body, v...)
	}
	body = append(body, tagEnd)
	var hdr []byte
	hdr = cursor.AppendULEB128(hdr, uint64(len(strs)))
	hdr = append(hdr, strs...)
	hdr = cursor.AppendULEB128(hdr, uint64(len(recs)))
	n := len(hdr) + len(body)
	if n > 1<<32-1 {
		return nil, errors.New("native: section larger than 4 GiB")
	}
	dst = append(dst, magic[:]...)
	dst = append(dst, Version)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	dst = append(dst, hdr...)
	return append(dst, body...), nil
}

// Decode reads the records of a section. Unknown tags are skipped; every
// count is checked against the bytes that remain before anything is
// allocated, and malformed input is a *cursor.DecodeError.
func Decode(data []byte) ([]Record, error) {
	c := cursor.New(SectionName, 0, data)
	m := c.Bytes(3)
	if c.Err() == nil && [3]byte(m) != magic {
		return nil, cursor.Errorf(SectionName, 0, cursor.ErrCorrupt, "magic %q, want \"SPR\"", m)
	}
	if v := c.U8(); c.Err() == nil && v != Version {
		return nil, cursor.Errorf(SectionName, 3, cursor.ErrUnsupportedVersion, "version %d, want %d", v, Version)
	}
	n := c.U32()
	if c.Err() == nil && uint64(n) > uint64(c.Len()) {
		return nil, c.Fail(cursor.ErrTruncated, "body length %d exceeds the %d bytes left", n, c.Len())
	}
	body := c.Sub(int(n))
	if err := c.Err(); err != nil {
		return nil, err
	}
	strLen := body.ULEB128Max(uint64(body.Len()), "string table length")
	strs := body.Sub(int(strLen))
	strtab := strs.Bytes(strs.Len())
	str := func(c *cursor.Cursor) string {
		off := c.Offset()
		i := c.ULEB128()
		if i == 0 || c.Err() != nil {
			return ""
		}
		if i > uint64(len(strtab)) {
			c.FailAt(off, cursor.ErrCorrupt, "string %d beyond the %d-byte table", i, len(strtab))
			return ""
		}
		s := strtab[i-1:]
		for j, b := range s {
			if b == 0 {
				return string(s[:j])
			}
		}
		c.FailAt(off, cursor.ErrCorrupt, "unterminated string %d", i)
		return ""
	}
	// A record takes at least two bytes (tag and length).
	count := body.Count(2, "record")
	recs := make([]Record, 0, count)
	var prev uint64
	for body.Err() == nil {
		tag := body.ULEB128()
		if tag == tagEnd {
			break
		}
		length := body.ULEB128Max(uint64(body.Len()), "record length")
		v := body.Sub(int(length))
		if tag != TagSplitPrc {
			continue // a tag of a later version: skip it
		}
		var r Record
		r.Entry = prev + v.ULEB128()
		prev = r.Entry
		r.EntrySize = v.ULEB128()
		r.Name, r.SourceName, r.CompUnit, r.File = str(&v), str(&v), str(&v), str(&v)
		r.Line = int(v.ULEB128Max(1<<31-1, "line"))
		moved := v.Count(4, "moved fragment")
		r.Moved = make([]Split, moved)
		for i := range r.Moved {
			s := &r.Moved[i]
			flags := v.U8()
			s.Kind = Kind(flags & flagKindMask)
			s.VAddr = r.Entry + uint64(v.SLEB128())
			s.Size = v.ULEB128()
			if flags&flagHasBranch != 0 {
				s.BranchAddr = r.Entry + uint64(v.SLEB128())
			}
			s.Symbol = str(&v)
			sites := v.Count(1, "branch site")
			if sites > 0 {
				s.Sites = make([]uint64, sites)
			}
			for j := range s.Sites {
				s.Sites[j] = r.Entry + uint64(v.SLEB128())
			}
		}
		if err := v.Err(); err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	if err := body.Err(); err != nil {
		return nil, err
	}
	return recs, nil
}
