package main

import (
	"bufio"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/splitdbg/splitdbg/internal/testbin"
	"github.com/splitdbg/splitdbg/splitinfo/bat"
)

// batBins are the BOLT outputs with address translation.
var batBins = []string{"bolt22", "bolt19", "bolt22-over-gcc", "bolt19-over-gcc"}

type batEntryJSON struct {
	OutputOffset uint32  `json:"output_offset"`
	InputOffset  uint32  `json:"input_offset"`
	IsBranch     bool    `json:"is_branch"`
	Deleted      *bool   `json:"deleted"`
	BlockIndex   *uint32 `json:"block_index"`
	BlockHash    *uint64 `json:"block_hash"`
}

type batFuncJSON struct {
	Addr             uint64         `json:"addr"`
	Name             string         `json:"name"`
	Size             uint64         `json:"size"`
	Cold             bool           `json:"cold"`
	Index            int            `json:"index"`
	Parent           string         `json:"parent"`
	ParentAddr       uint64         `json:"parent_addr"`
	Hash             uint64         `json:"hash"`
	NumBlocks        uint32         `json:"num_blocks"`
	InputSkew        uint32         `json:"input_skew"`
	EqualElems       uint32         `json:"equal_elems"`
	Entries          []batEntryJSON `json:"entries"`
	SecondaryEntries []uint32       `json:"secondary_entries"`
}

// asBATJSON renders a fragment of the decoder as the command should print
// it.
func asBATJSON(f *bat.Func) batFuncJSON {
	p := f.Parent()
	j := batFuncJSON{Addr: f.Addr, Name: f.Name, Size: f.Size, Cold: f.Cold, Index: f.Index, Parent: p.Name, ParentAddr: p.Addr,
		Hash: f.Hash, NumBlocks: f.NumBlocks, InputSkew: f.InputSkew, EqualElems: f.EqualElems,
		Entries: []batEntryJSON{}, SecondaryEntries: f.SecondaryEntries}
	if j.SecondaryEntries == nil {
		j.SecondaryEntries = []uint32{}
	}
	for _, e := range f.Entries {
		je := batEntryJSON{OutputOffset: e.OutputOffset, InputOffset: e.InputOffset, IsBranch: e.Branch}
		if !e.Branch {
			je.Deleted, je.BlockIndex, je.BlockHash = &e.Deleted, &e.BlockIndex, &e.BlockHash
		}
		j.Entries = append(j.Entries, je)
	}
	return j
}

// TestBATContract checks "bat -json" lists both tables with every field of
// every fragment and entry as the decoder reads them.
func TestBATContract(t *testing.T) {
	for _, name := range batBins {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			out, stderr, code := run(t, "", "bat", "-json", bin)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			raw := decode[map[string][]map[string]any](t, out)
			for _, table := range []string{"hot", "cold"} {
				if len(raw[table]) == 0 {
					t.Errorf("no %s fragments", table)
				}
				for _, f := range raw[table] {
					for _, k := range []string{"addr", "name", "size", "cold", "parent", "hash", "num_blocks", "entries", "secondary_entries"} {
						if _, ok := f[k]; !ok {
							t.Errorf("%s fragment %v lacks %q", table, f["name"], k)
						}
					}
				}
			}
			got := decode[map[string][]batFuncJSON](t, out)
			tb, err := bat.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]batFuncJSON{"hot": {}, "cold": {}}
			for f := range tb.Hot() {
				want["hot"] = append(want["hot"], asBATJSON(f))
			}
			for f := range tb.Cold() {
				want["cold"] = append(want["cold"], asBATJSON(f))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("bat -json (-decoder +command):\n%s", diff)
			}
			for _, f := range got["cold"] {
				if !f.Cold || f.Parent == "" || f.Parent == f.Name || !strings.HasPrefix(f.Name, f.Parent+".cold") {
					t.Errorf("cold fragment %s: parent %q", f.Name, f.Parent)
				}
			}
		})
	}
}

type translation struct {
	Addr        uint64 `json:"addr"`
	Found       bool   `json:"found"`
	Function    string `json:"function"`
	Parent      string `json:"parent"`
	InputOffset uint64 `json:"input_offset"`
	IsBranch    bool   `json:"is_branch"`
}

// TestBATTranslate translates every byte of every fragment, and addresses
// around them, as samples and as branch sources, and checks the command
// agrees with splitinfo/bat's Translate and names the hot parent of every
// cold address.
func TestBATTranslate(t *testing.T) {
	for _, name := range batBins {
		t.Run(name, func(t *testing.T) {
			bin := testbin.Path(t, name)
			tb, err := bat.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			var addrs []uint64
			for f := range tb.All() {
				for a := f.Addr - 1; a <= f.Addr+f.Size; a++ {
					addrs = append(addrs, a)
				}
			}
			addrs = append(addrs, 0, 0x10)
			for _, branch := range []bool{false, true} {
				args := []string{"bat", "-json"}
				if branch {
					args = append(args, "-branch")
				}
				for _, a := range addrs {
					args = append(args, "-translate", hex(a))
				}
				out, stderr, code := run(t, "", append(args, bin)...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				got := decode[[]translation](t, out)
				var want []translation
				cold := 0
				for _, a := range addrs {
					tr := translation{Addr: a}
					if loc, ok := tb.Translate(a, branch); ok {
						tr = translation{Addr: a, Found: true, Function: loc.Fragment.Name, Parent: loc.Function.Name,
							InputOffset: loc.InputOffset, IsBranch: loc.Branch}
						if loc.Fragment.Cold {
							cold++
							if tr.Parent == tr.Function || !strings.HasPrefix(tr.Function, tr.Parent+".cold") {
								t.Errorf("%#x in %s: parent %q", a, tr.Function, tr.Parent)
							}
						}
					}
					want = append(want, tr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("bat -translate (branch %v) (-bat.Translate +command):\n%s", branch, diff)
				}
				if cold == 0 {
					t.Error("no cold address translated")
				}
			}
			// The same from standard input, and in text.
			in := hex(addrs[1]) + "\n\n" + hex(addrs[2]) + "\n"
			out, _, code := run(t, in, "bat", "-json", "-translate", "-", bin)
			if got := decode[[]translation](t, out); code != 0 || len(got) != 2 || got[0].Addr != addrs[1] || !got[0].Found {
				t.Errorf("-translate - (exit %d): %s", code, out)
			}
		})
	}
}

func TestBATText(t *testing.T) {
	bin := testbin.Path(t, "bolt22")
	out, stderr, code := run(t, "", "bat", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"hot table: 10 functions\n", "cold table: 3 fragments\n", "  main  0x40001a  size 468  hash 0x",
		"fragments main.cold.0\n", "  main.cold.0  0x4003c0  size 121  parent main (0x40001a)  input skew 30\n", "  branch\n", " deleted\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = run(t, "", "bat", "-translate", "0x4003c5", "-translate", "0x4003cb", "-translate", "16", bin)
	want := "0x4003c5 main.cold.0+0x5 -> main+0x23\n0x4003cb main.cold.0+0xb -> main+0x29 (branch)\n0x10 ??\n"
	if out != want {
		t.Errorf("translate text:\n%s\nwant\n%s", out, want)
	}
}

// TestBATTranslateStreams: each answer arrives before the next address
// is sent.
func TestBATTranslateStreams(t *testing.T) {
	bin := testbin.Path(t, "bolt22")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- (&cli{inR, outW, io.Discard}).main([]string{"bat", "-translate", "-", bin})
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	for _, a := range []string{"0x4003c5", "0x400441", "0x40001a"} {
		if _, err := io.WriteString(inW, a+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer for %s: %v", a, err)
		}
		if !strings.HasPrefix(line, a+" ") || !strings.Contains(line, " -> ") {
			t.Errorf("answer for %s: %q", a, line)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestBATErrors(t *testing.T) {
	bolt := testbin.Path(t, "bolt22")
	demo := testbin.Path(t, "demo")
	tests := []struct {
		args    []string
		code    int
		wantErr []string
	}{
		{[]string{"bat"}, 2, []string{"usage: splitdbg bat"}},
		{[]string{"bat", "-branch", bolt}, 2, []string{"-branch needs -translate"}},
		{[]string{"bat", "-translate", "0xzz", bolt}, 2, []string{"bad address"}},
		{[]string{"bat", "-translate", "-", "-translate", "1", bolt}, 2, []string{"standard input"}},
		{[]string{"bat", demo}, 1, []string{demo, ".note.bolt_bat"}},
		{[]string{"bat", "-translate", "1", demo}, 1, []string{demo, ".note.bolt_bat"}},
		{[]string{"bat", "-stdin", bolt}, 2, []string{"flag provided but not defined"}},
	}
	for _, tt := range tests {
		_, stderr, code := run(t, "", tt.args...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tt.args, code, tt.code, stderr)
		}
		if tt.code == 1 && strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: error is not one line: %q", tt.args, stderr)
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: stderr %q lacks %q", tt.args, stderr, w)
			}
		}
	}
}
