package splitinfo

import (
	"cmp"
	"debug/elf"
	"slices"

	"golang.org/x/arch/x86/x86asm"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// branchScanner reports the direct branches (jumps, conditional jumps,
// calls) in the code of one fragment.
type branchScanner func(start, end uint64, yield func(site, target uint64))

// branchDecoder returns the scanner for f's machine, or nil when the
// machine's code is not decoded (only x86 is).
func branchDecoder(f *elfx.File) branchScanner {
	var mode int
	switch f.Machine {
	case elf.EM_X86_64:
		mode = 64
	case elf.EM_386:
		mode = 32
	default:
		return nil
	}
	return func(start, end uint64, yield func(site, target uint64)) {
		code, err := f.ReadVA(start, end-start)
		if err != nil {
			return
		}
		scanX86(code, start, mode, yield)
	}
}

// scanX86 decodes code linearly from its start; undecodable bytes are
// skipped one at a time.
func scanX86(code []byte, pc uint64, mode int, yield func(site, target uint64)) {
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], mode)
		if err != nil || inst.Len == 0 {
			off++
			continue
		}
		if rel, ok := inst.Args[0].(x86asm.Rel); ok {
			site := pc + uint64(off)
			yield(site, site+uint64(inst.Len)+uint64(int64(rel)))
		}
		off += inst.Len
	}
}

// orderLogically finds the branch sites of every moved fragment of p and
// puts the fragments in logical order: the entry fragment first, then
// each moved fragment where the flow first reaches it, walking the code
// from the entry (a depth-first walk, so code reached from moved code
// follows it), then fragments no branch reaches, in address order.
func orderLogically(p *Proc, scan branchScanner) {
	type edge struct {
		site     uint64
		from, to int
	}
	var edges []edge
	for i := range p.Fragments {
		f := &p.Fragments[i]
		f.BranchSites, f.BranchAddr = nil, 0
		scan(f.Start, f.End, func(site, target uint64) {
			j := p.Fragment(target)
			if j > 0 && j != i {
				edges = append(edges, edge{site, i, j})
			}
		})
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.site, b.site) })
	for _, e := range edges {
		f := &p.Fragments[e.to]
		if n := len(f.BranchSites); n == 0 || f.BranchSites[n-1] != e.site {
			f.BranchSites = append(f.BranchSites, e.site)
		}
	}
	placed := make([]bool, len(p.Fragments))
	order := make([]int, 0, len(p.Fragments))
	var visit func(i int)
	visit = func(i int) {
		placed[i] = true
		order = append(order, i)
		for _, e := range edges {
			if e.from == i && !placed[e.to] {
				p.Fragments[e.to].BranchAddr = e.site
				visit(e.to)
			}
		}
	}
	visit(0)
	for i := range p.Fragments {
		if !placed[i] {
			visit(i)
		}
	}
	frags := make([]Fragment, len(order))
	for k, i := range order {
		frags[k] = p.Fragments[i]
	}
	p.Fragments = frags
}
