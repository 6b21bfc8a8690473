package adapter

import (
	"slices"
	"strconv"
	"strings"

	"github.com/go-delve/delve/pkg/locspec"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/linetable"
)

// specKind classifies a Delve location spec by what splitdbg does with it.
type specKind int

const (
	specOther  specKind = iota // *ADDR, /regex/, FUNC:LINE...: Delve's, named
	specLine                   // FILE:LINE
	specFunc                   // FUNC
	specOffset                 // +N, -N, N: relative to the scope's frame
)

// classify returns the kind of a location spec, following Delve's
// grammar (pkg/locspec): FILE:LINE is a base and a decimal line; +N/-N
// and a bare N are offsets in the current file.
func classify(spec string) specKind {
	switch {
	case spec == "":
		return specOther
	case spec[0] == '*' || spec[0] == '/' && spec[len(spec)-1] == '/':
		return specOther
	case spec[0] == '+' || spec[0] == '-':
		if _, err := strconv.Atoi(spec[1:]); err == nil {
			return specOffset
		}
		return specOther
	}
	if _, err := strconv.Atoi(spec); err == nil {
		return specOffset
	}
	if i := strings.LastIndexByte(spec, ':'); i > 0 {
		if _, err := strconv.Atoi(spec[i+1:]); err == nil {
			return specLine
		}
		if strings.Contains(spec[:i], ".") && !strings.ContainsAny(spec, " \t") {
			return specFunc // FILE:FUNC, which Delve does not take
		}
		return specOther
	}
	if strings.ContainsAny(spec, " \t") {
		return specOther
	}
	return specFunc
}

// FindLocation implements service.Client. FILE:LINE gives, besides
// Delve's addresses, one in every moved fragment that holds the line;
// FUNC on a split function whose start Delve misses or puts in moved code
// gives the start in the entry fragment; +N, -N and N work from a frame in
// moved code. Any other spec, and every spec that involves no moved code,
// is Delve's answer, with locations in split functions named.
func (c *Client) FindLocation(scope api.EvalScope, loc string, findInstructions bool, rules [][2]string) ([]api.Location, string, error) {
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, "", err
	}
	switch classify(loc) {
	case specLine, specFunc:
		spec, err := linetable.ParseSpec(loc)
		if err != nil {
			break
		}
		if spec.Line > 0 {
			if locs, ok := c.findLine(ds, spec, findInstructions, rules); ok {
				return locs, "", nil
			}
		} else if locs, _, ok := c.findFunc(ds, spec, findInstructions, rules); ok {
			return locs, "", nil
		}
	case specOffset:
		if locs, ok, err := c.findOffset(scope, loc, findInstructions, rules); ok || err != nil {
			return locs, "", err
		}
	}
	return c.plainFind(ds, loc, findInstructions, rules)
}

// plainFind is Delve's FindLocation with locations in split functions
// named.
func (c *Client) plainFind(ds api.EvalScope, loc string, findInstructions bool, rules [][2]string) ([]api.Location, string, error) {
	locs, subst, err := c.delve.FindLocation(ds, loc, findInstructions, rules)
	for i := range locs {
		c.fixLocation(&locs[i], false)
	}
	return locs, subst, err
}

// findLine resolves FILE:LINE when the line has code in a moved fragment,
// to the addresses splitdbg's placement gives (linetable.LineAddrs, the
// one placement every door and "splitdbg break" use; Delve's never
// include moved code). ok is false when the line has no code in moved
// fragments.
func (c *Client) findLine(ds api.EvalScope, spec linetable.Spec, findInstructions bool, rules [][2]string) ([]api.Location, bool) {
	res, err := c.res.ResolveSpec(unsubstitute(spec, rules))
	if err != nil || !res.Moved() {
		return nil, false
	}
	pcs := res.Addrs()
	slices.Sort(pcs)
	pcs = slices.Compact(pcs)
	loc := api.Location{PC: pcs[0], PCs: pcs, File: res.File, Line: res.Line}
	if p := res.Locs[0].Proc; p != nil && allProc(&res) {
		loc.Function = logicalFunction(&res.Locs[0].Frame)
	}
	return []api.Location{loc}, true
}

// allMoved reports whether every location of res is in moved code.
func allMoved(res *Resolution) bool {
	for i := range res.Locs {
		if !res.Locs[i].Moved() {
			return false
		}
	}
	return true
}

// allProc reports whether every location of res is in one procedure.
func allProc(res *Resolution) bool {
	for i := range res.Locs {
		if res.Locs[i].Proc != res.Locs[0].Proc {
			return false
		}
	}
	return true
}

// findFunc resolves FUNC for a split function when Delve cannot: Delve
// keeps only a function's first DWARF range, so it fails when that range
// is unusable (cgo) or starts in moved code (clang 19 lists the cold
// range first). When Delve's answer is in the entry fragment it is kept
// and delve is true. ok is false for a function that is not split. A name
// of several functions gives one location with each one's start.
func (c *Client) findFunc(ds api.EvalScope, spec linetable.Spec, findInstructions bool, rules [][2]string) (locs []api.Location, delve, ok bool) {
	res, err := c.res.ResolveSpec(spec)
	if err == nil && len(res.Locs) == 1 && spec.File != "" {
		// FILE:FUNC picks one of several functions of a name.
		ours := res.Locs[0]
		return []api.Location{{PC: ours.PC, PCs: []uint64{ours.PC}, File: ours.File, Line: ours.Line, Function: logicalFunction(&ours.Frame)}}, false, true
	}
	if err == nil && len(res.Locs) > 1 {
		// Several functions of the name (static functions of several
		// files): one location at each start, as gdb sets one breakpoint
		// with a location in each.
		return []api.Location{{PC: res.Locs[0].PC, PCs: res.Addrs()}}, false, true
	}
	if err != nil || len(res.Locs) != 1 || !res.Locs[0].Split() {
		return nil, false, false
	}
	ours := res.Locs[0]
	if dl, _, err := c.delve.FindLocation(ds, spec.Text, findInstructions, rules); err == nil && len(dl) > 0 {
		inEntry := true
		for _, l := range dl {
			for _, pc := range l.PCs {
				f, ok := c.frame(pc, false)
				inEntry = inEntry && ok && f.Proc == ours.Proc && f.Frag == 0
			}
		}
		if inEntry {
			for i := range dl {
				c.fixLocation(&dl[i], false)
			}
			return dl, true, true
		}
	}
	return []api.Location{{
		PC:       ours.PC,
		PCs:      []uint64{ours.PC},
		File:     ours.File,
		Line:     ours.Line,
		Function: logicalFunction(&ours.Frame),
	}}, false, true
}

// findOffset resolves +N, -N and N against the scope's frame when that
// frame is in moved code, where Delve has no current file and line.
func (c *Client) findOffset(scope api.EvalScope, spec string, findInstructions bool, rules [][2]string) ([]api.Location, bool, error) {
	frames, err := c.Stacktrace(scope.GoroutineID, scope.Frame, scope.Frame, 0, nil)
	if err != nil || len(frames) == 0 {
		return nil, false, nil
	}
	fr := frames[0]
	f, ok := c.frame(fr.PC, scope.Frame > 0)
	if !ok || !f.Moved() || f.Line <= 0 {
		return nil, false, nil
	}
	line := f.Line
	switch n, _ := strconv.Atoi(spec[1:]); spec[0] {
	case '+':
		line += n
	case '-':
		line -= n
	default:
		line, _ = strconv.Atoi(spec)
	}
	if line == f.Line {
		return []api.Location{{PC: fr.PC, PCs: []uint64{fr.PC}, File: f.File, Line: f.Line, Function: logicalFunction(&f)}}, true, nil
	}
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, false, err
	}
	fileLine := linetable.LineSpec(f.File, line)
	if locs, ok := c.findLine(ds, fileLine, findInstructions, nil); ok {
		return locs, true, nil
	}
	locs, _, err := c.plainFind(ds, fileLine.Text, findInstructions, nil)
	return locs, true, err
}

// unsubstitute maps the file of a location written with the client's
// paths back to the path in the binary, undoing Delve's substitute-path
// rules ({from: binary path, to: client path}).
func unsubstitute(spec linetable.Spec, rules [][2]string) linetable.Spec {
	if len(rules) == 0 || spec.File == "" {
		return spec
	}
	rev := make([][2]string, len(rules))
	for j, r := range rules {
		rev[j] = [2]string{r[1], r[0]}
	}
	spec.File = locspec.SubstitutePath(spec.File, rev)
	return spec
}
