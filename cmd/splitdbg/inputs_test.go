package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splitdbg/splitdbg/internal/elfx"
	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestBadInputMessages pins the one-line error of each kind of input a
// user may hand a command by mistake: it names the file and says what
// the file is not, or which section is cut short where.
func TestBadInputMessages(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	demoPath := testbin.Path(t, "demo")
	demo, err := os.ReadFile(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	ef := testbin.OpenELF(t, demoPath)
	info := ef.Section(".debug_info")
	// demo whose .debug_info claims to run to twice the file's length.
	long := append([]byte(nil), demo...)
	shoff := binary.LittleEndian.Uint64(long[0x28:])
	for i, s := range ef.Sections {
		if s == info {
			binary.LittleEndian.PutUint64(long[shoff+uint64(i)*64+0x20:], 2*uint64(len(demo)))
		}
	}
	text := write("text.txt", []byte("not a binary\n"))
	empty := write("empty", nil)
	cut := write("cut", demo[:len(demo)/2])
	longInfo := write("long-info", long)
	truncated := fmt.Sprintf("%s: .debug_info+%#x: truncated: section .debug_info needs %d bytes at offset %#x, the file has %d",
		longInfo, len(demo)-int(info.Offset), 2*len(demo), info.Offset, len(demo))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"funcs", text}, "splitdbg funcs: " + text + `: not an ELF file (starts with "not ")`},
		{[]string{"addr", text, "0x10"}, "splitdbg addr: " + text + `: not an ELF file (starts with "not ")`},
		{[]string{"funcs", empty}, "splitdbg funcs: " + empty + ": not an ELF file (an empty file)"},
		{[]string{"break", empty, "main"}, "splitdbg break: " + empty + ": not an ELF file (an empty file)"},
		{[]string{"funcs", dir}, "splitdbg funcs: " + dir + ": is a directory, not an ELF file"},
		{[]string{"funcs", cut}, "splitdbg funcs: " + cut + ": section headers+0x0: truncated: the section header table needs"},
		{[]string{"funcs", longInfo}, "splitdbg funcs: " + truncated},
		{[]string{"addr", longInfo, "0x1250"}, "splitdbg addr: " + truncated},
	}
	for _, tt := range tests {
		_, stderr, code := run(t, "", tt.args...)
		if code != 1 || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and one line starting %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestFuncsSaysWhyEmpty checks that funcs explains on stderr, with exit
// status 0, an empty list: a binary without split functions, and one
// without any function splitdbg can see.
func TestFuncsSaysWhyEmpty(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	noDebug := t.TempDir()
	// The flag sets elfx.DebugDirs for the rest of the process.
	t.Cleanup(func() { elfx.DebugDirs = []string{elfx.DefaultDebugDir} })
	unsplit := testbin.Path(t, "bolt-input") // built without hot/cold splitting
	stdout, stderr, code := run(t, "", "funcs", unsplit)
	if code != 0 || stdout != "" || !strings.HasPrefix(stderr, "splitdbg funcs: "+unsplit+": none of its ") ||
		!strings.HasSuffix(stderr, " functions is split (-all lists them)\n") {
		t.Errorf("funcs %s: exit %d, stdout %q, stderr %q", unsplit, code, stdout, stderr)
	}
	if stdout, stderr, code := run(t, "", "funcs", "-all", unsplit); code != 0 || stdout == "" || stderr != "" {
		t.Errorf("funcs -all %s: exit %d, %d bytes out, stderr %q", unsplit, code, len(stdout), stderr)
	}
	if stdout, stderr, code := run(t, "", "funcs", "-json", unsplit); code != 0 || stdout != "[]\n" || !strings.Contains(stderr, "none of its") {
		t.Errorf("funcs -json %s: exit %d, stdout %q, stderr %q", unsplit, code, stdout, stderr)
	}
	if _, err := objcopy.Tool(); err != nil {
		t.Skip(err)
	}
	stripped := filepath.Join(t.TempDir(), "demo-stripped")
	if err := objcopy.Run(testbin.Path(t, "demo"), stripped, "--strip-all"); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = run(t, "", "funcs", "-debug-file-directory", noDebug, stripped)
	want := "splitdbg funcs: " + stripped + ": no functions found: no defined function symbols (.symtab, .dynsym) and no DWARF, in it or in a separate debug file\n"
	if code != 0 || stdout != "" || stderr != want {
		t.Errorf("funcs %s: exit %d, stdout %q, stderr %q; want %q", stripped, code, stdout, stderr, want)
	}
}

// TestProxyStartup checks that the proxy fails at once, naming the
// address, when no Delve listens at -upstream, and that its errors name
// the command once.
func TestProxyStartup(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	start := time.Now()
	_, stderr, code := run(t, "", "proxy", "-upstream", dead, testbin.Path(t, "demo"))
	want := "splitdbg proxy: no headless Delve at -upstream " + dead + ": "
	if code != 1 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "splitdbg proxy:") != 1 {
		t.Errorf("proxy -upstream %s: exit %d, stderr %q; want exit 1 and %q", dead, code, stderr, want)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("proxy took %v to give up on a closed port", d)
	}
	// Something listens (as Delve would), but BIN is missing.
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	missing := filepath.Join(t.TempDir(), "missing")
	_, stderr, code = run(t, "", "proxy", "-upstream", up.Addr().String(), missing)
	if code != 1 || !strings.Contains(stderr, missing) || strings.Count(stderr, "splitdbg proxy:") != 1 {
		t.Errorf("proxy on a missing BIN: exit %d, stderr %q; want exit 1, the file named, the command once", code, stderr)
	}
}
