package esl

import (
	"fmt"
	"strings"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// shapes describes how a program spends its bytes, one string per row:
// "d1", "d2", "escN" (an escape with a pc nibble of N), commands with the
// byte counts of their LEB128 operands and |R, |M for the resume and mark
// bits. It stops at the first malformed byte.
func shapes(code []byte) []string {
	var out, cur []string
	mode, cmd := 1, false
	for pos := 0; pos < len(code); {
		b := code[pos]
		if !cmd {
			if b>>4 == 8 {
				cur = append(cur, fmt.Sprintf("esc%d", b&15))
				cmd = true
				pos++
				continue
			}
			cur = append(cur, fmt.Sprintf("d%d", mode))
			pos += mode
			out = append(out, strings.Join(cur, " "))
			cur = nil
			continue
		}
		op := Command(b & 63)
		pos++
		s := op.String()
		var operands int
		switch op {
		case CmdAddPC, CmdAddLine, CmdSetCol, CmdSetFile, CmdSetDataMode, CmdSetDiscrim:
			operands = 1
		case CmdAddPCLine:
			operands = 2
		case CmdAddPCLineCol:
			operands = 3
		}
		for range operands {
			v, n := cursor.DecodeULEB128(code[min(pos, len(code)):])
			if n <= 0 {
				return append(out, strings.Join(append(cur, s+"?"), " "))
			}
			if op == CmdSetDataMode {
				mode = int(v)
			} else {
				s += fmt.Sprint(n)
			}
			pos += n
		}
		if b&Resume != 0 {
			s += "|R"
			cmd = false
		}
		if b&Mark != 0 {
			s += "|M"
		}
		cur = append(cur, s)
		if b&Mark != 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	return out
}
