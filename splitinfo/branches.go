package splitinfo

import (
	"cmp"
	"slices"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/x86scan"
)

// branchScanner reports the control transfers in the code of one
// fragment: direct jumps, conditional jumps and calls, and the targets of
// jump tables that stay inside the procedure (inProc).
type branchScanner func(r Range, inProc func(uint64) bool, yield func(site, target uint64))

// branchDecoder returns the scanner for f's machine, or nil when the
// machine's code is not decoded (only x86 is).
func branchDecoder(f *elfx.File) branchScanner {
	mode := x86scan.ModeOf(f.Machine)
	if mode == 0 {
		return nil
	}
	return func(r Range, inProc func(uint64) bool, yield func(site, target uint64)) {
		code, err := f.ReadVA(r.Start, r.Len())
		if err != nil {
			return
		}
		scanX86(code, r.Start, mode, func(site uint64, t jumpTable) {
			readJumpTable(f, t, inProc, func(target uint64) { yield(site, target) })
		}, yield)
	}
}

// jumpTable is a table of jump targets found by its dispatch sequence:
// 8-byte absolute entries (jmp *table(,%reg,8), non-PIC), or 4-byte
// entries relative to the table start (lea table(%rip); movslq; add; jmp
// *%reg, PIC).
type jumpTable struct {
	addr     uint64
	relative bool
}

// maxJumpTable bounds the entries read from one jump table.
const maxJumpTable = 4096

// readJumpTable yields the targets of t's entries while they fall inside
// the procedure: the table's length is not recorded, so the first entry
// that leaves the procedure ends it.
func readJumpTable(f *elfx.File, t jumpTable, inProc func(uint64) bool, yield func(target uint64)) {
	size := uint64(8)
	if t.relative {
		size = 4
	}
	for i := uint64(0); i < maxJumpTable; i++ {
		b, err := f.ReadVA(t.addr+i*size, size)
		if err != nil {
			return
		}
		var target uint64
		if t.relative {
			target = t.addr + uint64(int64(int32(f.ByteOrder.Uint32(b))))
		} else {
			target = f.ByteOrder.Uint64(b)
		}
		if !inProc(target) {
			return
		}
		yield(target)
	}
}

// scanX86 decodes code linearly from its start; undecodable bytes are
// skipped one at a time. Direct branches go to yield, indirect jumps
// through a recognizable jump table to table.
func scanX86(code []byte, pc uint64, mode int, table func(site uint64, t jumpTable), yield func(site, target uint64)) {
	var lea jumpTable // the last RIP-relative lea: a PIC jump table base
	leaAge := 0
	for off := 0; off < len(code); {
		site := pc + uint64(off)
		in := x86scan.Decode(code[off:], site, mode)
		off += in.Len
		if in.Kind == x86scan.Invalid {
			continue
		}
		leaAge++
		switch in.Kind {
		case x86scan.Jump, x86scan.CondJump, x86scan.Call:
			yield(site, in.Target)
		case x86scan.LEA:
			lea, leaAge = jumpTable{addr: in.Target, relative: true}, 0
		case x86scan.JumpReg:
			if leaAge <= 8 && lea.addr != 0 {
				table(site, lea)
			}
		case x86scan.JumpTable:
			if mode == 64 {
				table(site, jumpTable{addr: in.Target})
			}
		}
	}
}

// orderLogically finds the branch sites of every moved fragment of p and
// puts the fragments in logical order: the entry fragment first, then
// each moved fragment where the flow first reaches it, walking the code
// from the entry (a depth-first walk, so code reached from moved code
// follows it), then fragments no branch reaches, in address order.
func orderLogically(p *Proc, scan branchScanner) {
	type edge struct {
		site         uint64
		from, to     int
		fallsThrough bool // to starts where from ends
	}
	// Fragments by address, for finding branch targets.
	byAddr := make([]int, len(p.Fragments))
	for i := range byAddr {
		byAddr[i] = i
	}
	slices.SortFunc(byAddr, func(a, b int) int { return cmp.Compare(p.Fragments[a].Start, p.Fragments[b].Start) })
	fragment := func(addr uint64) int {
		k, _ := slices.BinarySearchFunc(byAddr, addr, func(i int, a uint64) int {
			if p.Fragments[i].End <= a {
				return -1
			}
			if p.Fragments[i].Start > a {
				return 1
			}
			return 0
		})
		if k < len(byAddr) && p.Fragments[byAddr[k]].Contains(addr) {
			return byAddr[k]
		}
		return -1
	}
	inProc := func(addr uint64) bool { return fragment(addr) >= 0 }
	var edges []edge
	for i := range p.Fragments {
		f := &p.Fragments[i]
		f.BranchSites, f.BranchAddr = nil, 0
		scan(f.Range, inProc, func(site, target uint64) {
			if j := fragment(target); j > 0 && j != i {
				edges = append(edges, edge{site: site, from: i, to: j})
			}
		})
		// Code that runs off the end of a fragment continues in the
		// fragment that starts there (clang's basic-block sections lay
		// some parts out adjacent): an edge for the logical order, not a
		// branch site.
		if j := fragment(f.End); j > 0 && j != i {
			edges = append(edges, edge{site: f.End, from: i, to: j, fallsThrough: true})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.site, b.site), cmp.Compare(a.to, b.to))
	})
	edges = slices.CompactFunc(edges, func(a, b edge) bool { return a == b })
	for _, e := range edges {
		if e.fallsThrough {
			continue
		}
		f := &p.Fragments[e.to]
		f.BranchSites = append(f.BranchSites, e.site)
	}
	for i := range p.Fragments {
		f := &p.Fragments[i]
		slices.Sort(f.BranchSites)
		f.BranchSites = slices.Compact(f.BranchSites)
	}
	// out[i] is the edges leaving fragment i, in site order.
	out := make([][]edge, len(p.Fragments))
	for k := 0; k < len(edges); {
		j := k
		for j < len(edges) && edges[j].from == edges[k].from {
			j++
		}
		out[edges[k].from] = edges[k:j]
		k = j
	}
	placed := make([]bool, len(p.Fragments))
	order := make([]int, 0, len(p.Fragments))
	var visit func(i int)
	visit = func(i int) {
		placed[i] = true
		order = append(order, i)
		for _, e := range out[i] {
			if !placed[e.to] {
				if !e.fallsThrough {
					p.Fragments[e.to].BranchAddr = e.site
				}
				visit(e.to)
			}
		}
	}
	visit(0)
	for _, i := range byAddr {
		if !placed[i] {
			visit(i)
		}
	}
	permute(p.Fragments, func(k int) int { return order[k] })
}
