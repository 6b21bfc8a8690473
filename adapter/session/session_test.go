package session

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/splitdbg/splitdbg/internal/testbin"
)

// garbled copies a test binary with the instructions of its first FDE in
// .eh_frame overwritten by DW_CFA_def_cfa opcodes whose operands run out
// (the program itself runs: only the unwind table is damaged). Delve's
// pkg/dwarf/frame panics reading such an entry.
func garbled(t *testing.T, name string) (path string, instr, end int64) {
	t.Helper()
	src := testbin.Path(t, name)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".eh_frame")
	f.Close()
	if sec == nil {
		t.Fatalf("%s has no .eh_frame", name)
	}
	b := data[sec.Offset : sec.Offset+sec.Size]
	off := 4 + int(binary.LittleEndian.Uint32(b)) // past the first CIE
	for binary.LittleEndian.Uint32(b[off+4:]) == 0 {
		off += 4 + int(binary.LittleEndian.Uint32(b[off:]))
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	in := off + 4 + 4 + 8 + 1
	for i := in; i < off+4+n; i++ {
		b[i] = 0x0c
	}
	path = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path, int64(in), int64(off + 4 + n)
}

// TestRefusesDamagedCFI launches a binary whose .eh_frame has a garbled
// FDE: instead of Delve crashing while it loads it, Start refuses with an
// error that names the section and the offset.
func TestRefusesDamagedCFI(t *testing.T) {
	bin, in, end := garbled(t, "gcc-cold")
	s, err := Start(Config{Program: bin})
	if err == nil {
		s.Stop(true)
		t.Fatal("Start on a binary with a garbled FDE: no error")
	}
	// The offset is one of the garbled FDE's instructions.
	m := regexp.MustCompile(`\.eh_frame\+0x([0-9a-f]+):`).FindStringSubmatch(err.Error())
	if m == nil || !strings.Contains(err.Error(), bin) {
		t.Fatalf("error %q does not name the file, .eh_frame and an offset", err)
	}
	if off, _ := strconv.ParseInt(m[1], 16, 64); off < in || off >= end {
		t.Errorf("error %q: offset %#x is not in the garbled instructions [%#x,%#x)", err, off, in, end)
	}
}
