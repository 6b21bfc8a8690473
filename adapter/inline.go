package adapter

import (
	"debug/dwarf"

	"github.com/go-delve/delve/service/api"
)

// Delve shows each inlined call (DW_TAG_inlined_subroutine) at a frame's
// PC as a frame of its own above the function it is inlined into, named
// by the inlined function and with its variables (pkg/proc
// stackIterator.appendInlineCalls) — but only for PCs its function table
// knows, which moved code is not; gdb shows them everywhere. The Client
// adds the inlined frames of the frames Delve has no function for: the
// stack it shows is Delve's (repaired, physStack) with those frames
// expanded, and a scope on it is translated to the physical frame and
// the inlined subroutine it shows.

// shownFrame is where a frame of the shown stack comes from: frame phys
// of the physical stack, showing the inlined subroutine at inline (0:
// the function itself).
type shownFrame struct {
	phys   int
	inline dwarf.Offset
}

// shownStack returns the stack of goroutine gid as the Client shows it,
// at most depth+1 frames as Delve gives, and where each frame comes from.
func (c *Client) shownStack(gid int64, depth int, opts api.StacktraceOptions) ([]api.Stackframe, []shownFrame, error) {
	phys, own, err := c.physStack(gid, depth, opts)
	if err != nil || len(phys) == 0 {
		return phys, nil, err
	}
	var out []api.Stackframe
	var refs []shownFrame
	for i := range phys {
		if own[i] {
			for _, fr := range c.inlinedFrames(&phys[i], i > 0) {
				out = append(out, fr.frame)
				refs = append(refs, shownFrame{phys: i, inline: fr.inline})
			}
			continue
		}
		out = append(out, phys[i])
		refs = append(refs, shownFrame{phys: i})
	}
	if len(out) > depth+1 {
		out, refs = out[:depth+1], refs[:depth+1]
	}
	c.mu.Lock()
	if c.stop.shown == nil {
		c.stop.shown = make(map[int64][]shownFrame)
	}
	if len(refs) > len(c.stop.shown[gid]) {
		c.stop.shown[gid] = refs
	}
	c.mu.Unlock()
	return out, refs, nil
}

type inlinedFrame struct {
	frame  api.Stackframe
	inline dwarf.Offset
}

// inlinedFrames returns the frames of physical frame fr: one per inlined
// call executing at its PC, innermost first, named by the inlined
// function at the line of the frame above (the innermost at fr's line),
// then fr itself at the line of the outermost call. call says fr's PC
// is a return address.
func (c *Client) inlinedFrames(fr *api.Stackframe, call bool) []inlinedFrame {
	self := []inlinedFrame{{frame: *fr}}
	f, ok := c.frame(fr.PC, call)
	if !ok || f.Proc == nil {
		return self
	}
	sub := f.Proc.Fragments[f.Frag].Subprogram
	at := fr.PC - f.Bias
	if call {
		at--
	}
	im := c.res.imageOf(fr.PC - boolInt(call))
	if sub == 0 || im == nil {
		return self
	}
	t, err := im.load()
	if err != nil {
		return self
	}
	rd, err := t.variables()
	if err != nil {
		return self
	}
	inl, err := rd.Inlines(sub, at)
	if err != nil || len(inl) == 0 {
		return self
	}
	out := make([]inlinedFrame, 0, len(inl)+1)
	file, line := fr.File, fr.Line
	for _, in := range inl {
		g := *fr
		g.Function = &api.Function{Name_: cName(f.Function, in.Name), Value: f.Entry}
		g.File, g.Line = file, line
		out = append(out, inlinedFrame{frame: g, inline: in.Offset})
		if in.CallFile != "" {
			file = in.CallFile
		}
		line = in.CallLine
	}
	g := *fr
	g.File, g.Line = file, line
	return append(out, inlinedFrame{frame: g})
}

// cName spells the C function name as Delve spells fn's: "C.name" when
// fn, the function it is inlined into, is spelled so.
func cName(fn, name string) string {
	if len(fn) > 2 && fn[:2] == "C." {
		return "C." + name
	}
	return name
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// physScope translates a scope on the shown stack to the physical frame
// and the inlined subroutine it shows (0: none).
func (c *Client) physScope(s api.EvalScope) (api.EvalScope, dwarf.Offset) {
	if s.DeferredCall > 0 {
		return s, 0
	}
	c.mu.Lock()
	refs := c.stop.shown[s.GoroutineID]
	c.mu.Unlock()
	if s.Frame >= len(refs) {
		var err error
		if _, refs, err = c.shownStack(s.GoroutineID, s.Frame, 0); err != nil || s.Frame >= len(refs) {
			return s, 0
		}
	}
	r := refs[s.Frame]
	s.Frame = r.phys
	return s, r.inline
}
