package elfx

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// DefaultDebugDir is gdb's default debug file directory, where Debian's
// -dbg and -dbgsym packages install.
const DefaultDebugDir = "/usr/lib/debug"

// DebugDirs are the directories searched for separate debug files, gdb's
// "debug-file-directory". Set it before opening files.
var DebugDirs = []string{DefaultDebugDir}

// needsDebug reports whether f lacks what a separate debug file holds:
// DWARF or a full symbol table.
func (f *File) needsDebug() bool {
	hasDWARF := f.File.Section(".debug_info") != nil || f.File.Section(".zdebug_info") != nil
	return !hasDWARF || f.File.Section(".symtab") == nil
}

// findDebug returns the separate debug file of f, opened from path, or
// nil. The order is gdb's: build ID under each debug directory, then
// .gnu_debuglink (next to the file, in its .debug directory, under each
// debug directory), then the debuginfod client (its cache, then the
// servers of $DEBUGINFOD_URLS). A candidate is taken only when it is the
// file's: the same build ID, or, for a file without one, the CRC the
// debug link records. Candidates that are missing, unreadable or not ELF
// are passed over, as gdb does.
func findDebug(f *File, path string, dirs []string) *File {
	id, _ := f.BuildID()
	idHex := hex.EncodeToString(id)
	if len(id) >= 2 {
		for _, dir := range dirs {
			p := filepath.Join(dir, ".build-id", idHex[:2], idHex[2:]+".debug")
			if d := openDebugCandidate(path, p, id, nil); d != nil {
				return d
			}
		}
	}
	if name, crc, ok := f.DebugLink(); ok {
		dir := filepath.Dir(path)
		if real, err := filepath.EvalSymlinks(path); err == nil {
			dir = filepath.Dir(real)
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
		for _, g := range dirs {
			cands = append(cands, filepath.Join(g, dir, name))
		}
		for _, p := range cands {
			if d := openDebugCandidate(path, p, id, &crc); d != nil {
				return d
			}
		}
	}
	if len(id) > 0 {
		if p := debuginfod(idHex); p != "" {
			return openDebugCandidate(path, p, id, nil)
		}
	}
	return nil
}

// openDebugCandidate opens p as the debug file of the file at path: it
// must not be that file, and must have build ID id (when id is not nil)
// or, failing that, the CRC-32 *crc of its contents (when crc is not nil).
func openDebugCandidate(path, p string, id []byte, crc *uint32) *File {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if self, err := os.Stat(path); err == nil && os.SameFile(st, self) {
		return nil
	}
	d, err := openOne(p)
	if err != nil {
		return nil
	}
	did, _ := d.BuildID()
	switch {
	case len(id) > 0 && len(did) > 0:
		if bytes.Equal(id, did) {
			return d
		}
	case crc != nil:
		if c, err := fileCRC(p); err == nil && c == *crc {
			return d
		}
	}
	d.Close()
	return nil
}

// fileCRC returns the CRC-32 (IEEE, as .gnu_debuglink records it) of the
// file at p.
func fileCRC(p string) (uint32, error) {
	r, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, r); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// NT_GNU_BUILD_ID is the type of the GNU build ID note (owner "GNU").
const ntGNUBuildID = 3

// BuildID returns the file's GNU build ID: the descriptor of its
// NT_GNU_BUILD_ID note (owner "GNU"), found in any SHT_NOTE section. Nil
// and no error when it has none; a malformed note section is a
// DecodeError naming it.
func (f *File) BuildID() ([]byte, error) {
	for _, s := range f.File.Sections {
		if s.Type != elf.SHT_NOTE || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if err := f.checkInFile(s); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: section %s: %w", f.Name, s.Name, err)
		}
		id, err := findNote(s.Name, data, f.ByteOrder, "GNU", ntGNUBuildID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if id != nil {
			return id, nil
		}
	}
	return nil, nil
}

// findNote returns the descriptor of the first note of owner and type
// typ in data, the contents of an SHT_NOTE section (System V ABI, "Note
// Section": namesz, descsz, type, then name and descriptor, each padded
// to 4 bytes), or nil.
func findNote(section string, data []byte, bo binary.ByteOrder, owner string, typ uint32) ([]byte, error) {
	c := cursor.New(section, 0, data)
	c.SetByteOrder(bo)
	for !c.Done() {
		at := c.Offset()
		if !c.Need(12, "note header") {
			break
		}
		namesz, descsz, t := c.U32(), c.U32(), c.U32()
		if uint64(namesz) > uint64(c.Len()) {
			c.FailAt(at, cursor.ErrTruncated, "note name of %d bytes, %d left", namesz, c.Len())
			break
		}
		name := c.Bytes(int(namesz))
		c.Align(4)
		if uint64(descsz) > uint64(c.Len()) {
			c.FailAt(at, cursor.ErrTruncated, "note descriptor of %d bytes, %d left", descsz, c.Len())
			break
		}
		desc := c.Bytes(int(descsz))
		c.Align(4)
		if t == typ && string(bytes.TrimRight(name, "\x00")) == owner && c.Err() == nil {
			return desc, nil
		}
	}
	return nil, c.Err()
}

// DebugLink returns the file name and CRC-32 of the file's .gnu_debuglink
// section; ok is false when it has none or it is malformed.
func (f *File) DebugLink() (name string, crc uint32, ok bool) {
	s := f.File.Section(".gnu_debuglink")
	if s == nil || s.Type == elf.SHT_NOBITS || f.checkInFile(s) != nil {
		return "", 0, false
	}
	data, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	return ParseDebugLink(data, f.ByteOrder)
}

// ParseDebugLink decodes the contents of a .gnu_debuglink section (gdb
// manual, "Separate Debug Files"): the debug file's name, NUL-terminated
// and padded to 4 bytes, then the CRC-32 of its contents in the file's
// byte order. ok is false unless the name is a non-empty file name
// without a directory.
func ParseDebugLink(data []byte, bo binary.ByteOrder) (name string, crc uint32, ok bool) {
	c := cursor.New(".gnu_debuglink", 0, data)
	c.SetByteOrder(bo)
	n := c.CString()
	c.Align(4)
	crc = c.U32()
	if c.Err() != nil || len(n) == 0 || bytes.IndexByte(n, '/') >= 0 {
		return "", 0, false
	}
	return string(n), crc, true
}

// debuginfod returns the path of the debug file of build ID idHex (lower
// case hex) in the debuginfod client's cache, fetching it first from the
// servers of $DEBUGINFOD_URLS when the cache does not have it; "" when
// neither has it. It follows the client (debuginfod-client-config(7)):
// the cache is $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client,
// else ~/.cache/debuginfod_client, holding BUILDID/debuginfo; servers are
// asked for /buildid/BUILDID/debuginfo in the order given, with
// $DEBUGINFOD_TIMEOUT (default 90) seconds to connect and answer.
func debuginfod(idHex string) string {
	cache := debuginfodCache()
	if cache == "" {
		return ""
	}
	p := filepath.Join(cache, idHex, "debuginfo")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return p
	}
	urls := strings.Fields(os.Getenv("DEBUGINFOD_URLS"))
	if len(urls) == 0 {
		return ""
	}
	timeout := 90 * time.Second
	if v, err := strconv.Atoi(os.Getenv("DEBUGINFOD_TIMEOUT")); err == nil && v > 0 {
		timeout = time.Duration(v) * time.Second
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
		ResponseHeaderTimeout: timeout,
	}}
	defer client.CloseIdleConnections()
	for _, u := range urls {
		if !strings.Contains(u, "://") {
			continue // an IMA policy tag such as ima:enforcing
		}
		if fetch(client, strings.TrimRight(u, "/")+"/buildid/"+idHex+"/debuginfo", p) == nil {
			return p
		}
	}
	return ""
}

// debuginfodCache returns the debuginfod client's cache directory.
func debuginfodCache() string {
	if p := os.Getenv("DEBUGINFOD_CACHE_PATH"); p != "" {
		return p
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "debuginfod_client")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "debuginfod_client")
}

// fetch downloads url to dst through a temporary file in dst's directory,
// renamed into place once complete, as the client does.
func fetch(client *http.Client, url, dst string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".debuginfo.tmp")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
