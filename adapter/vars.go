package adapter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/adapter/locals"
)

// Delve evaluates variables only in frames whose PC it finds a function
// for (pkg/proc EvalScope.Fn), and its function table has each
// subprogram's first DWARF range only: in moved code "args", "locals" and
// "print" fail with "unable to find function context". In a frame in
// moved code the Client reads the variables itself (package locals): the
// subprogram whose ranges hold the fragment, the frame's registers (the
// thread's for frame 0, Delve's or the splice's for callers), its CFA from
// the fragment's .eh_frame entry, and memory read over the API.

// movedFrame returns the frame of scope for package locals when its PC
// lies in moved code or it is a caller frame whose registers splitdbg
// unwound; ok is false otherwise (Delve answers).
func (c *Client) movedFrame(scope api.EvalScope) (rd *locals.Reader, fr *locals.Frame, ok bool, err error) {
	sf := c.scopeFrame(scope)
	if !sf.known || !sf.moved && !sf.unwound {
		return nil, nil, false, nil
	}
	return sf.rd, sf.fr, true, sf.err
}

// scopeFrame is a frame of the stopped target for package locals, built
// once per stop: its registers, CFA and memory are read once, and later
// calls at the stop read variables from memory already read.
type scopeFrame struct {
	known bool // Delve has the frame (not a deferred call's)
	moved bool // its PC is in moved code
	// unwound: a caller frame whose registers splitdbg unwound; Delve's
	// lack those its callee had not saved (stack.go).
	unwound bool
	c       bool // it runs C code
	rd      *locals.Reader
	fr      *locals.Frame
	err     error
}

// scopeFrame returns the frame of scope for package locals.
func (c *Client) scopeFrame(scope api.EvalScope) *scopeFrame {
	if sf := c.cachedFrame(scope); sf != nil {
		return sf
	}
	if scope.DeferredCall > 0 {
		return &scopeFrame{}
	}
	pc, line, ok := c.framePC(scope)
	if !ok {
		return &scopeFrame{}
	}
	return c.scopeFrameAt(scope, pc, line)
}

func (c *Client) cachedFrame(scope api.EvalScope) *scopeFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop.frames[scope]
}

// scopeFrameAt returns the frame of scope, whose PC and line the Client
// shows as pc and line.
func (c *Client) scopeFrameAt(scope api.EvalScope, pc uint64, line int) *scopeFrame {
	if sf := c.cachedFrame(scope); sf != nil {
		return sf
	}
	sf := c.newScopeFrame(scope, pc, line)
	c.mu.Lock()
	if c.stop.frames == nil {
		c.stop.frames = make(map[api.EvalScope]*scopeFrame)
	}
	c.stop.frames[scope] = sf
	c.mu.Unlock()
	return sf
}

func (c *Client) newScopeFrame(scope api.EvalScope, pc uint64, line int) *scopeFrame {
	sf := &scopeFrame{}
	ps, inline := c.physScope(scope)
	f, ok := c.frame(pc, ps.Frame > 0)
	if !ok {
		return sf
	}
	sf.known, sf.moved = true, f.Moved() || inline != 0
	sf.c = strings.HasPrefix(f.Function, "C.")
	var regs regSet
	var err error
	if ps.Frame > 0 {
		regs, sf.unwound = c.callerRegisters(ps)
	}
	switch {
	case ps.Frame == 0:
		regs, err = c.topRegisters(ps.GoroutineID)
	case !sf.unwound:
		var rs api.Registers
		if rs, err = c.delveScopeRegisters(ps, false); err == nil {
			regs, err = parseRegisters(rs)
		}
	}
	if err != nil {
		sf.err = fmt.Errorf("adapter: registers of frame %d: %w", scope.Frame, err)
		return sf
	}
	u := &unwinder{res: c.res, mem: c.stopMemory()}
	if sp, ok := regs.get(regRSP); ok {
		u.mem.prefetch(sp) // the frame's locals, and the caller's for entry values
	}
	sf.rd, sf.fr, sf.err = c.localsFrame(u, &regs, ps.Frame == 0, 0)
	if sf.err == nil {
		sf.fr.Inline = inline
		sf.fr.Line = line // the line the frame shows decides what is visible
	}
	return sf
}

// framePC returns the PC and line of the frame of scope as the Client
// shows it: frame 0 of the current goroutine from the stop, others from
// the (repaired) stack.
func (c *Client) framePC(scope api.EvalScope) (pc uint64, line int, ok bool) {
	if scope.Frame == 0 {
		st, err := c.stopState()
		if err == nil && st.CurrentThread != nil && (scope.GoroutineID < 0 ||
			st.SelectedGoroutine != nil && st.SelectedGoroutine.ID == scope.GoroutineID) {
			return st.CurrentThread.PC, st.CurrentThread.Line, true
		}
	}
	frames, err := c.Stacktrace(scope.GoroutineID, scope.Frame, 0, 0, nil)
	if err != nil || scope.Frame >= len(frames) {
		return 0, 0, false
	}
	return frames[scope.Frame].PC, frames[scope.Frame].Line, true
}

// delveGiveUps are what Delve 1.27 says of a variable whose DWARF it does
// not implement: DW_OP_entry_value and its GNU form, location lists by
// index (DW_FORM_loclistx, clang's DWARF 5), DW_OP_addrx, and
// DW_OP_deref_size of fewer than 4 bytes.
var delveGiveUps = [...]string{
	"invalid instruction 0xa3",
	"invalid instruction 0xf3",
	"could not interpret location attribute Location",
	"invalid instruction 0xa1",     // DW_OP_addrx (clang's DWARF 5 statics and globals)
	"pointer size 1 not supported", // DW_OP_deref_size 1 (GCC: a char of the frame)
	"pointer size 2 not supported",
}

// DelveGaveUp reports whether s — a variable's Unreadable, or a whole
// answer of Delve's — says Delve gave up on a variable the Client reads
// (ListFunctionArgs and ListLocalVariables replace those).
func DelveGaveUp(s string) bool {
	for _, m := range delveGiveUps {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// repair replaces the variables Delve read in scope but gave up on
// (DelveGaveUp) by package locals' reading of them; it costs nothing
// when Delve read them all.
func (c *Client) repair(scope api.EvalScope, vs []api.Variable, which locals.Which, cfg api.LoadConfig) []api.Variable {
	if !slices.ContainsFunc(vs, func(v api.Variable) bool { return DelveGaveUp(v.Unreadable) }) {
		return vs
	}
	sf := c.scopeFrame(scope)
	if !sf.known || sf.err != nil {
		return vs
	}
	ours, err := sf.rd.Variables(sf.fr, which, cfg)
	if err != nil {
		return vs
	}
	for i := range vs {
		if !DelveGaveUp(vs[i].Unreadable) {
			continue
		}
		j := slices.IndexFunc(ours, func(v api.Variable) bool { return v.Name == vs[i].Name && v.DeclLine == vs[i].DeclLine })
		if j >= 0 && ours[j].Unreadable == "" {
			ours[j].Flags |= vs[i].Flags & api.VariableShadowed
			vs[i] = ours[j]
		}
	}
	return vs
}

// MovedFrame reports whether the frame of scope executes moved code,
// where the Client, not Delve, reads variables. Frame 0 of the current
// goroutine costs no call after a stop the Client has seen.
func (c *Client) MovedFrame(scope api.EvalScope) bool {
	if scope.DeferredCall > 0 {
		return false
	}
	pc, _, ok := c.framePC(scope)
	if !ok {
		return false
	}
	ps, inline := c.physScope(scope)
	f, ok := c.frame(pc, ps.Frame > 0)
	return ok && (f.Moved() || inline != 0)
}

// frameVariables fills in the arguments and locals of the frames in
// moved code of a stack Delve loaded with variables (Stacktrace with a
// load configuration), which Delve leaves empty, and replaces those of
// the caller frames whose registers splitdbg unwound; refs say where
// each frame comes from (shownStack).
func (c *Client) frameVariables(gid int64, frames []api.Stackframe, refs []shownFrame, cfg api.LoadConfig) {
	for i := range frames {
		p := refs[i].phys
		f, ok := c.frame(frames[i].PC, p > 0)
		if !ok {
			continue
		}
		if !f.Moved() && refs[i].inline == 0 {
			if _, own := c.callerRegisters(api.EvalScope{GoroutineID: gid, Frame: p}); p == 0 || !own {
				continue // Delve's own variables
			}
		}
		sf := c.scopeFrameAt(api.EvalScope{GoroutineID: gid, Frame: i}, frames[i].PC, frames[i].Line)
		if sf.err != nil {
			continue
		}
		frames[i].Arguments, _ = sf.rd.Variables(sf.fr, locals.Args, cfg)
		frames[i].Locals, _ = sf.rd.Variables(sf.fr, locals.Locals, cfg)
	}
}

// maxEntryValueDepth bounds the callers searched for entry values.
const maxEntryValueDepth = 4

// localsFrame describes to package locals the frame with registers regs;
// top says it is the innermost frame. The registers of the others come
// from an unwind (unwinder.step), which leaves out those a call clobbers.
func (c *Client) localsFrame(u *unwinder, regs *regSet, top bool, depth int) (*locals.Reader, *locals.Frame, error) {
	at := regs.pc()
	if !top {
		at--
	}
	// c.frame first: it learns the libraries loaded if at is in none the
	// resolver knows (an entry value's caller in libc, at a first stop).
	f, ok := c.frame(regs.pc(), !top)
	im := c.res.imageOf(at)
	if im == nil {
		return nil, nil, fmt.Errorf("adapter: %#x is in no image", at)
	}
	t, err := im.load()
	if err != nil {
		return nil, nil, err
	}
	rd, err := t.variables()
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, fmt.Errorf("adapter: %#x is in no procedure", at)
	}
	sub := f.Proc.Fragments[f.Frag].Subprogram
	if sub == 0 {
		// BOLT keeps GCC's foo.cold but leaves it out of foo's ranges.
		return nil, nil, fmt.Errorf("adapter: no variables of %s at %#x: DWARF describes no code of fragment %s", f.Function, at, f.Proc.Fragments[f.Frag].Symbol)
	}
	caller, cfa, stepErr := u.step(regs, top, 0)
	fr := &locals.Frame{
		Subprogram: sub,
		PC:         at - im.bias,
		Line:       f.Line,
		Regs:       dwarfRegisters(regs, cfa, im.bias),
		Mem:        u.mem.readAt,
	}
	// Every entry value of the frame asks for its caller: build it once.
	var (
		once     sync.Once
		callerRd *locals.Reader
		callerFr *locals.Frame
		callerEr error
	)
	fr.Caller = func() (*locals.Reader, *locals.Frame, error) {
		once.Do(func() {
			switch {
			case stepErr != nil:
				callerEr = stepErr
			case depth >= maxEntryValueDepth:
				callerEr = errors.New("too many callers deep")
			default:
				callerRd, callerFr, callerEr = c.localsFrame(u, &caller, false, depth+1)
			}
		})
		return callerRd, callerFr, callerEr
	}
	return rd, fr, nil
}

// dwarfRegisters converts a register set to Delve's form, with the CFA
// (0: unknown).
func dwarfRegisters(r *regSet, cfa, bias uint64) *op.DwarfRegisters {
	regs := op.NewDwarfRegisters(bias, nil, binary.LittleEndian, regRIP, regRSP, regRBP, 0)
	for n := range uint64(numReg) {
		if v, ok := r.get(n); ok {
			regs.AddReg(n, op.DwarfRegisterFromUint64(v))
		}
	}
	regs.CFA = int64(cfa)
	return regs
}

// stopMemory returns the memory of the stopped target as read at this
// stop, shared by the frames read in it: callers' frames lie in the
// blocks read for the frames they called.
func (c *Client) stopMemory() *memory {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop.mem == nil {
		c.stop.mem = &memory{read: c.readMemory, static: c.readOnly}
	}
	return c.stop.mem
}

// readOnly reads n bytes of the process at addr from the file of its
// image, when they lie in a read-only segment.
func (c *Client) readOnly(addr uint64, n int) ([]byte, bool) {
	if im := c.res.imageOf(addr); im != nil {
		return im.readOnly(addr-im.bias, n)
	}
	return nil, false
}

// examineLimit is the most bytes Delve's ExamineMemory returns in one
// call (examineLimit, not imported: the core speaks no
// protocol).
const examineLimit = 1 << 16

// readMemory reads n bytes of the process at addr, in as many calls as
// Delve's limit on one takes.
func (c *Client) readMemory(addr uint64, n int) ([]byte, error) {
	out := make([]byte, 0, min(n, examineLimit))
	for len(out) < n {
		k := min(n-len(out), examineLimit)
		b, _, err := c.delve.ExamineMemory(addr+uint64(len(out)), k)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("adapter: no memory at %#x", addr+uint64(len(out)))
		}
		out = append(out, b...)
	}
	return out, nil
}
