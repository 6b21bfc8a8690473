package adapter

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-delve/delve/service/api"
)

// How Delve loses frames at moved code (pkg/proc, stack.go and
// amd64_arch.go): its unwinder uses the FDE of any PC, moved code
// included, so in a C program the stack through a cold fragment is right
// and only the names are missing. But when the innermost frame has no
// function (Delve's function table has only each function's first DWARF
// range) and the thread runs a goroutine on the system stack — a cgo call
// — amd64SwitchStack takes the frame for runtime code and switches to the
// goroutine's saved state (g.sched): the C frames between the cold
// fragment and runtime.asmcgocall vanish and the stack continues at
// runtime.systemstack_switch.
//
// Stacktrace repairs that: when the innermost frame is in moved code and
// the thread runs a goroutine, it unwinds that frame with its own
// .eh_frame CFI, from the frame's CFA as Delve reports it (or the
// thread's registers) and stack memory read over the API. If the caller
// it finds is Delve's next frame, Delve was right. Otherwise it keeps unwinding C frames until it reaches a PC of
// one of Delve's frames, and splices Delve's frames back from there, or
// reaches code .eh_frame does not describe (Go code: runtime.asmcgocall),
// where Delve's own stack switch already continued correctly, and splices
// Delve's frames after the innermost one.

// maxOwnFrames bounds the frames splitdbg unwinds itself.
const maxOwnFrames = 64

// splice describes a stack that splitdbg repaired.
type splice struct {
	pc0 uint64 // the innermost PC
	// own are the frames splitdbg unwound, inserted after frame 0, with
	// their registers.
	own     []api.Stackframe
	ownRegs []regSet
	// resume is the index in Delve's stack of the frame after own.
	resume int
}

// delveIndex maps a frame index of the repaired stack to Delve's; -1 is a
// frame only splitdbg knows.
func (s *splice) delveIndex(i int) int {
	switch {
	case s == nil || i == 0:
		return i
	case i <= len(s.own):
		return -1
	default:
		return i - 1 - len(s.own) + s.resume
	}
}

// Stacktrace implements service.Client: frames in split functions are
// named with the logical function, file and line, a stack that Delve's
// unwinder lost at moved code is unwound through it and spliced, and
// the inlined calls of the frames Delve has no function for are frames
// of their own, as Delve shows them in the code it knows (inline.go).
func (c *Client) Stacktrace(goroutineID int64, depth, skip int, opts api.StacktraceOptions, cfg *api.LoadConfig) ([]api.Stackframe, error) {
	frames, refs, err := c.shownStack(goroutineID, depth, opts)
	if err != nil || len(frames) == 0 {
		return frames, err
	}
	if cfg != nil {
		c.frameVariables(goroutineID, frames, refs, *cfg)
	}
	if skip > 0 {
		if skip >= len(frames) {
			return nil, nil
		}
		frames = frames[skip:]
	}
	return frames, nil
}

// physStack returns Delve's stack of goroutine gid repaired: frames in
// split functions named, and the frames splitdbg unwound through moved
// code spliced in. own[i] reports a frame Delve has no function for (in
// moved code, or unwound by splitdbg), whose inlined calls Delve has not
// shown.
func (c *Client) physStack(goroutineID int64, depth int, opts api.StacktraceOptions) (frames []api.Stackframe, own []bool, err error) {
	frames, err = c.delveStack(goroutineID, depth, opts)
	if err != nil || len(frames) == 0 {
		return frames, nil, err
	}
	own = make([]bool, len(frames))
	topMoved := false
	for i := range frames {
		if frames[i].Err != "" {
			continue // a frame Delve could not read: nothing to name
		}
		if c.fixLocation(&frames[i].Location, i > 0) {
			f, _ := c.frame(frames[i].PC, i > 0)
			own[i] = f.Moved()
			topMoved = topMoved || i == 0 && f.Moved()
		}
	}
	if topMoved && c.maySwitch(goroutineID) {
		if s := c.splice(goroutineID, frames, depth); s != nil {
			frames = s.apply(frames, depth)
			own = s.applyOwn(own, len(frames))
		}
	} else {
		c.noSplice(goroutineID)
	}
	return frames, own, nil
}

// stackKey names a stack Delve gave at this stop.
type stackKey struct {
	gid  int64
	opts api.StacktraceOptions
}

// delveStack is Delve's stack of a goroutine, asked depth frames deep.
type delveStack struct {
	frames []api.Stackframe
	depth  int
}

// delveStack returns Delve's own stack of goroutine gid, depth frames
// deep, asking Delve at most once per stop for each depth beyond those
// asked before: Delve's stack at a depth is the prefix of its stack at
// any greater one (pkg/proc stackIterator stops at depth), and one with
// fewer than depth+1 frames is the whole stack. The frames returned are
// the caller's to change.
func (c *Client) delveStack(gid int64, depth int, opts api.StacktraceOptions) ([]api.Stackframe, error) {
	key := stackKey{gid, opts}
	c.mu.Lock()
	st, ok := c.stop.delve[key]
	gen := c.gen
	c.mu.Unlock()
	if !ok || st.depth < depth && len(st.frames) > st.depth {
		var (
			frames []api.Stackframe
			top    regSet
			err    error
		)
		if sr, ok := c.delve.(stackRegisters); ok {
			var written uint64
			frames, written, err = sr.StacktraceRegisters(gid, depth, opts, top.v[:])
			top.valid = uint32(written)
		} else {
			frames, err = c.delve.Stacktrace(gid, depth, 0, opts, nil)
		}
		if err != nil {
			return nil, err
		}
		st = delveStack{frames: frames, depth: depth}
		c.mu.Lock()
		if c.gen == gen {
			if c.stop.delve == nil {
				c.stop.delve = make(map[stackKey]delveStack)
			}
			c.stop.delve[key] = st
			if len(frames) > 0 && top.complete() == nil && top.pc() == frames[0].PC {
				if c.stop.tops == nil {
					c.stop.tops = make(map[int64]regSet)
				}
				c.stop.tops[gid] = top
			}
		}
		c.mu.Unlock()
	}
	return slices.Clone(st.frames[:min(len(st.frames), depth+1)]), nil
}

// apply inserts the frames splitdbg unwound into Delve's stack, keeping
// at most depth+1 frames as Delve does.
func (s *splice) apply(frames []api.Stackframe, depth int) []api.Stackframe {
	out := make([]api.Stackframe, 0, len(frames)+len(s.own))
	out = append(out, frames[0])
	out = append(out, s.own...)
	if s.resume < len(frames) {
		out = append(out, frames[s.resume:]...)
	}
	if len(out) > depth+1 {
		out = out[:depth+1]
	}
	return out
}

// applyOwn is own after apply: the frames splitdbg unwound are its own;
// n is the length of the repaired stack.
func (s *splice) applyOwn(own []bool, n int) []bool {
	out := make([]bool, 0, n)
	out = append(out, own[0])
	for range s.own {
		out = append(out, true)
	}
	if s.resume < len(own) {
		out = append(out, own[s.resume:]...)
	}
	return out[:min(len(out), n)]
}

// splice returns the repair of a stack whose innermost frame is in moved
// code, nil when Delve's stack is right or cannot be checked. Results are
// cached until the target runs.
func (c *Client) splice(gid int64, frames []api.Stackframe, depth int) *splice {
	c.mu.Lock()
	if s, ok := c.stop.stacks[gid]; ok && (s == nil || s.pc0 == frames[0].PC) {
		c.mu.Unlock()
		return s
	}
	c.mu.Unlock()
	if len(frames) > depth && depth < maxOwnFrames {
		// Delve cut the stack at depth: compare with more of its frames.
		full, err := c.delveStack(gid, maxOwnFrames, 0)
		if err != nil || len(full) == 0 || full[0].PC != frames[0].PC {
			return nil
		}
		frames = full
	}
	s, err := c.unwindMoved(gid, frames)
	if err != nil {
		s = nil
	}
	c.mu.Lock()
	if c.stop.stacks == nil {
		c.stop.stacks = make(map[int64]*splice)
	}
	c.stop.stacks[gid] = s
	c.mu.Unlock()
	return s
}

// maySwitch reports whether Delve's unwinder may have switched stacks at
// a nameless innermost frame: only when the thread runs a goroutine
// (amd64SwitchStack needs one). In a program without Go code Delve
// unwinds moved code with its FDE, as splitdbg would.
func (c *Client) maySwitch(gid int64) bool {
	if gid > 0 {
		return true
	}
	st, err := c.stopState()
	if err != nil {
		return true
	}
	if st.SelectedGoroutine != nil && st.SelectedGoroutine.ID > 0 {
		return true
	}
	return st.CurrentThread != nil && st.CurrentThread.GoroutineID > 0
}

// noSplice records that goroutine gid's stack needs no repair at this
// stop.
func (c *Client) noSplice(gid int64) {
	c.mu.Lock()
	if c.stop.stacks == nil {
		c.stop.stacks = make(map[int64]*splice)
	}
	c.stop.stacks[gid] = nil
	c.mu.Unlock()
}

// unwindMoved unwinds through the moved fragment of frame 0, as
// described at the top of this file. It first needs no registers: for a
// frame on the system stack Delve's FrameOffset is the frame's CFA
// (absolute; a goroutine-stack offset is negative), computed from the
// thread's registers with the fragment's own FDE before Delve switched
// stacks, and C frames above it mostly define their CFA from the stack
// pointer. Only if a CFA rule needs a register the unwind lacks does it
// read the thread's registers (a slow call in Delve) and start again.
func (c *Client) unwindMoved(gid int64, frames []api.Stackframe) (*splice, error) {
	mem := memory{read: func(addr uint64, n int) ([]byte, error) {
		b, _, err := c.delve.ExamineMemory(addr, n)
		return b, err
	}}
	if cfa := frames[0].FrameOffset; cfa > 0 {
		var regs regSet
		regs.set(regRIP, frames[0].PC)
		s, err := c.unwindFrom(&regs, uint64(cfa), frames, &mem)
		if !errors.Is(err, errUnknownReg) {
			return s, err
		}
	}
	regs, err := c.topRegisters(gid)
	if err != nil {
		return nil, err
	}
	if regs.pc() != frames[0].PC {
		return nil, fmt.Errorf("adapter: thread PC %#x is not frame 0's %#x", regs.pc(), frames[0].PC)
	}
	return c.unwindFrom(&regs, 0, frames, &mem)
}

// unwindFrom unwinds from frame 0's registers (and its CFA, if known)
// and splices Delve's frames back.
func (c *Client) unwindFrom(regs *regSet, cfa0 uint64, frames []api.Stackframe, mem *memory) (*splice, error) {
	u := unwinder{res: c.res, mem: mem}
	sp := cfa0
	if v, ok := regs.get(regRSP); ok {
		sp = v
	}
	u.mem.prefetch(sp)
	cur, _, err := u.step(regs, true, cfa0)
	if err != nil {
		return nil, err
	}
	if len(frames) > 1 && cur.pc() == frames[1].PC {
		return nil, nil // Delve unwound the moved frame right
	}
	s := &splice{pc0: frames[0].PC, resume: 1}
	for range maxOwnFrames {
		if j := indexPC(frames[1:], cur.pc()); j >= 0 {
			s.resume = 1 + j
			return s, nil
		}
		fr := c.ownFrame(&cur)
		next, cfa, err := u.step(&cur, false, 0)
		if errors.Is(err, errUnknownReg) {
			return nil, err
		}
		fr.FrameOffset = int64(cfa) // 0 when the frame cannot be unwound
		s.own = append(s.own, fr)
		s.ownRegs = append(s.ownRegs, cur)
		if err != nil {
			// Code .eh_frame does not describe (the Go runtime's
			// asmcgocall) or cannot be unwound: Delve's frames after its
			// stack switch continue from here.
			return s, nil
		}
		if next.pc() == 0 {
			s.own[len(s.own)-1].Bottom = true
			s.resume = len(frames)
			return s, nil
		}
		cur = next
	}
	return s, nil
}

// ownFrame describes a frame splitdbg unwound: named from the resolver
// as Delve would name it, "???" at "?:-1" when no image knows the PC.
func (c *Client) ownFrame(r *regSet) api.Stackframe {
	fr := api.Stackframe{Location: api.Location{PC: r.pc(), File: "?", Line: -1}}
	if f, ok := c.frame(r.pc(), true); ok {
		fr.Function = logicalFunction(&f)
		if f.Line > 0 {
			fr.File, fr.Line = f.File, f.Line
		}
	}
	if bp, ok := r.get(regRBP); ok {
		fr.FramePointerOffset = int64(bp)
	}
	return fr
}

// indexPC returns the index of the first frame at pc, or -1.
func indexPC(frames []api.Stackframe, pc uint64) int {
	for i := range frames {
		if frames[i].PC == pc {
			return i
		}
	}
	return -1
}

// topRegisters returns the registers of the thread running goroutine gid
// (-1: the selected goroutine or current thread). Delve's scope registers
// for frame 0 are not used: its stack switch rewrites their stack pointer.
// They are read once per stop (ListThreadRegisters is one of Delve's
// slowest calls; the unwind and frame 0's variables both need them).
func (c *Client) topRegisters(gid int64) (regSet, error) {
	c.mu.Lock()
	regs, ok := c.stop.tops[gid]
	c.mu.Unlock()
	if ok {
		return regs, nil
	}
	regs, err := c.readTopRegisters(gid)
	if err == nil {
		c.mu.Lock()
		if c.stop.tops == nil {
			c.stop.tops = make(map[int64]regSet)
		}
		c.stop.tops[gid] = regs
		c.mu.Unlock()
	}
	return regs, err
}

func (c *Client) readTopRegisters(gid int64) (regSet, error) {
	st, err := c.stopState()
	if err != nil {
		return regSet{}, err
	}
	tid := -1
	switch {
	case gid < 0 || st.SelectedGoroutine != nil && st.SelectedGoroutine.ID == gid:
		if st.CurrentThread != nil {
			tid = st.CurrentThread.ID
		}
	default:
		for _, th := range st.Threads {
			if th.GoroutineID == gid {
				tid = th.ID
			}
		}
	}
	if tid < 0 {
		return regSet{}, errors.New("adapter: goroutine runs on no thread")
	}
	if rv, ok := c.delve.(registerValues); ok {
		var r regSet
		written, err := rv.ThreadRegisterValues(tid, r.v[:])
		if err != nil {
			return regSet{}, fmt.Errorf("adapter: registers of thread %d: %w", tid, err)
		}
		r.valid = uint32(written)
		return r, r.complete()
	}
	rs, err := c.delve.ListThreadRegisters(tid, false)
	if err != nil {
		return regSet{}, fmt.Errorf("adapter: registers of thread %d: %w", tid, err)
	}
	return parseRegisters(rs)
}

// stackRegisters is a Delve client that gives with a stack the
// registers its frame 0 was unwound from, when they are the thread's
// (adapter/session/inproc's): the thread's registers at a stop without
// a second call for them.
type stackRegisters interface {
	StacktraceRegisters(goroutineID int64, depth int, opts api.StacktraceOptions, dst []uint64) ([]api.Stackframe, uint64, error)
}

// registerValues is a Delve client that gives a thread's registers as
// numbers (adapter/session/inproc's): ListThreadRegisters without
// Delve's formatting of every register as text, a third of the first
// request for a moved frame's variables.
type registerValues interface {
	ThreadRegisterValues(threadID int, dst []uint64) (written uint64, err error)
}

// stopState returns the state of the current stop, asking Delve when the
// client has not seen it.
func (c *Client) stopState() (*api.DebuggerState, error) {
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := c.delve.GetState()
	if err != nil {
		return nil, err
	}
	return c.fixState(st), nil
}

// Delve's unwinder gives a caller frame only the registers its callee's
// CFI row has a rule for (pkg/proc advanceRegsDWARF): a register the
// callee has not saved yet, or never saves, is missing in the caller —
// at a callee's first instruction every callee-saved register is — and
// Delve reads a variable there as "register not available", or as 0.
// gdb, by the DWARF rule that a register without a rule keeps its value
// (DWARF 5 section 6.4.1, "same value"; gdb's dwarf2_frame_default_init),
// reads it right. The Client unwinds every register of every C frame
// itself, from the thread's registers through each inner frame's CFI.

// regChain holds the registers of the frames of one goroutine's stack at
// a stop, as splitdbg unwound them: regs[i] are frame i's, from frame 0
// up to the frame asked for, unwound as far as asked; done when the
// unwind can go no further (a frame that is not C code with .eh_frame
// CFI, or one the unwind does not find). frames is the (repaired) stack,
// as deep as the unwind went.
type regChain struct {
	mu      sync.Mutex
	started bool
	done    bool
	frames  []api.Stackframe
	u       unwinder
	regs    []regSet
}

// unwoundRegisters returns the registers of frame i of goroutine gid's
// (repaired) stack as splitdbg unwinds them, and false when the unwind
// does not reach the frame: Go code, code without CFI, or an unwind that
// disagrees with the stack's PCs.
func (c *Client) unwoundRegisters(gid int64, i int) (regSet, bool) {
	c.mu.Lock()
	if c.stop.chains == nil {
		c.stop.chains = make(map[int64]*regChain)
	}
	ch, ok := c.stop.chains[gid]
	if !ok {
		ch = &regChain{}
		c.stop.chains[gid] = ch
	}
	c.mu.Unlock()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if !ch.started {
		ch.started = true
		c.startChain(ch, gid, i)
	}
	for !ch.done && len(ch.regs) <= i {
		c.extendChain(ch, gid, i)
	}
	if i < 0 || i >= len(ch.regs) {
		return regSet{}, false
	}
	return ch.regs[i], true
}

// startChain begins the unwind of goroutine gid's stack at its thread's
// registers, when frame 0 is C code, with the stack depth frames deep.
func (c *Client) startChain(ch *regChain, gid int64, depth int) {
	ch.done = true
	frames, _, err := c.physStack(gid, depth, 0)
	if err != nil || len(frames) == 0 || !c.cFrame(frames, 0) {
		return
	}
	regs, err := c.topRegisters(gid)
	if err != nil || regs.pc() != frames[0].PC {
		return
	}
	ch.frames, ch.regs, ch.done = frames, []regSet{regs}, false
	ch.u = unwinder{res: c.res, mem: c.stopMemory()}
	ch.u.mem.prefetch(regs.v[regRSP])
}

// extendChain unwinds one frame more, if it is C code and the unwind
// finds its PC, taking the stack of goroutine gid depth frames deep if
// the chain's is shorter.
func (c *Client) extendChain(ch *regChain, gid int64, depth int) {
	i := len(ch.regs)
	if i >= len(ch.frames) {
		frames, _, err := c.physStack(gid, max(depth, i), 0)
		if err == nil && len(frames) > i && frames[0].PC == ch.frames[0].PC {
			ch.frames = frames
		}
	}
	if i >= len(ch.frames) || !c.cFrame(ch.frames, i) {
		ch.done = true // Go code: Delve unwinds it and reads its variables
		return
	}
	next, _, err := ch.u.step(&ch.regs[i-1], i == 1, 0)
	if err != nil || next.pc() != ch.frames[i].PC {
		ch.done = true
		return
	}
	ch.regs = append(ch.regs, next)
}

// cFrame reports whether frame i of frames runs C code.
func (c *Client) cFrame(frames []api.Stackframe, i int) bool {
	f, ok := c.frame(frames[i].PC, i > 0)
	return ok && strings.HasPrefix(f.Function, "C.")
}
