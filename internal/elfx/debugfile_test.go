package elfx_test

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/cursor"
	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// split is a test binary split as distributions ship it: stripped, with
// its debug information in a separate file.
type split struct {
	orig     string // the binary before stripping
	stripped string // llvm-objcopy --strip-all --add-gnu-debuglink=NAME.debug
	debug    string // llvm-objcopy --only-keep-debug, named NAME.debug
	id       string // build ID, hex
}

// splitDebug makes the stripped binary and its debug file of the test
// binary name in dir (llvm-objcopy, as Debian's dh_strip does with GNU
// objcopy), skipping the test without llvm-objcopy.
func splitDebug(t *testing.T, name, dir string, noBuildID bool) split {
	t.Helper()
	orig := testbin.Path(t, name)
	if _, err := objcopy.Tool(); err != nil {
		t.Skip(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if noBuildID {
		p := filepath.Join(dir, name+".orig")
		if err := objcopy.Run(orig, p, "--remove-section=.note.gnu.build-id"); err != nil {
			t.Fatal(err)
		}
		orig = p
	}
	s := split{orig: orig, stripped: filepath.Join(dir, name), debug: filepath.Join(dir, name+".debug")}
	if err := objcopy.Run(orig, s.debug, "--only-keep-debug"); err != nil {
		t.Fatal(err)
	}
	if err := objcopy.Run(orig, s.stripped, "--strip-all", "--add-gnu-debuglink="+s.debug); err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := f.BuildID()
	if err != nil || (len(id) == 0) != noBuildID {
		t.Fatalf("%s: build ID %x, %v", name, id, err)
	}
	s.id = hex.EncodeToString(id)
	return s
}

// move renames from to to, making to's directory.
func move(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// noDebuginfod keeps the test away from the user's debuginfod client.
func noDebuginfod(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
}

func withDebugDirs(t *testing.T, dirs ...string) {
	old := elfx.DebugDirs
	elfx.DebugDirs = dirs
	t.Cleanup(func() { elfx.DebugDirs = old })
}

// checkJoined checks that stripped, opened with its debug file at
// debugPath, reads as the unstripped binary: the same code symbols and
// DWARF, and code from the stripped file.
func checkJoined(t *testing.T, s split, stripped, debugPath string) {
	t.Helper()
	f, err := elfx.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Debug == nil {
		t.Fatalf("%s: no debug file found (want %s)", stripped, debugPath)
	}
	if f.Debug.Name != debugPath {
		t.Errorf("debug file %s, want %s", f.Debug.Name, debugPath)
	}
	o, err := elfx.Open(s.orig)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	want, err := o.CodeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.CodeSymbols()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("code symbols (-unstripped +joined):\n%s", diff)
	}
	// Callers size their symbol slices by it: the debug file's table.
	if n, m := f.SymtabLen(), o.SymtabLen(); n != m || n < len(got) {
		t.Errorf("SymtabLen %d joined, %d unstripped; %d code symbols", n, m, len(got))
	}
	for _, sec := range []string{".debug_info", ".debug_line", ".debug_abbrev"} {
		w, _, err := o.SectionData(sec)
		if err != nil {
			t.Fatal(err)
		}
		g, _, err := f.SectionData(sec)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) == 0 || !slices.Equal(w, g) {
			t.Errorf("%s: %d bytes joined, %d unstripped", sec, len(g), len(w))
		}
	}
	if d, err := f.DWARF(); err != nil || d == nil {
		t.Errorf("DWARF: %v, %v", d, err)
	}
	// Code comes from the stripped file: the debug file's is SHT_NOBITS.
	text := o.Section(".text")
	code, err := f.ReadVA(text.Addr, 16)
	if err != nil {
		t.Fatal(err)
	}
	wantCode, err := o.ReadVA(text.Addr, 16)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(code, wantCode) {
		t.Errorf("code at %#x: % x, want % x", text.Addr, code, wantCode)
	}
}

// TestSeparateDebugFile places the debug file of a stripped binary where
// gdb looks for it and checks that Open finds it there, and only there.
func TestSeparateDebugFile(t *testing.T) {
	noDebuginfod(t)
	t.Run("debuglink next to the file", func(t *testing.T) {
		dir := t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		withDebugDirs(t)
		checkJoined(t, s, s.stripped, s.debug)
	})
	t.Run("debuglink without build ID: CRC", func(t *testing.T) {
		dir := t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, true)
		withDebugDirs(t)
		checkJoined(t, s, s.stripped, s.debug)
		// One byte changed: the CRC no longer matches.
		data, err := os.ReadFile(s.debug)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)-1] ^= 1
		if err := os.WriteFile(s.debug, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := elfx.Open(s.stripped)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.Debug != nil {
			t.Errorf("took %s, whose CRC is not the debug link's", f.Debug.Name)
		}
	})
	t.Run("debuglink in .debug", func(t *testing.T) {
		dir := t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		want := filepath.Join(dir, ".debug", "gcc-cold.debug")
		move(t, s.debug, want)
		withDebugDirs(t)
		checkJoined(t, s, s.stripped, want)
	})
	t.Run("debuglink under a debug directory", func(t *testing.T) {
		dir, global := t.TempDir(), t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(global, real, "gcc-cold.debug")
		move(t, s.debug, want)
		withDebugDirs(t, filepath.Join(t.TempDir(), "missing"), global)
		checkJoined(t, s, s.stripped, want)
	})
	t.Run("build ID", func(t *testing.T) {
		dir, global := t.TempDir(), t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		want := filepath.Join(global, ".build-id", s.id[:2], s.id[2:]+".debug")
		move(t, s.debug, want)
		withDebugDirs(t, global)
		checkJoined(t, s, s.stripped, want)
	})
	t.Run("debuginfod cache", func(t *testing.T) {
		dir, cache := t.TempDir(), t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		want := filepath.Join(cache, s.id, "debuginfo")
		move(t, s.debug, want)
		withDebugDirs(t)
		t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
		checkJoined(t, s, s.stripped, want)
	})
	t.Run("debuginfod cache under XDG_CACHE_HOME", func(t *testing.T) {
		dir, xdg := t.TempDir(), t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		want := filepath.Join(xdg, "debuginfod_client", s.id, "debuginfo")
		move(t, s.debug, want)
		withDebugDirs(t)
		t.Setenv("DEBUGINFOD_CACHE_PATH", "")
		t.Setenv("XDG_CACHE_HOME", xdg)
		checkJoined(t, s, s.stripped, want)
	})
	t.Run("another binary's debug file", func(t *testing.T) {
		// gcc-cold-nopie's debug file where gcc-cold's belongs: neither
		// its build ID nor its CRC is gcc-cold's.
		dir, global := t.TempDir(), t.TempDir()
		s := splitDebug(t, "gcc-cold", dir, false)
		other := splitDebug(t, "gcc-cold-nopie", t.TempDir(), false)
		data, err := os.ReadFile(other.debug)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{s.debug, filepath.Join(global, ".build-id", s.id[:2], s.id[2:]+".debug")} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		withDebugDirs(t, global)
		f, err := elfx.Open(s.stripped)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.Debug != nil {
			t.Errorf("took %s as the debug file", f.Debug.Name)
		}
		if syms, err := f.CodeSymbols(); len(syms) != 0 || err != nil && !errors.Is(err, elfx.ErrNoSymbols) {
			t.Errorf("stripped file alone: %d code symbols, %v", len(syms), err)
		}
	})
}

// TestDebuginfodFetch serves a debug file as a debuginfod server does
// (GET /buildid/ID/debuginfo) on 127.0.0.1 and checks that Open fetches
// it into the client cache, asking the servers in order, and reads the
// cached copy the next time without asking.
func TestDebuginfodFetch(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	s := splitDebug(t, "gcc-cold", dir, false)
	data, err := os.ReadFile(s.debug)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(s.debug)
	var asked atomic.Int32
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		paths = append(paths, r.URL.Path)
		if r.URL.Path != "/buildid/"+s.id+"/debuginfo" {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	withDebugDirs(t)
	t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
	t.Setenv("DEBUGINFOD_URLS", missing.URL+" ima:ignore "+srv.URL+"/")
	want := filepath.Join(cache, s.id, "debuginfo")
	checkJoined(t, s, s.stripped, want)
	if diff := cmp.Diff([]string{"/buildid/" + s.id + "/debuginfo"}, paths); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	cached, err := os.ReadFile(want)
	if err != nil || !slices.Equal(cached, data) {
		t.Errorf("cache holds %d bytes (%v), want the %d served", len(cached), err, len(data))
	}
	checkJoined(t, s, s.stripped, want)
	if n := asked.Load(); n != 1 {
		t.Errorf("the server was asked %d times, want once", n)
	}
}

// TestBuildIDNote checks BuildID against readelf's view of the test
// binaries' NT_GNU_BUILD_ID notes, and the note reader on malformed
// notes.
func TestBuildIDNote(t *testing.T) {
	f, err := elfx.Open(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := f.BuildID()
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatal("demo has no .note.gnu.build-id")
	}
	raw, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	// namesz 4, descsz, type 3, "GNU\0", descriptor.
	if len(raw) < 16 || !slices.Equal(id, raw[16:]) || binary.LittleEndian.Uint32(raw[4:]) != uint32(len(id)) {
		t.Errorf("build ID %x, note % x", id, raw)
	}
}

// TestBadFiles checks the errors for files that are not ELF files or are
// cut short: each names the file and says what is wrong.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	demo, err := os.ReadFile(testbin.Path(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(strings.NewReader(string(demo)))
	if err != nil {
		t.Fatal(err)
	}
	info := ef.Section(".debug_info")
	// demo with .debug_info's size doubled, running past the file's end.
	big := slices.Clone(demo)
	shoff := binary.LittleEndian.Uint64(big[0x28:])
	for i := range ef.Sections {
		if ef.Sections[i] == info {
			binary.LittleEndian.PutUint64(big[shoff+uint64(i)*64+0x20:], uint64(len(demo)))
		}
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		path      string
		want      []string
		truncated bool
		notELF    bool
	}{
		{write("text.txt", []byte("hello\n")), []string{"text.txt: not an ELF file", `starts with "hell"`}, false, true},
		{write("empty", nil), []string{"empty: not an ELF file (an empty file)"}, false, true},
		{write("header", demo[:40]), []string{"header: ELF header+0x0: truncated: the header needs 64 bytes, the file has 40"}, true, false},
		{write("cut", demo[:len(demo)/2]), []string{"cut: section headers+0x0: truncated: the section header table needs"}, true, false},
		{dir, []string{dir + ": is a directory, not an ELF file"}, false, false},
	}
	for _, tt := range tests {
		_, err := elfx.Open(tt.path)
		if err == nil {
			t.Errorf("%s: opened", tt.path)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tt.path, err, w)
			}
		}
		if got := errors.Is(err, cursor.ErrTruncated); got != tt.truncated {
			t.Errorf("%s: %v: errors.Is(ErrTruncated) = %v", tt.path, err, got)
		}
		if got := errors.Is(err, elfx.ErrNotELF); got != tt.notELF {
			t.Errorf("%s: %v: errors.Is(ErrNotELF) = %v", tt.path, err, got)
		}
	}
	// A string table moved past the end of the file: the symbols say so.
	strtab := slices.Clone(demo)
	for i, sec := range ef.Sections {
		if sec.Name == ".strtab" {
			binary.LittleEndian.PutUint64(strtab[shoff+uint64(i)*64+0x18:], uint64(len(demo)-10))
		}
	}
	g, err := elfx.Open(write("strtab", strtab))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.CodeSymbols(); !errors.Is(err, cursor.ErrTruncated) || !strings.Contains(err.Error(), ".strtab+0xa: truncated: section .strtab needs") {
		t.Errorf("symbols with .strtab past the end: %v", err)
	}
	// A section that runs past the end of the file opens, and reading it
	// says which section needs how many bytes where.
	p := write("bigdebug", big)
	f, err := elfx.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = f.DWARF()
	var de *cursor.DecodeError
	want := fmt.Sprintf("section .debug_info needs %d bytes at offset %#x, the file has %d", len(demo), info.Offset, len(demo))
	if !errors.As(err, &de) || de.Section != ".debug_info" || !errors.Is(err, cursor.ErrTruncated) || !strings.Contains(err.Error(), want) ||
		!strings.HasPrefix(err.Error(), p+": ") {
		t.Errorf("DWARF of %s: %v; want a truncated .debug_info naming the file and %q", p, err, want)
	}
}

// FuzzDebugLink feeds arbitrary .gnu_debuglink and note contents to the
// readers: no panics, and a result only for well-formed input.
func FuzzDebugLink(f *testing.F) {
	demo, err := os.ReadFile(testbin.Path(f, "demo"))
	if err != nil {
		f.Fatal(err)
	}
	ef, err := elf.NewFile(strings.NewReader(string(demo)))
	if err != nil {
		f.Fatal(err)
	}
	note := ef.Section(".note.gnu.build-id")
	if note == nil {
		f.Fatal("demo has no build ID note")
	}
	f.Add(demo[note.Offset:note.Offset+note.Size], []byte("demo.debug\x00\x00\x01\x02\x03\x04"))
	f.Add([]byte{4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0}, []byte("x"))
	f.Fuzz(func(t *testing.T, noteData, link []byte) {
		data := slices.Clone(demo)
		n := min(uint64(len(noteData)), note.Size)
		copy(data[note.Offset:], noteData[:n])
		g, err := elfx.NewBytes("fuzz", data)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := g.BuildID(); err != nil {
			var de *cursor.DecodeError
			if !errors.As(err, &de) {
				t.Errorf("BuildID: %v is not a DecodeError", err)
			}
		} else if uint64(len(id)) > note.Size {
			t.Errorf("build ID of %d bytes from a %d-byte note", len(id), note.Size)
		}
		name, _, ok := elfx.ParseDebugLink(link, binary.LittleEndian)
		if ok && (name == "" || strings.ContainsAny(name, "/\x00")) {
			t.Errorf("debug link name %q accepted", name)
		}
	})
}
