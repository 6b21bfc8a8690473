package native_test

import (
	"fmt"

	"github.com/splitdbg/splitdbg/splitinfo/native"
)

// The worked example of docs/FORMAT.md: process of testdata/bin/gcc-cold,
// entry 0x12f0, with process.cold at 0x1079 reached from 0x131a.
func ExampleAppend() {
	data, _ := native.Append(nil, []native.Record{{
		Entry: 0x12f0, EntrySize: 0x79, Name: "process",
		Moved: []native.Split{{BranchAddr: 0x131a, VAddr: 0x1079, Size: 0x15, Kind: native.Cold,
			Symbol: "process.cold", Sites: []uint64{0x131a}}},
	}})
	fmt.Printf("% x\n", data)
	// Output:
	// 53 50 52 01 2b 00 00 00 15 70 72 6f 63 65 73 73 00 70 72 6f 63 65 73 73 2e 63 6f 6c 64 00 01 01 11 f0 25 79 01 00 00 00 00 01 05 89 7b 15 2a 09 01 2a 00
}
