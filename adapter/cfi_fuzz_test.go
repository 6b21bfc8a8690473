package adapter

import (
	"encoding/binary"
	"testing"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// FuzzCFI feeds .eh_frame contents to the adapter's loading of call frame
// information and to the evaluation of each entry's rules at its start
// and middle (cfiRowAt), which the unwinder runs at every frame: damaged
// entries are an error, never a panic.
func FuzzCFI(f *testing.F) {
	for _, name := range []string{"gcc-cold", "clang22-mfs", "bolt22", "cgo"} {
		ef, err := elfx.Open(testbin.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		data, _, err := ef.SectionData(".eh_frame")
		if err == nil && len(data) > 0 {
			f.Add(append([]byte(nil), data[:min(len(data), 4096)]...))
		}
		ef.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fdes, err := parseCFI(data, binary.LittleEndian, 0x1000)
		if err != nil {
			return
		}
		for i, fde := range fdes {
			if i == 64 {
				break
			}
			for _, pc := range []uint64{fde.Begin(), fde.Begin() + (fde.End()-fde.Begin())/2} {
				cfiRowAt(fde, pc)
			}
		}
	})
}
