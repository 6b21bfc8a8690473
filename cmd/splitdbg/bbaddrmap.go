package main

import (
	"bufio"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo/bbaddrmap"
)

var bbaddrmapCmd = &command{
	name:    "bbaddrmap",
	args:    "[-json] BIN",
	summary: "print the LLVM basic-block address map of BIN",
	help: `
Prints the basic-block address map (SHT_LLVM_BB_ADDR_MAP, from clang
-fbasic-block-address-map) of the ELF file BIN, one function at a time as
it is decoded: each function's ranges (more than one when it is split),
their blocks with ID, offset from the range's base address, size,
metadata, callsite end offsets and hash, and the PGO analysis (function
entry count, block frequencies, successors with branch probabilities).
Every map version, 0 to 5, is read.

The fields mean what llvm-readobj --bb-addr-map prints; "name" is the
function symbol at the function's address, "" if there is none. In a
relocatable object (.o) addresses are offsets in the section named by
"section".`,
	setup: func(fs *flag.FlagSet) func(*cli, []string) error {
		asJSON := fs.Bool("json", false, "print JSON, one function per line")
		return func(c *cli, args []string) error {
			if len(args) != 1 {
				return usagef("want one BIN, got %d arguments", len(args))
			}
			return writeBBAddrMap(c.stdout, args[0], *asJSON)
		}
	},
}

// writeBBAddrMap streams the map of the ELF file at path to w.
func writeBBAddrMap(w io.Writer, path string, asJSON bool) error {
	f, err := elfx.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bf := bbaddrmap.NewFile(f.File) // sections, relocations and symbols, read once
	secs := bf.Sections()
	if len(secs) == 0 {
		return fmt.Errorf("%s: no basic-block address map (no SHT_LLVM_BB_ADDR_MAP section; clang writes one with -fbasic-block-address-map)", path)
	}
	p := &bbPrinter{
		w:    bufio.NewWriterSize(w, 256<<10),
		json: asJSON,
		rel:  f.Type == elf.ET_REL,
		file: f.File,
	}
	if p.names, p.codes, err = symNames(f, !asJSON); err != nil {
		return err
	}
	var fn bbaddrmap.Func
	for _, s := range secs {
		d, err := bf.Decoder(s)
		if err != nil {
			p.w.Flush()
			return fmt.Errorf("%s: %w", path, err)
		}
		for {
			err := d.Next(&fn)
			if err == io.EOF {
				break
			}
			if err != nil {
				p.w.Flush()
				return fmt.Errorf("%s: %w", path, err)
			}
			p.write(&fn)
		}
	}
	p.end()
	return p.w.Flush()
}

// symKey places a symbol: section index (relocatable objects only) and
// value.
type symKey struct {
	sec  elf.SectionIndex
	addr uint64
}

// symNames maps addresses to symbol names: funcs to the first STT_FUNC
// symbol at each address in symbol-table order, as llvm-readobj names map
// functions; code (when asked for) to the first code symbol of any type,
// to label moved ranges (clang gives foo.cold STT_NOTYPE). In relocatable
// objects addresses are per section.
func symNames(f *elfx.File, code bool) (funcs, codes map[symKey]string, err error) {
	syms, err := f.CodeSymbols()
	if errors.Is(err, elfx.ErrNoSymbols) {
		return nil, nil, nil // stripped: no names
	}
	if err != nil {
		return nil, nil, err
	}
	rel := f.Type == elf.ET_REL
	funcs = make(map[symKey]string, len(syms))
	if code {
		codes = make(map[symKey]string)
	}
	for i := range syms {
		s := &syms[i]
		k := symKey{addr: s.Value}
		if rel {
			k.sec = s.Section
		}
		if _, ok := funcs[k]; !ok && s.IsFunc() {
			funcs[k] = s.Name
		}
		if _, ok := codes[k]; !ok && code {
			codes[k] = s.Name
		}
	}
	return funcs, codes, nil
}

// bbPrinter formats function records as they are decoded, appending to
// one reused buffer.
type bbPrinter struct {
	w     *bufio.Writer
	json  bool
	rel   bool
	names map[symKey]string // function symbols
	codes map[symKey]string // any code symbol (text listing)
	file  *elf.File
	n     int
	buf   []byte
}

// end closes the JSON array, which the first function opens: a map that
// fails to decode at once prints nothing.
func (p *bbPrinter) end() {
	if p.json {
		if p.n > 0 {
			p.w.WriteString("\n]\n")
		} else {
			p.w.WriteString("[]\n")
		}
	}
}

func (p *bbPrinter) key(r *bbaddrmap.Range) symKey {
	k := symKey{addr: r.Addr}
	if p.rel {
		k.sec = r.Section
	}
	return k
}

// name returns the function symbol at r's start.
func (p *bbPrinter) name(r *bbaddrmap.Range) string { return p.names[p.key(r)] }

func (p *bbPrinter) sectionName(i elf.SectionIndex) string {
	if i == 0 || int(i) >= len(p.file.Sections) {
		return ""
	}
	return p.file.Sections[i].Name
}

func (p *bbPrinter) write(fn *bbaddrmap.Func) {
	if p.json {
		p.buf = p.appendJSON(p.buf[:0], fn)
	} else {
		p.buf = p.appendText(p.buf[:0], fn)
	}
	p.w.Write(p.buf)
	p.n++
}

func (p *bbPrinter) appendJSON(b []byte, fn *bbaddrmap.Func) []byte {
	if p.n > 0 {
		b = append(b, ',')
	} else {
		b = append(b, '[')
	}
	var first *bbaddrmap.Range
	if len(fn.Ranges) > 0 {
		first = &fn.Ranges[0]
	}
	b = append(b, "\n{\"address\":"...)
	b = strconv.AppendUint(b, fn.Addr(), 10)
	if p.rel && first != nil {
		b = append(b, ",\"section\":"...)
		b = appendJSONString(b, p.sectionName(first.Section))
	}
	b = append(b, ",\"name\":"...)
	if first != nil {
		b = appendJSONString(b, p.name(first))
	} else {
		b = append(b, `""`...)
	}
	b = append(b, ",\"version\":"...)
	b = strconv.AppendUint(b, uint64(fn.Version), 10)
	b = append(b, ",\"feature\":"...)
	b = strconv.AppendUint(b, uint64(fn.Features), 10)
	b = append(b, ",\"ranges\":["...)
	feat := fn.Features
	for i := range fn.Ranges {
		r := &fn.Ranges[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "{\"base_address\":"...)
		b = strconv.AppendUint(b, r.Addr, 10)
		if p.rel {
			b = append(b, ",\"section\":"...)
			b = appendJSONString(b, p.sectionName(r.Section))
		}
		b = append(b, ",\"num_blocks\":"...)
		b = strconv.AppendUint(b, uint64(r.NumBlocks), 10)
		b = append(b, ",\"entries\":["...)
		for j := range r.Blocks {
			bl := &r.Blocks[j]
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, "{\"id\":"...)
			b = strconv.AppendUint(b, uint64(bl.ID), 10)
			b = append(b, ",\"offset\":"...)
			b = strconv.AppendUint(b, uint64(bl.Offset), 10)
			b = append(b, ",\"size\":"...)
			b = strconv.AppendUint(b, uint64(bl.Size), 10)
			b = append(b, ",\"metadata\":"...)
			b = appendMetadataJSON(b, bl.Metadata)
			if feat&bbaddrmap.CallsiteEndOffsets != 0 {
				b = append(b, ",\"callsite_end_offsets\":["...)
				for k, off := range fn.CallsiteEndOffsets(bl) {
					if k > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendUint(b, uint64(off), 10)
				}
				b = append(b, ']')
			}
			if feat&bbaddrmap.BBHash != 0 {
				b = append(b, ",\"hash\":"...)
				b = strconv.AppendUint(b, bl.Hash, 10)
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, ']')
	if feat.HasPGO() {
		b = p.appendPGOJSON(b, fn)
	}
	return append(b, '}')
}

// appendPGOJSON appends fn's PGO analysis as the "pgo" member.
func (p *bbPrinter) appendPGOJSON(b []byte, fn *bbaddrmap.Func) []byte {
	feat := fn.Features
	b = append(b, ",\"pgo\":{"...)
	comma := false
	if feat&bbaddrmap.FuncEntryCount != 0 {
		b = append(b, "\"func_entry_count\":"...)
		b = strconv.AppendUint(b, fn.FuncEntryCount, 10)
		comma = true
	}
	if feat&(bbaddrmap.BBFreq|bbaddrmap.BrProb) != 0 {
		if comma {
			b = append(b, ',')
		}
		b = append(b, "\"entries\":["...)
		ids := blockIDs(fn)
		for i := range fn.PGO {
			pb := &fn.PGO[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			c := false
			if id, ok := ids.next(); ok {
				b = append(b, "\"id\":"...)
				b = strconv.AppendUint(b, uint64(id), 10)
				c = true
			}
			if feat&bbaddrmap.BBFreq != 0 {
				if c {
					b = append(b, ',')
				}
				b = append(b, "\"frequency\":"...)
				b = strconv.AppendUint(b, pb.Freq, 10)
				if feat&bbaddrmap.PostLinkCfg != 0 {
					b = append(b, ",\"post_link_frequency\":"...)
					b = strconv.AppendUint(b, uint64(pb.PostLinkFreq), 10)
				}
				c = true
			}
			if feat&bbaddrmap.BrProb != 0 {
				if c {
					b = append(b, ',')
				}
				b = append(b, "\"successors\":["...)
				for k, s := range fn.SuccessorsOf(pb) {
					if k > 0 {
						b = append(b, ',')
					}
					b = append(b, "{\"id\":"...)
					b = strconv.AppendUint(b, uint64(s.ID), 10)
					b = append(b, ",\"probability\":"...)
					b = strconv.AppendUint(b, uint64(s.Prob), 10)
					if feat&bbaddrmap.PostLinkCfg != 0 {
						b = append(b, ",\"post_link_frequency\":"...)
						b = strconv.AppendUint(b, uint64(s.PostLinkFreq), 10)
					}
					b = append(b, '}')
				}
				b = append(b, ']')
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// blockWalk yields the IDs of a function's blocks of all ranges in order,
// which is the order of its PGO entries.
type blockWalk struct {
	fn   *bbaddrmap.Func
	r, j int
}

func blockIDs(fn *bbaddrmap.Func) blockWalk { return blockWalk{fn: fn} }

// next returns the ID of the next block, if the record has one left (with
// OmitBBEntries it has none).
func (w *blockWalk) next() (uint32, bool) {
	for w.r < len(w.fn.Ranges) {
		if bl := w.fn.Ranges[w.r].Blocks; w.j < len(bl) {
			w.j++
			return bl[w.j-1].ID, true
		}
		w.r, w.j = w.r+1, 0
	}
	return 0, false
}

var metadataKeys = [...]string{"has_return", "has_tail_call", "is_eh_pad", "can_fall_through", "has_indirect_branch"}

// appendMetadataJSON appends block metadata m as an object of booleans,
// one per bit llvm-readobj prints (HasReturn, HasTailCall, IsEHPad,
// CanFallThrough, HasIndirectBranch).
func appendMetadataJSON(b []byte, m bbaddrmap.Metadata) []byte {
	b = append(b, '{')
	for i, k := range metadataKeys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, "\":"...)
		b = strconv.AppendBool(b, m&(1<<i) != 0)
	}
	return append(b, '}')
}

var metadataTextNames = [...]string{"HasReturn", "HasTailCall", "IsEHPad", "CanFallThrough", "HasIndirectBranch"}

// appendMetadataText appends the names of m's bits joined by "|", or "-".
func appendMetadataText(b []byte, m bbaddrmap.Metadata) []byte {
	if m == 0 {
		return append(b, '-')
	}
	n := 0
	for i, name := range metadataTextNames {
		if m&(1<<i) != 0 {
			if n > 0 {
				b = append(b, '|')
			}
			b = append(b, name...)
			n++
		}
	}
	if rest := m &^ (1<<len(metadataTextNames) - 1); rest != 0 {
		if n > 0 {
			b = append(b, '|')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(rest), 16)
	}
	return b
}

// appendAddrText appends a range address: 0x-hex, after its section's
// name in relocatable objects.
func (p *bbPrinter) appendAddrText(b []byte, r *bbaddrmap.Range, off uint64) []byte {
	if p.rel {
		b = append(b, p.sectionName(r.Section)...)
		b = append(b, '+')
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, r.Addr+off, 16)
}

func (p *bbPrinter) appendText(b []byte, fn *bbaddrmap.Func) []byte {
	feat := fn.Features
	if len(fn.Ranges) == 0 {
		return b
	}
	first := &fn.Ranges[0]
	b = append(b, orNone(p.name(first))...)
	b = append(b, "  "...)
	b = p.appendAddrText(b, first, 0)
	b = append(b, "  version "...)
	b = strconv.AppendUint(b, uint64(fn.Version), 10)
	b = append(b, "  features "...)
	b = append(b, feat.String()...)
	b = append(b, '\n')
	for i := range fn.Ranges {
		r := &fn.Ranges[i]
		b = append(b, "  range "...)
		b = p.appendAddrText(b, r, 0)
		if i > 0 {
			if s := p.codes[p.key(r)]; s != "" {
				b = append(b, " ("...)
				b = append(b, s...)
				b = append(b, ')')
			}
		}
		b = append(b, "  "...)
		b = strconv.AppendUint(b, uint64(r.NumBlocks), 10)
		b = append(b, " blocks\n"...)
		for j := range r.Blocks {
			bl := &r.Blocks[j]
			b = append(b, "    bb "...)
			n := len(b)
			b = strconv.AppendUint(b, uint64(bl.ID), 10)
			for len(b)-n < 4 {
				b = append(b, ' ')
			}
			b = append(b, ' ')
			b = p.appendAddrText(b, r, uint64(bl.Offset))
			b = append(b, "-0x"...)
			b = strconv.AppendUint(b, r.Addr+uint64(bl.Offset)+uint64(bl.Size), 16)
			b = append(b, "  "...)
			b = appendMetadataText(b, bl.Metadata)
			if cs := fn.CallsiteEndOffsets(bl); len(cs) > 0 {
				b = append(b, "  calls end at"...)
				for _, c := range cs {
					b = append(b, " +0x"...)
					b = strconv.AppendUint(b, uint64(c), 16)
				}
			}
			if feat&bbaddrmap.BBHash != 0 {
				b = append(b, "  hash 0x"...)
				b = strconv.AppendUint(b, bl.Hash, 16)
			}
			b = append(b, '\n')
		}
	}
	if !feat.HasPGO() {
		return b
	}
	b = append(b, "  pgo"...)
	if feat&bbaddrmap.FuncEntryCount != 0 {
		b = append(b, "  entry count "...)
		b = strconv.AppendUint(b, fn.FuncEntryCount, 10)
	}
	b = append(b, '\n')
	ids := blockIDs(fn)
	for i := range fn.PGO {
		pb := &fn.PGO[i]
		b = append(b, "    "...)
		if id, ok := ids.next(); ok {
			b = append(b, "bb "...)
			b = strconv.AppendUint(b, uint64(id), 10)
		} else {
			b = append(b, "block #"...)
			b = strconv.AppendInt(b, int64(i), 10)
		}
		if feat&bbaddrmap.BBFreq != 0 {
			b = append(b, "  freq "...)
			b = strconv.AppendUint(b, pb.Freq, 10)
			if feat&bbaddrmap.PostLinkCfg != 0 {
				b = append(b, "  post-link "...)
				b = strconv.AppendUint(b, uint64(pb.PostLinkFreq), 10)
			}
		}
		if feat&bbaddrmap.BrProb != 0 {
			succ := fn.SuccessorsOf(pb)
			if len(succ) > 0 {
				b = append(b, "  ->"...)
			}
			for _, s := range succ {
				b = append(b, " bb "...)
				b = strconv.AppendUint(b, uint64(s.ID), 10)
				b = append(b, " ("...)
				b = strconv.AppendFloat(b, float64(s.Prob)*100/(1<<31), 'f', 2, 64)
				b = append(b, "%"...)
				if feat&bbaddrmap.PostLinkCfg != 0 {
					b = append(b, ", post-link "...)
					b = strconv.AppendUint(b, uint64(s.PostLinkFreq), 10)
				}
				b = append(b, ')')
			}
		}
		b = append(b, '\n')
	}
	return b
}
