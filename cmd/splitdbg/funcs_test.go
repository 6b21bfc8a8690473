package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/splitdbg/splitdbg/internal/objcopy"
	"github.com/splitdbg/splitdbg/internal/testbin"
)

// TestFuncsOpensOnce runs funcs on a stripped binary whose debug file no
// debuginfod server has, and checks that the server is asked once: the
// heap bound and the table share one open of the file.
func TestFuncsOpensOnce(t *testing.T) {
	if _, err := objcopy.Tool(); err != nil {
		t.Skip(err)
	}
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/buildid/") {
			asked.Add(1)
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	stripped := filepath.Join(t.TempDir(), "gcc-cold")
	if err := objcopy.Run(testbin.Path(t, "gcc-cold"), stripped, "--strip-debug"); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, "", "funcs", "-all", "-json", stripped); code != 0 {
		t.Fatalf("funcs: exit %d: %s", code, stderr)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("funcs asked the debuginfod server %d times for the debug file, want once", n)
	}
}
