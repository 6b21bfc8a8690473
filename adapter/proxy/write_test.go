package proxy

import (
	"fmt"
	"testing"
)

// TestWriteInMovedFrame runs set and watch in Delve's terminal ("dlv
// connect") through the proxy, stopped at withdraw's cold line (in
// withdraw.cold, moved code): set it.qty writes stock[1] (it is
// &stock[1]), and the watchpoint on backorder stops in withdraw where
// the cold path writes it (backorder += shortfall, the first shortfall
// 3), as the adapter's TestWriteInMovedFrame checks over the Client.
func TestWriteInMovedFrame(t *testing.T) {
	for _, bin := range []string{"gcc-inv", "clang22-inv"} {
		t.Run(bin, func(t *testing.T) {
			file, line := coldLine(t, "inv/inv.c", "withdraw")
			up := startDelve(t, bin, "cold")
			_, addr := startProxy(t, up)
			c := dialRPC(t, addr)
			defer c.Disconnect(false)
			out := runTerminal(t, "proxy", c, fmt.Sprintf("break %s:%d", file, line), "continue",
				"set it.qty = 7", "print stock[1].qty", "watch -w backorder", "clear 1", "continue", "print backorder")
			match(t, "continue", out[1], fmt.Sprintf(`^> \[Breakpoint 1\] C\.withdraw\(\) \S*%s:%d `, file, line))
			match(t, "set it.qty = 7", out[2], `^$`)
			match(t, "print stock[1].qty", out[3], `^7\n$`)
			match(t, "watch -w backorder", out[4], `^Watchpoint .* on \[backorder\] set at 0x[0-9a-f]+\n$`)
			match(t, "continue", out[6], `^> watchpoint on \[.*\] C\.withdraw\(\) `)
			match(t, "print backorder", out[7], `^3\n$`)
		})
	}
}
