package bbaddrmap

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/jsonw"
)

// Printer formats function records as `splitdbg bbaddrmap` prints them,
// as they are decoded, appending to one reused buffer: JSON, an array with
// one function per line whose fields mean what llvm-readobj
// --bb-addr-map prints, or a text listing.
type Printer struct {
	w     *bufio.Writer
	json  bool
	rel   bool
	names map[symKey]string // function symbols
	codes map[symKey]string // any code symbol (text listing)
	file  *elf.File
	arr   jsonw.Array
	buf   []byte
}

// symKey places a symbol: section index (relocatable objects only) and
// value.
type symKey struct {
	sec  elf.SectionIndex
	addr uint64
}

// NewPrinter returns a Printer of the functions of f to w, in JSON or as
// text. In a relocatable object addresses are offsets in the section each
// range names.
func NewPrinter(w *bufio.Writer, f *elf.File, asJSON bool) *Printer {
	return &Printer{w: w, json: asJSON, rel: f.Type == elf.ET_REL, file: f,
		names: make(map[symKey]string), codes: make(map[symKey]string)}
}

// AddSymbol names the code at addr (in section sec in a relocatable
// object): the first function symbol at an address names the function
// there, as llvm-readobj names them; the first code symbol of any type
// labels a moved range in the text listing (clang gives foo.cold
// STT_NOTYPE). Add symbols in symbol-table order.
func (p *Printer) AddSymbol(sec elf.SectionIndex, addr uint64, name string, isFunc bool) {
	k := symKey{addr: addr}
	if p.rel {
		k.sec = sec
	}
	if _, ok := p.names[k]; !ok && isFunc {
		p.names[k] = name
	}
	if _, ok := p.codes[k]; !ok && !p.json {
		p.codes[k] = name
	}
}

// Print decodes every map section of the file, in section order, and
// formats each function as it is decoded, then ends p. It stops at the
// first error; the caller flushes p's writer.
func (bf *File) Print(p *Printer) error {
	var fn Func
	for _, s := range bf.maps {
		d, err := bf.Decoder(s)
		if err != nil {
			return err
		}
		for {
			err := d.Next(&fn)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			p.Write(&fn)
		}
	}
	p.End()
	return nil
}

// PrintFile streams the map of the ELF file at path to w as `splitdbg
// bbaddrmap` prints it (Printer), its functions named by the file's
// symbols.
func PrintFile(w io.Writer, path string, asJSON bool) error {
	f, err := elfx.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bf := NewFile(f.File) // sections, relocations and symbols, read once
	secs := bf.Sections()
	if len(secs) == 0 {
		return fmt.Errorf("%s: no basic-block address map (no SHT_LLVM_BB_ADDR_MAP section; clang writes one with -fbasic-block-address-map)", path)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	p := NewPrinter(bw, f.File, asJSON)
	syms, err := f.CodeSymbols()
	if err != nil && !errors.Is(err, elfx.ErrNoSymbols) {
		return err
	}
	for i := range syms {
		p.AddSymbol(syms[i].Section, syms[i].Value, syms[i].Name, syms[i].IsFunc())
	}
	if err := bf.Print(p); err != nil {
		bw.Flush()
		return fmt.Errorf("%s: %w", path, err)
	}
	return bw.Flush()
}

// End closes the JSON array, which the first function opens: a map that
// fails to decode at once prints nothing. The caller flushes the writer.
func (p *Printer) End() {
	if p.json {
		p.w.Write(append(p.arr.End(p.buf[:0]), '\n'))
	}
}

func (p *Printer) key(r *Range) symKey {
	k := symKey{addr: r.Addr}
	if p.rel {
		k.sec = r.Section
	}
	return k
}

// name returns the function symbol at r's start.
func (p *Printer) name(r *Range) string { return p.names[p.key(r)] }

func (p *Printer) sectionName(i elf.SectionIndex) string {
	if i == 0 || int(i) >= len(p.file.Sections) {
		return ""
	}
	return p.file.Sections[i].Name
}

// Write formats fn.
func (p *Printer) Write(fn *Func) {
	if p.json {
		p.buf = p.appendJSON(p.buf[:0], fn)
	} else {
		p.buf = p.appendText(p.buf[:0], fn)
	}
	p.w.Write(p.buf)
}

func (p *Printer) appendJSON(b []byte, fn *Func) []byte {
	b = p.arr.Elem(b)
	var first *Range
	if len(fn.Ranges) > 0 {
		first = &fn.Ranges[0]
	}
	b = jsonw.Uint(b, "\n{\"address\":", fn.Addr())
	if p.rel && first != nil {
		b = append(b, ",\"section\":"...)
		b = jsonw.String(b, p.sectionName(first.Section))
	}
	b = append(b, ",\"name\":"...)
	if first != nil {
		b = jsonw.String(b, p.name(first))
	} else {
		b = append(b, `""`...)
	}
	b = jsonw.Uint(b, `,"version":`, uint64(fn.Version))
	b = jsonw.Uint(b, `,"feature":`, uint64(fn.Features))
	b = append(b, ",\"ranges\":["...)
	feat := fn.Features
	for i := range fn.Ranges {
		r := &fn.Ranges[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.Uint(b, `{"base_address":`, r.Addr)
		if p.rel {
			b = append(b, ",\"section\":"...)
			b = jsonw.String(b, p.sectionName(r.Section))
		}
		b = jsonw.Uint(b, `,"num_blocks":`, uint64(r.NumBlocks))
		b = append(b, ",\"entries\":["...)
		for j := range r.Blocks {
			bl := &r.Blocks[j]
			if j > 0 {
				b = append(b, ',')
			}
			b = jsonw.Uint(b, `{"id":`, uint64(bl.ID))
			b = jsonw.Uint(b, `,"offset":`, uint64(bl.Offset))
			b = jsonw.Uint(b, `,"size":`, uint64(bl.Size))
			b = append(b, ",\"metadata\":"...)
			b = bl.Metadata.AppendJSON(b)
			if feat&CallsiteEndOffsets != 0 {
				b = append(b, ",\"callsite_end_offsets\":["...)
				for k, off := range fn.CallsiteEndOffsets(bl) {
					if k > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendUint(b, uint64(off), 10)
				}
				b = append(b, ']')
			}
			if feat&BBHash != 0 {
				b = jsonw.Uint(b, `,"hash":`, bl.Hash)
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
func (p *Printer) appendPGOJSON(b []byte, fn *Func) []byte {
	feat := fn.Features
	b = append(b, ",\"pgo\":{"...)
	comma := false
	if feat&FuncEntryCount != 0 {
		b = jsonw.Uint(b, `"func_entry_count":`, fn.FuncEntryCount)
		comma = true
	}
	if feat&(BBFreq|BrProb) != 0 {
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
				b = jsonw.Uint(b, `"id":`, uint64(id))
				c = true
			}
			if feat&BBFreq != 0 {
				if c {
					b = append(b, ',')
				}
				b = jsonw.Uint(b, `"frequency":`, pb.Freq)
				if feat&PostLinkCfg != 0 {
					b = jsonw.Uint(b, `,"post_link_frequency":`, uint64(pb.PostLinkFreq))
				}
				c = true
			}
			if feat&BrProb != 0 {
				if c {
					b = append(b, ',')
				}
				b = append(b, "\"successors\":["...)
				for k, s := range fn.SuccessorsOf(pb) {
					if k > 0 {
						b = append(b, ',')
					}
					b = jsonw.Uint(b, `{"id":`, uint64(s.ID))
					b = jsonw.Uint(b, `,"probability":`, uint64(s.Prob))
					if feat&PostLinkCfg != 0 {
						b = jsonw.Uint(b, `,"post_link_frequency":`, uint64(s.PostLinkFreq))
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
	fn   *Func
	r, j int
}

func blockIDs(fn *Func) blockWalk { return blockWalk{fn: fn} }

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

// AppendJSON appends block metadata m as an object of booleans, one per
// bit llvm-readobj prints (HasReturn, HasTailCall, IsEHPad,
// CanFallThrough, HasIndirectBranch).
func (m Metadata) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, k := range metadataKeys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = jsonw.Bool(b, `":`, m&(1<<i) != 0)
	}
	return append(b, '}')
}

var metadataTextNames = [...]string{"HasReturn", "HasTailCall", "IsEHPad", "CanFallThrough", "HasIndirectBranch"}

// appendMetadataText appends the names of m's bits joined by "|", or "-".
func appendMetadataText(b []byte, m Metadata) []byte {
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
func (p *Printer) appendAddrText(b []byte, r *Range, off uint64) []byte {
	if p.rel {
		b = append(b, p.sectionName(r.Section)...)
		b = append(b, '+')
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, r.Addr+off, 16)
}

func (p *Printer) appendText(b []byte, fn *Func) []byte {
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
			if feat&BBHash != 0 {
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
	if feat&FuncEntryCount != 0 {
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
		if feat&BBFreq != 0 {
			b = append(b, "  freq "...)
			b = strconv.AppendUint(b, pb.Freq, 10)
			if feat&PostLinkCfg != 0 {
				b = append(b, "  post-link "...)
				b = strconv.AppendUint(b, uint64(pb.PostLinkFreq), 10)
			}
		}
		if feat&BrProb != 0 {
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
				if feat&PostLinkCfg != 0 {
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

func orNone(s string) string {
	if s == "" {
		return "(no symbol)"
	}
	return s
}
