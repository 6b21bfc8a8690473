package adapter

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"

	"github.com/splitdbg/splitdbg/splitinfo"
)

// Client is a Delve client for programs with split functions. It
// implements service.Client over another service.Client — Delve's rpc2
// client to a Delve elsewhere, or one calling Delve in this process —
// and overrides only
// the calls whose answers involve moved code; every other call, and every
// answer that touches no moved fragment, is Delve's own.
type Client struct {
	delve
	res *Resolver

	mu sync.Mutex
	// gen counts the times the target may have run; caches keyed by it
	// are valid while the target stays stopped.
	gen uint64
	// libsGen is gen+1 at the last refresh of the library list.
	libsGen uint64
	// state is the last debugger state Delve reported.
	state *api.DebuggerState
	// stop is what the client learned of the stopped target at this
	// stop.
	stop stopCache
	// armed holds the breakpoints with addresses in moved code, by ID.
	armed map[int]*armed
	// lines holds, by breakpoint ID, the line a breakpoint with addresses
	// in moved code was set on.
	lines map[int]linePlace
	// conds holds, by breakpoint ID, the conditions of breakpoints in
	// moved code, which the client evaluates (conditions.go).
	conds map[int]*condition
}

// stopCache is what the client learned of the stopped target at one
// stop; it is dropped when the target may have run.
type stopCache struct {
	// delve holds Delve's own stacks (Stacktrace without variables), by
	// goroutine and options, as deep as asked at this stop.
	delve map[stackKey]delveStack
	// stacks holds, by goroutine, the repair of its stack at this stop
	// (nil: it needs none).
	stacks map[int64]*splice
	// chains holds, by goroutine, the registers of its frames as
	// splitdbg unwound them at this stop.
	chains map[int64]*regChain
	// shown holds, by goroutine, where the frames of its stack as shown
	// at this stop come from, as far as a stack was asked for (inline.go).
	shown map[int64][]shownFrame
	// tops holds, by goroutine, the registers of the thread running it at
	// this stop.
	tops map[int64]regSet
	// mem is the target's memory as read at this stop (stopMemory).
	mem *memory
	// frames holds, by scope, the frames package locals read variables in
	// at this stop, with the memory they read.
	frames map[api.EvalScope]*scopeFrame
}

var _ service.Client = (*Client)(nil)

// delve is the client the Client wraps; an alias so that embedding it
// promotes Delve's calls without exporting the field.
type delve = service.Client

// New returns a Client over Delve's client dc for the process Delve
// debugs, whose executable is at exe. It asks Delve for the executable's
// load bias.
func New(dc service.Client, exe string) (*Client, error) {
	res, err := NewResolver(exe)
	if err != nil {
		return nil, err
	}
	c := &Client{delve: dc, res: res}
	if err := c.refreshBias(); err != nil {
		res.Close()
		return nil, err
	}
	return c, nil
}

// Plain returns the Delve client the Client wraps, whose answers are
// Delve's own.
func (c *Client) Plain() service.Client { return c.delve }

// Resolver returns the client's resolver.
func (c *Client) Resolver() *Resolver { return c.res }

// Close releases the resolver's files; the connection stays open.
func (c *Client) Close() error { return c.res.Close() }

// Detach detaches Delve, optionally killing the process, and closes the
// resolver.
func (c *Client) Detach(killProcess bool) error {
	err := c.delve.Detach(killProcess)
	return errors.Join(err, c.res.Close())
}

// Invalidate drops what the client remembers of the stopped target (stop
// state, repaired stacks, library list): call it when another connection
// to the same Delve may have run the target, as the proxy does.
func (c *Client) Invalidate() { c.moved() }

// moved records that the target may have run: cached stacks and the
// library list are stale.
func (c *Client) moved() {
	c.mu.Lock()
	c.gen++
	c.stop = stopCache{}
	c.state = nil
	c.mu.Unlock()
}

// refreshBias asks Delve where the executable is loaded and sets the
// resolver's bias.
func (c *Client) refreshBias() error {
	bias, err := c.executableBias()
	if err != nil {
		return err
	}
	c.res.SetExecutableBias(bias)
	return nil
}

// executableBias finds the executable's load bias. Delve's image list
// (ListDynamicLibraries) leaves out the executable. In a local process
// its mappings say where the file's first page is (mappedBias), which
// needs none of the executable's tables: a debugger's start-up builds
// none. Otherwise the bias is read off a function Delve resolves:
// api.Function.Value is the function's DWARF low PC plus the
// executable's static base. Either answer is checked by reading the ELF
// header where the bias puts it.
func (c *Client) executableBias() (uint64, error) {
	f := c.res.exe.f
	if f.Type == elf.ET_EXEC {
		return 0, nil // not relocatable
	}
	hdr, ok := headerVaddr(f.File)
	if !ok {
		return 0, fmt.Errorf("adapter: %s: no PT_LOAD segment maps the ELF header", c.res.exe.path)
	}
	if bias, ok := mappedBias(c.delve.ProcessPid(), c.res.exe.path, hdr); ok && c.elfHeaderAt(hdr+bias) {
		return bias, nil
	}
	t, err := c.res.exe.load()
	if err != nil {
		return 0, err
	}
	var tried []string
	for _, p := range biasCandidates(t.procs, 4) {
		name := delveName(p)
		tried = append(tried, name)
		locs, _, err := c.delve.FindLocation(api.EvalScope{GoroutineID: -1}, name, false, nil)
		if err != nil || len(locs) != 1 || locs[0].Function == nil {
			continue
		}
		// Delve's entry is the start of the first DWARF range: the entry
		// fragment for GCC, clang 22 and BOLT, another fragment for
		// clang 19. Only the right one puts the ELF header in place.
		for _, f := range p.Fragments {
			v := locs[0].Function.Value
			if v < f.Start || (v-f.Start)%0x1000 != 0 {
				continue
			}
			if bias := v - f.Start; c.elfHeaderAt(hdr + bias) {
				return bias, nil
			}
		}
	}
	return 0, fmt.Errorf("adapter: %s: no load bias found from its mappings or Delve's functions %v", c.res.exe.path, tried)
}

// elfHeaderAt reports whether the process holds an ELF header at addr.
func (c *Client) elfHeaderAt(addr uint64) bool {
	mem, _, err := c.delve.ExamineMemory(addr, 4)
	return err == nil && bytes.Equal(mem, []byte(elf.ELFMAG))
}

// mappedBias reads the load bias of the executable at path from
// /proc/PID/maps: the start of its mapping at file offset 0, less hdr,
// the link-time address of that page. It fails for a process that is
// not local.
func mappedBias(pid int, path string, hdr uint64) (uint64, bool) {
	if pid <= 0 {
		return 0, false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, false
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		want = path
	}
	for line := range strings.Lines(string(data)) {
		// start-end perms offset dev inode path
		f := strings.Fields(line)
		if len(f) < 6 || f[2] != "00000000" {
			continue
		}
		if got, err := filepath.EvalSymlinks(f[5]); err != nil || got != want {
			continue
		}
		lo, _, _ := strings.Cut(f[0], "-")
		start, err := strconv.ParseUint(lo, 16, 64)
		if err != nil || start < hdr&^0xfff {
			continue
		}
		return start - hdr&^0xfff, true
	}
	return 0, false
}

// headerVaddr returns the link-time address of the ELF header: the
// PT_LOAD segment at file offset 0.
func headerVaddr(f *elf.File) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off == 0 {
			return p.Vaddr, true
		}
	}
	return 0, false
}

// biasCandidates returns up to n procedures Delve can find by name:
// described by DWARF and of a unique name; unsplit ones and main first.
func biasCandidates(t *splitinfo.Table, n int) []*splitinfo.Proc {
	ok := func(p *splitinfo.Proc) bool {
		return p.Sources&splitinfo.FromDWARF != 0 && len(t.ByName(p.Name)) == 1
	}
	var out []*splitinfo.Proc
	for _, pass := range []func(*splitinfo.Proc) bool{
		func(p *splitinfo.Proc) bool { return p.Name == "main" || p.Name == "main.main" },
		func(p *splitinfo.Proc) bool { return !p.Split() && !p.Local },
		func(p *splitinfo.Proc) bool { return true },
	} {
		for p := range t.All() {
			if len(out) >= n {
				return out
			}
			if ok(p) && pass(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// frame returns the logical frame of the runtime address pc, refreshing
// the library list once per stop when pc lies in no known image.
func (c *Client) frame(pc uint64, call bool) (Frame, bool) {
	at := pc
	if call && at > 0 {
		at--
	}
	if !c.res.Known(at) {
		c.refreshLibraries()
	}
	return c.res.Frame(pc, call)
}

// refreshLibraries reloads Delve's image list, at most once per stop.
func (c *Client) refreshLibraries() {
	c.mu.Lock()
	if c.libsGen == c.gen+1 {
		c.mu.Unlock()
		return
	}
	c.libsGen = c.gen + 1
	c.mu.Unlock()
	if imgs, _, err := c.delve.ListDynamicLibraries(); err == nil {
		c.res.SetLibraries(imgs)
	}
}
