// Command cgoprog is a cgo test program for splitdbg: Go code calling C
// functions (split.c) that GCC splits into hot and ".cold" fragments.
//
// Usage:
//
//	cgo        hot path only
//	cgo cold   the C code takes its cold branches (see COLD-LINE in split.c)
package main

// #include "split.h"
import "C"

import (
	"fmt"
	"os"
)

func main() {
	cold := len(os.Args) > 1 && os.Args[1] == "cold"
	coldArg := C.int(0)
	x := C.int(7)
	if cold {
		coldArg = 1
		x = -7 // goes through the cold branch of c_classify
	}
	acc := C.c_accumulate(100, coldArg)
	cls := C.c_classify(x)
	fmt.Printf("accumulate=%d classify=%d\n", int64(acc), int(cls))
}
