package adapter

import (
	"errors"
	"fmt"
	"iter"
	"path"
	"strings"
	"sync"

	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/linetable"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// Resolver answers split-aware address and source questions about one
// debugged process: its executable and the shared libraries it loaded.
// Addresses it takes and returns are runtime addresses; it translates
// them with each image's load bias. It is safe for concurrent use.
type Resolver struct {
	mu     sync.RWMutex
	exe    *image
	libs   []*image
	old    []*image // replaced images, closed by Close
	closed bool
}

// NewResolver returns a Resolver for the executable at path, with load
// bias 0 until SetExecutableBias. Its tables are built at the first
// question that needs them (not on a debugger's start-up path); a file
// they cannot be built from is that question's error.
func NewResolver(path string) (*Resolver, error) {
	exe, err := openImage(path, 0)
	if err != nil {
		return nil, err
	}
	return &Resolver{exe: exe}, nil
}

// Executable returns the path of the executable.
func (r *Resolver) Executable() string { return r.exe.path }

// ExecutableBias returns the executable's load bias.
func (r *Resolver) ExecutableBias() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.exe.bias
}

// SetExecutableBias sets the executable's load bias (runtime address minus
// link-time address).
func (r *Resolver) SetExecutableBias(bias uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exe.bias = bias
}

// SetLibraries replaces the shared-library list with Delve's image list
// (ListDynamicLibraries): api.Image.Address is the library's load bias.
// Tables already built for a library at the same path are kept.
func (r *Resolver) SetLibraries(imgs []api.Image) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byPath := make(map[string]*image, len(r.libs))
	for _, im := range r.libs {
		byPath[im.path] = im
	}
	libs := make([]*image, 0, len(imgs))
	for _, ai := range imgs {
		if ai.Path == "" {
			continue // LoadError only says Delve has no debug info for it
		}
		if im := byPath[ai.Path]; im != nil {
			im.bias = ai.Address
			libs = append(libs, im)
			delete(byPath, ai.Path)
			continue
		}
		im, err := openImage(ai.Path, ai.Address)
		if err != nil {
			continue // e.g. the vdso: no file, nothing split
		}
		libs = append(libs, im)
	}
	for _, im := range byPath {
		r.old = append(r.old, im)
	}
	r.libs = libs
}

// Close releases every image's file mapping. Later calls do nothing.
func (r *Resolver) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, im := range append(append([]*image{r.exe}, r.libs...), r.old...) {
		errs = append(errs, im.close())
	}
	return errors.Join(errs...)
}

// images yields the executable, then the libraries.
func (r *Resolver) images() iter.Seq[*image] {
	return func(yield func(*image) bool) {
		r.mu.RLock()
		ims := append([]*image{r.exe}, r.libs...)
		r.mu.RUnlock()
		for _, im := range ims {
			if !yield(im) {
				return
			}
		}
	}
}

// imageOf returns the image mapped at the runtime address pc.
func (r *Resolver) imageOf(pc uint64) *image {
	for im := range r.images() {
		if im.contains(pc) {
			return im
		}
	}
	return nil
}

// Known reports whether pc lies in an image the Resolver knows.
func (r *Resolver) Known(pc uint64) bool { return r.imageOf(pc) != nil }

// Frame is the logical position of a PC: the procedure and fragment that
// hold it and its source line.
type Frame struct {
	// PC is the runtime address asked about.
	PC uint64
	// Function is the procedure's name as Delve spells it: "C.name" for a
	// function of a non-Go compile unit, the Go name otherwise.
	Function string
	Proc     *splitinfo.Proc
	// Frag is the index of the fragment in Proc.Fragments (logical order);
	// 0 is the entry fragment.
	Frag int
	File string
	Line int
	// Entry is the runtime address of the procedure's entry.
	Entry uint64
	// Bias is the load bias of the image holding PC.
	Bias uint64
	// Image is the path of the ELF file holding PC.
	Image string
}

// Moved reports whether the frame's PC lies in a moved fragment: code of a
// split procedure away from its entry fragment.
func (f *Frame) Moved() bool { return f.Proc != nil && f.Frag > 0 }

// Split reports whether the frame's procedure has several fragments.
func (f *Frame) Split() bool { return f.Proc != nil && f.Proc.Split() }

// Frame returns the logical position of the runtime address pc. When call
// is set pc is a return address, and the position is that of the call
// instruction before it (pc-1), as debuggers show caller frames.
func (r *Resolver) Frame(pc uint64, call bool) (Frame, bool) {
	at := pc
	if call && at > 0 {
		at--
	}
	im := r.imageOf(at)
	if im == nil {
		return Frame{}, false
	}
	t, err := im.load()
	if err != nil {
		return Frame{}, false
	}
	link := at - im.bias
	loc, ok := t.procs.Lookup(link)
	if !ok {
		return Frame{}, false
	}
	f := Frame{
		PC:       pc,
		Function: delveName(loc.Proc),
		Proc:     loc.Proc,
		Frag:     loc.Frag,
		Entry:    loc.Proc.Entry + im.bias,
		Bias:     im.bias,
		Image:    im.path,
	}
	// In a split procedure, a stop reports the statement row at its
	// address, as debuggers show it; elsewhere Delve's choice stands.
	// The procedure is known: look up only the line.
	var file string
	var line int
	if loc.Proc.Split() {
		file, line, _, ok = t.lines.StopLine(link)
	} else {
		file, line, _, ok = t.lines.Line(link)
	}
	if (!ok || line <= 0) && !call && link > 0 {
		// A line-0 row mid-fragment (clang's, after a call returns):
		// the stop is within the statement of the instruction before,
		// which is where stepping out of the callee leaves it.
		if prev, ok := t.procs.Lookup(link - 1); ok && prev.Proc == loc.Proc && prev.Frag == loc.Frag {
			file, line, _, ok = t.lines.Line(link - 1)
		}
	}
	if ok && line > 0 {
		f.File, f.Line = file, line
	}
	return f, true
}

// StopLine returns the line a stop at the runtime address pc reports, as
// gdb reports it: the last statement row at pc (Delve reports the first
// row at pc).
func (r *Resolver) StopLine(pc uint64) (file string, line int, ok bool) {
	im := r.imageOf(pc)
	if im == nil {
		return "", 0, false
	}
	t, err := im.load()
	if err != nil {
		return "", 0, false
	}
	file, line, _, ok = t.lines.StopLine(pc - im.bias)
	return file, line, ok && line > 0
}

// Ranges returns the runtime address ranges of the procedure holding pc,
// in logical order (the seed's sp_ranges).
func (r *Resolver) Ranges(pc uint64) []splitinfo.Range {
	f, ok := r.Frame(pc, false)
	if !ok {
		return nil
	}
	var rs []splitinfo.Range
	for rg := range f.Proc.Ranges() {
		rs = append(rs, splitinfo.Range{Start: rg.Start + f.Bias, End: rg.End + f.Bias})
	}
	return rs
}

// Location is one breakpoint address of a resolved location spec.
type Location struct {
	Frame
	// NoStmt reports an address that is the first row of its block rather
	// than a statement start (BOLT drops is_stmt flags in moved code).
	NoStmt bool
}

// Resolution is a location spec resolved to breakpoint addresses.
type Resolution struct {
	Spec string
	// File and Line are the source line of a FILE:LINE spec, and the
	// position of the address for FUNC and *ADDR.
	File string
	Line int
	Locs []Location
}

// Addrs returns the runtime addresses of the resolution.
func (res *Resolution) Addrs() []uint64 {
	addrs := make([]uint64, len(res.Locs))
	for i := range res.Locs {
		addrs[i] = res.Locs[i].PC
	}
	return addrs
}

// Moved reports whether any address lies in a moved fragment.
func (res *Resolution) Moved() bool {
	for i := range res.Locs {
		if res.Locs[i].Moved() {
			return true
		}
	}
	return false
}

// Resolve resolves a location spec — FUNC, FILE:LINE, FILE:FUNC or *ADDR
// (a runtime address) — to runtime breakpoint addresses: for FILE:LINE
// one in every fragment that holds the line, for FUNC the function's
// start in its entry fragment. The executable is searched first, then the
// shared libraries.
func (r *Resolver) Resolve(spec string) (Resolution, error) {
	s, err := linetable.ParseSpec(spec)
	if err != nil {
		return Resolution{}, fmt.Errorf("adapter: %w", err)
	}
	return r.ResolveSpec(s)
}

// ResolveSpec resolves a parsed location, as Resolve.
func (r *Resolver) ResolveSpec(s linetable.Spec) (Resolution, error) {
	if s.IsAddr {
		im := r.imageOf(s.Addr)
		if im == nil {
			return Resolution{}, fmt.Errorf("adapter: location %q: %w", s.Text, linetable.ErrNotFound)
		}
		return r.resolveIn(im, s)
	}
	var first error
	for im := range r.images() {
		res, err := r.resolveIn(im, s)
		if err == nil {
			return res, nil
		}
		if first == nil {
			first = err
		}
		if !errors.Is(err, linetable.ErrNotFound) {
			return Resolution{}, err
		}
	}
	return Resolution{}, first
}

// resolveIn resolves s in one image; an address is a runtime address.
func (r *Resolver) resolveIn(im *image, s linetable.Spec) (Resolution, error) {
	t, err := im.load()
	if err != nil {
		return Resolution{}, err
	}
	link := s
	if s.IsAddr {
		link.Addr -= im.bias
	}
	bp, err := t.lines.ResolveSpec(link)
	if err != nil {
		return Resolution{}, fmt.Errorf("adapter: %w", err)
	}
	res := Resolution{Spec: s.Text, File: bp.File, Line: bp.Line}
	for _, l := range bp.Locs {
		loc := Location{NoStmt: l.NoStmt, Frame: Frame{
			PC:    l.Addr + im.bias,
			Proc:  l.Proc,
			Frag:  l.Frag,
			File:  l.File,
			Line:  l.Line,
			Bias:  im.bias,
			Image: im.path,
		}}
		if l.Proc != nil {
			loc.Function = delveName(l.Proc)
			loc.Entry = l.Proc.Entry + im.bias
		}
		res.Locs = append(res.Locs, loc)
	}
	return res, nil
}

// SplitFunctions yields the Delve names of the executable's split
// procedures.
func (r *Resolver) SplitFunctions() iter.Seq[string] {
	return func(yield func(string) bool) {
		t, err := r.exe.load()
		if err != nil {
			return
		}
		for p := range t.procs.Split() {
			if !yield(delveName(p)) {
				return
			}
		}
	}
}

// delveName returns the name Delve gives the procedure: the DWARF name
// prefixed with "C." for a function of a non-Go compile unit, the Go name
// for Go code.
func delveName(p *splitinfo.Proc) string {
	// A Go compile unit is named after its package and holds Go assembly
	// (.s) too; a C unit is named after its source file.
	unit := p.CompUnit
	if unit == "" {
		unit = p.File
	}
	if cSource(unit) {
		name := p.SourceName
		if name == "" {
			name = p.Name
		}
		return "C." + name
	}
	if p.SourceName != "" {
		return p.SourceName // runtime.asmcgocall, not its symbol runtime.asmcgocall.abi0
	}
	return p.Name
}

// cSource reports whether a compile unit or file name is C-family source
// or assembly, which Delve names with the "C." prefix.
func cSource(name string) bool {
	switch path.Ext(name) {
	case ".c", ".h", ".cc", ".cp", ".cpp", ".cxx", ".c++", ".C", ".hh", ".hpp",
		".S", ".s", ".asm", ".m", ".mm":
		return true
	}
	return strings.HasPrefix(name, "/tmp/go-build/cgo-") // cgo's generated prologs
}

// GoProgram reports whether the executable is a Go program, whose
// threads of execution a debugger shows as goroutines; other programs
// have only OS threads. Go's linker (1.13 and later) gives every Go
// executable, cgo ones linked by the C linker too, a .go.buildinfo
// section (the one debug/buildinfo reads) and .gopclntab; a C program
// has neither. Asking costs no table.
func (r *Resolver) GoProgram() bool {
	return r.exe.f.Section(".go.buildinfo") != nil || r.exe.f.Section(".gopclntab") != nil
}

// SourceFile returns the name under which the executable or a library
// records the source file name, by the rules of FILE:LINE locations (the
// same path, or a path suffix either way round): the name Delve knows an
// editor's absolute path by. It returns name when no image, or more than
// one file, matches.
func (r *Resolver) SourceFile(name string) string {
	for im := range r.images() {
		t, err := im.load()
		if err != nil {
			continue
		}
		if m := t.lines.MatchFiles(name); len(m) == 1 {
			return m[0]
		} else if len(m) > 1 {
			return name
		}
	}
	return name
}
