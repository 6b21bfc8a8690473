package linetable

import (
	"errors"
	"path"
	"strings"

	"github.com/splitdbg/splitdbg/internal/dwarfline"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/splitinfo"
)

// ScopeOf returns the compile units resolving s needs (see
// splitinfo.Scope), nil for the whole file: for *ADDR the units holding
// the address; for FUNC those holding the symbols of the name and its
// fragments and clones (splitinfo.NameAddrs); for FILE:LINE those whose
// line program names a file that FILE matches (MatchFiles), so the
// table knows every file FILE can mean; for FILE:FUNC both.
func ScopeOf(f *elfx.File, s Spec) (*splitinfo.Scope, error) {
	switch {
	case s.IsAddr:
		return splitinfo.ScopeOfAddrs(f, []uint64{s.Addr})
	case s.Line > 0:
		return scopeOfFile(f, s.File, nil)
	case s.File != "":
		addrs := splitinfo.NameAddrs(f, s.Func)
		if len(addrs) == 0 {
			return nil, nil
		}
		return scopeOfFile(f, s.File, addrs)
	}
	return splitinfo.ScopeOfName(f, s.Func)
}

// scopeOfFile is the scope of the units holding addrs and of those
// whose line program names a file that name matches.
func scopeOfFile(f *elfx.File, name string, addrs []uint64) (*splitinfo.Scope, error) {
	secs, err := dwarfline.Load(f)
	if err != nil || secs == nil {
		return nil, err
	}
	name = path.Clean(name)
	base := path.Base(name)
	return splitinfo.NewScope(f, addrs, func(u *splitinfo.Unit) bool {
		if !u.HasStmtList {
			return false
		}
		p, err := dwarfline.New(secs, u.StmtList, u.CompDir, u.AddressSize)
		if err != nil {
			return true // the whole table reports it: so does this one
		}
		for _, fn := range p.Files {
			c := path.Clean(fn)
			if path.Base(c) == base && (c == name || hasPathSuffix(c, name) || !path.IsAbs(c) && hasPathSuffix(name, strings.TrimPrefix(c, "./"))) {
				return true
			}
		}
		return false
	})
}

// ResolveFile resolves a location spec in the ELF file at path: see
// ResolveELF.
func ResolveFile(path, spec string) (Breakpoint, error) {
	return elfx.OpenWith(path, func(f *elfx.File) (Breakpoint, error) { return ResolveELF(f, spec) })
}

// ResolveELF resolves a location spec in f, reading only the compile
// units it needs (ScopeOf): the answer is Resolve's on the whole file's
// table. A function name not found there is looked for in the whole
// file, where a procedure known by its DWARF name only is.
func ResolveELF(f *elfx.File, spec string) (Breakpoint, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return Breakpoint{}, err
	}
	scope, err := ScopeOf(f, s)
	if err != nil {
		return Breakpoint{}, err
	}
	t, err := fromELFIn(f, scope)
	if err != nil {
		return Breakpoint{}, err
	}
	b, err := t.ResolveSpec(s)
	if scope != nil && s.Func != "" && errors.Is(err, ErrNotFound) {
		if t, err = fromELF(f); err != nil {
			return Breakpoint{}, err
		}
		b, err = t.ResolveSpec(s)
	}
	return b, err
}
