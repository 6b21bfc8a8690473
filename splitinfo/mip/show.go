package mip

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadMap reads a map: a map file (.mipmap, extracted from a binary) or
// the __llvm_mipmap section of an instrumented ELF file. Errors name path.
func ReadMap(path string) (*Map, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, Magic[:]) {
		m, err := DecodeMap(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return m, nil
	}
	b, err := Open(path)
	if err != nil {
		return nil, err
	}
	if b.Map == nil {
		return nil, fmt.Errorf("%s: no %s section (give the map extracted from it)", path, MapSection)
	}
	return b.Map, nil
}

// ReadProfile reads the profile (.mip) at path. Errors name path.
func ReadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := DecodeProfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// MergeFiles merges into p every file at paths: raw profiles of runs or
// profiles of the same binary, told apart by the header's file type, as
// MergeRaw and Merge merge them. It counts the raw profiles and profiles
// merged; errors name the file.
func (p *Profile) MergeFiles(paths []string) (merged *Profile, raws, profiles int, err error) {
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, 0, 0, err
		}
		if h, herr := DecodeHeader(path, data); herr == nil && h.FileType == ProfileFile {
			var o *Profile
			if o, err = DecodeProfile(data); err == nil {
				p, err = p.Merge(o)
			}
			profiles++
		} else {
			var r *Raw
			if r, err = DecodeRaw(data); err == nil {
				p, err = p.MergeRaw(r)
			}
			raws++
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	return p, raws, profiles, nil
}

// Tally counts p's covered functions and its non-entry blocks, all and
// covered.
func (p *Profile) Tally() (funcs, blocks, coveredBlocks int) {
	for i := range p.Funcs {
		f := &p.Funcs[i]
		if f.Covered() {
			funcs++
		}
		for _, b := range f.Blocks {
			blocks++
			if b.Covered {
				coveredBlocks++
			}
		}
	}
	return funcs, blocks, coveredBlocks
}

// Report is a profile's coverage report, what `splitdbg mip show`
// prints; its JSON is the command's.
type Report struct {
	ModuleHash  uint32       `json:"module_hash"`
	ProfileType uint32       `json:"profile_type"`
	Functions   []ReportFunc `json:"functions"`
	profile     *Profile
}

// ReportFunc is one function of a Report. Addr, File and Line are
// set when the report has the instrumented binary and it knows them.
type ReportFunc struct {
	Name         string        `json:"name"`
	Covered      bool          `json:"covered"`
	MergeCount   uint32        `json:"merge_count"`
	CallCount    uint64        `json:"call_count"`
	TimestampSum uint64        `json:"timestamp_sum"`
	Size         uint32        `json:"size"`
	CFGSignature uint32        `json:"cfg_signature"`
	Signature    uint64        `json:"signature"`
	RawOffset    uint32        `json:"raw_offset"`
	FuncOffset   int32         `json:"func_offset"`
	Addr         *uint64       `json:"addr,omitempty"`
	File         string        `json:"file,omitempty"`
	Line         int           `json:"line,omitempty"`
	Blocks       []ReportBlock `json:"blocks"`
}

// ReportBlock is one non-entry block of a ReportFunc; Index counts
// from 1, the entry block being 0.
type ReportBlock struct {
	Index   int     `json:"index"`
	Offset  uint32  `json:"offset"`
	Covered bool    `json:"covered"`
	Addr    *uint64 `json:"addr,omitempty"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line,omitempty"`
}

// Report returns p's coverage report, of the covered functions and
// blocks only with coveredOnly. With a binary (pos not nil, its raw
// section at rawAddr), functions and blocks get addresses, and pos gives
// their source positions (ok false when unknown).
func (p *Profile) Report(coveredOnly bool, rawAddr uint64, pos func(addr uint64) (file string, line int, ok bool)) *Report {
	at := func(addr uint64) (*uint64, string, int) {
		if file, line, ok := pos(addr); ok {
			return &addr, file, line
		}
		return &addr, "", 0
	}
	c := &Report{ModuleHash: p.ModuleHash, ProfileType: uint32(p.ProfileType), Functions: []ReportFunc{}, profile: p}
	for i := range p.Funcs {
		f := &p.Funcs[i]
		if coveredOnly && !f.Covered() {
			continue
		}
		jf := ReportFunc{Name: f.Name, Covered: f.Covered(), MergeCount: f.MergeCount, CallCount: f.CallCount,
			TimestampSum: f.TimestampSum, Size: f.Size, CFGSignature: f.CFGSignature, Signature: f.Signature,
			RawOffset: f.RawOffset, FuncOffset: int32(f.FuncOffset), Blocks: []ReportBlock{}}
		entry := f.Addr(rawAddr)
		if pos != nil {
			jf.Addr, jf.File, jf.Line = at(entry)
		}
		for k, b := range f.Blocks {
			if coveredOnly && !b.Covered {
				continue
			}
			jb := ReportBlock{Index: k + 1, Offset: b.Offset, Covered: b.Covered}
			if pos != nil {
				jb.Addr, jb.File, jb.Line = at(BlockAddr(entry, b.Offset))
			}
			jf.Blocks = append(jf.Blocks, jb)
		}
		c.Functions = append(c.Functions, jf)
	}
	return c
}

// WriteText writes c as `splitdbg mip show` lists it: a summary line, a
// line per function and one per block, each with its address or, without
// the binary, its offset.
func (c *Report) WriteText(w io.Writer) error {
	p := c.profile
	bw := bufio.NewWriter(w)
	covered, _, _ := p.Tally()
	fmt.Fprintf(bw, "module hash %#08x, profile type %#x (%v): %d of %d functions covered\n",
		p.ModuleHash, uint32(p.ProfileType), p.ProfileType, covered, len(p.Funcs))
	state := func(c bool) string {
		if c {
			return "covered"
		}
		return "not covered"
	}
	where := func(addr *uint64, rel string) string {
		if addr != nil {
			return fmt.Sprintf("%#x", *addr)
		}
		return rel
	}
	source := func(file string, line int) string {
		if file == "" {
			return ""
		}
		return fmt.Sprintf("  %s:%d", file, line)
	}
	for _, f := range c.Functions {
		name := f.Name
		if name == "" {
			name = "(no symbol)"
		}
		fmt.Fprintf(bw, "%s  %s  size %d  %s  merges %d", name,
			where(f.Addr, fmt.Sprintf("%s%+#x", RawSection, f.FuncOffset)), f.Size, state(f.Covered), f.MergeCount)
		if p.ProfileType.Counts() {
			fmt.Fprintf(bw, "  calls %d  timestamps %d", f.CallCount, f.TimestampSum)
		}
		fmt.Fprintf(bw, "%s\n", source(f.File, f.Line))
		for _, b := range f.Blocks {
			fmt.Fprintf(bw, "  block %d  %s  %s%s\n", b.Index, where(b.Addr, fmt.Sprintf("+%#x", b.Offset)), state(b.Covered), source(b.File, b.Line))
		}
	}
	return bw.Flush()
}

// OpenFor reads the MIP sections of the instrumented binary at path, as
// Open does, and checks that p was made for it (see CheckProfile).
// Errors name path.
func OpenFor(path string, p *Profile) (*Binary, error) {
	b, err := Open(path)
	if errors.Is(err, ErrNoMIP) {
		return nil, fmt.Errorf("%s: no %s section: not an instrumented binary", path, RawSection)
	}
	if err != nil {
		return nil, err
	}
	if err := b.CheckProfile(p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// CheckProfile checks that p was made for the instrumented binary b and
// that b locates functions: b has a raw section, and its map (or, when
// the map was extracted, its raw section's header) matches p. The error
// wraps ErrMismatch when p is of another build.
func (b *Binary) CheckProfile(p *Profile) error {
	switch {
	case !b.HasRaw:
		return fmt.Errorf("no %s section: no function addresses", RawSection)
	case b.Map != nil:
		if err := p.CheckMap(b.Map); err != nil {
			return fmt.Errorf("the profile is not of this binary: %w", err)
		}
	case b.Raw != nil && (b.Raw.ModuleHash != p.ModuleHash || b.Raw.ProfileType != p.ProfileType):
		return fmt.Errorf("the profile is not of this binary: %w: module hash %#08x and profile type %#x, the profile %#08x and %#x",
			ErrMismatch, b.Raw.ModuleHash, uint32(b.Raw.ProfileType), p.ModuleHash, uint32(p.ProfileType))
	}
	return nil
}
