package symbolize

import "github.com/splitdbg/splitdbg/linetable"

// Global is the answer for a data address: the symbol holding it and
// where it is declared.
type Global struct {
	Name        string // "" if no symbol holds the address
	Start, Size uint64
	DeclFile    string // the STT_FILE of a local symbol, "" if unknown
	DeclLine    int
}

// Data returns the symbol holding addr (llvm-symbolizer's DATA request).
func (m *Module) Data(addr uint64, o *Options) Global {
	var g Global
	if s := m.syms.at(addr); s != nil {
		g = Global{Name: s.name, Start: s.addr, Size: s.size, DeclFile: s.file}
	}
	// DWARF's declaration, where it has a line, always as an absolute
	// name.
	if v, ok := m.inlines.VariableAt(addr); ok && v.DeclLine != 0 {
		g.DeclFile, g.DeclLine = v.DeclFile.Name(linetable.PathAbsolute), v.DeclLine
	}
	if o.Demangle {
		g.Name = demangleName(g.Name)
	}
	return g
}

// Symbol appends to dst one frame for each symbol named name that has a
// source position: the position at offset into the symbol (at its start
// if offset is beyond its size), as Frames gives it without inlines.
func (m *Module) Symbol(dst []Frame, name string, offset uint64, o *Options) []Frame {
	one := *o
	one.Inlines = false
	m.syms.named(name, func(s *symbol) bool {
		addr := s.addr
		if offset < s.size {
			addr += offset
		}
		n := len(dst)
		dst = m.Frames(dst, addr, &one)
		if dst[n].File == "" {
			dst = dst[:n]
		}
		return true
	})
	return dst
}
