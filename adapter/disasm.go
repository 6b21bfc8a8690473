package adapter

import (
	"fmt"

	"github.com/go-delve/delve/service/api"
)

// DisassemblePC implements service.Client. For a PC in a split function it
// disassembles every fragment of the logical function in logical order
// (Delve disassembles only the function's first DWARF range, and refuses
// a PC in moved code: "does not belong to any function").
func (c *Client) DisassemblePC(scope api.EvalScope, pc uint64, flavour api.AssemblyFlavour) (api.AsmInstructions, error) {
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, err
	}
	f, ok := c.frame(pc, false)
	if !ok || !f.Split() {
		return c.delve.DisassemblePC(ds, pc, flavour)
	}
	var out api.AsmInstructions
	for _, r := range c.res.Ranges(pc) {
		ins, err := c.delve.DisassembleRange(ds, r.Start, r.End, flavour)
		if err != nil {
			return nil, fmt.Errorf("adapter: disassemble %s [%#x,%#x): %w", f.Function, r.Start, r.End, err)
		}
		out = append(out, ins...)
	}
	return c.fixInstructions(out), nil
}

// DisassembleRange implements service.Client: Delve's disassembly, with
// instructions and branch targets in split functions named.
func (c *Client) DisassembleRange(scope api.EvalScope, startPC, endPC uint64, flavour api.AssemblyFlavour) (api.AsmInstructions, error) {
	ds, err := c.delveScope(scope)
	if err != nil {
		return nil, err
	}
	ins, err := c.delve.DisassembleRange(ds, startPC, endPC, flavour)
	return c.fixInstructions(ins), err
}

// fixInstructions names the locations and destinations of instructions
// in split functions that Delve left nameless.
func (c *Client) fixInstructions(ins api.AsmInstructions) api.AsmInstructions {
	for i := range ins {
		c.fixLocation(&ins[i].Loc, false)
		c.fixLocation(ins[i].DestLoc, false)
	}
	return ins
}
