package adapter

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/service/api"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestOrdinaryFunction checks that where no moved code is involved the
// Client answers exactly as plain Delve on the same session: a breakpoint
// on an unsplit function, the stop there, its disassembly, and FUNC and
// hot-line locations of split functions whose answers Delve gets right.
func TestOrdinaryFunction(t *testing.T) {
	for _, tc := range coldCases {
		if tc.ordinary == "" {
			continue
		}
		t.Run(tc.bin, func(t *testing.T) {
			s := startDelve(t, tc.bin, "cold")
			c, plain := s.client, s.plain
			plain.ListDynamicLibraries() // see checkStack

			samePlain(t, s, tc.ordinary)
			checkSplitFunc(t, s, tc)

			pb, err := plain.CreateBreakpoint(&api.Breakpoint{FunctionName: tc.ordinary})
			if err != nil {
				t.Fatalf("plain CreateBreakpoint(%s): %v", tc.ordinary, err)
			}
			if _, err := plain.ClearBreakpoint(pb.ID); err != nil {
				t.Fatal(err)
			}
			cb, err := c.CreateBreakpoint(&api.Breakpoint{FunctionName: tc.ordinary})
			if err != nil {
				t.Fatalf("CreateBreakpoint(%s): %v", tc.ordinary, err)
			}
			if diff := cmp.Diff(pb, cb, cmpopts.IgnoreFields(api.Breakpoint{}, "ID")); diff != "" {
				t.Errorf("CreateBreakpoint(%s) (-plain +client):\n%s", tc.ordinary, diff)
			}

			st := <-c.Continue()
			if st.Err != nil || st.CurrentThread == nil || st.CurrentThread.Function.Name() != tc.ordinary {
				t.Fatalf("Continue: %+v", st)
			}
			ps, err := plain.GetState()
			if err != nil {
				t.Fatal(err)
			}
			cs, err := c.GetState()
			if err != nil {
				t.Fatal(err)
			}
			// Delve lists threads in map order.
			byID := func(a, b *api.Thread) int { return a.ID - b.ID }
			slices.SortFunc(ps.Threads, byID)
			slices.SortFunc(cs.Threads, byID)
			if diff := cmp.Diff(ps, cs); diff != "" {
				t.Errorf("GetState at %s (-plain +client):\n%s", tc.ordinary, diff)
			}

			pf, err := plain.Stacktrace(-1, 50, 0, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := c.Stacktrace(-1, 50, 0, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			pf, cf = realFrames(pf), realFrames(cf)
			if len(pf) != len(cf) {
				t.Fatalf("Stacktrace: %d frames, plain %d:\n%s", len(cf), len(pf), formatFrames(cf))
			}
			for i := range pf {
				if pf[i].Function == nil && cf[i].Function != nil {
					// Plain Delve's ??? frame in a split function (in moved
					// code, or in the entry fragment when Delve took a moved
					// fragment for the function): named, and otherwise the
					// same.
					if f, ok := c.Resolver().Frame(cf[i].PC, i > 0); !ok || !f.Split() || cf[i].Function.Name() != f.Function {
						t.Errorf("frame %d: %s named, not in a split function", i, cf[i].Function.Name())
					}
					cf[i].Function, cf[i].File, cf[i].Line = nil, pf[i].File, pf[i].Line
				}
				if diff := cmp.Diff(pf[i], cf[i]); diff != "" {
					t.Errorf("frame %d (-plain +client):\n%s", i, diff)
				}
			}

			pd, perr := plain.DisassemblePC(curScope, st.CurrentThread.PC, api.IntelFlavour)
			cd, cerr := c.DisassemblePC(curScope, st.CurrentThread.PC, api.IntelFlavour)
			if diff := cmp.Diff(pd, cd); diff != "" || (perr == nil) != (cerr == nil) {
				t.Errorf("DisassemblePC at %s: errors %v, %v (-plain +client):\n%s", tc.ordinary, perr, cerr, diff)
			}
		})
	}
}

// samePlain checks that FindLocation of spec is plain Delve's answer.
func samePlain(t *testing.T, s *session, spec string) {
	t.Helper()
	pl, _, perr := s.plain.FindLocation(curScope, spec, true, nil)
	cl, _, cerr := s.client.FindLocation(curScope, spec, true, nil)
	if diff := cmp.Diff(pl, cl); diff != "" || (perr == nil) != (cerr == nil) {
		t.Errorf("FindLocation(%s): errors %v, %v (-plain +client):\n%s", spec, perr, cerr, diff)
	}
}

// checkSplitFunc checks FUNC and a hot line of the split function: Delve's
// answers where they are right, the entry fragment where Delve fails.
func checkSplitFunc(t *testing.T, s *session, tc coldCase) {
	t.Helper()
	pl, _, perr := s.plain.FindLocation(curScope, tc.fn, true, nil)
	if tc.bin == "cgo" || tc.delveFirst {
		switch {
		case tc.bin == "cgo":
			// Delve 1.27 finds no entry for a cgo C function with
			// DW_AT_ranges.
			if perr == nil || !strings.Contains(perr.Error(), "could not find function") {
				t.Errorf("plain FindLocation(%s) = %+v, %v; want \"could not find function\"", tc.fn, pl, perr)
			}
		default:
			// Delve's function starts at the first DWARF range, which
			// clang 19 makes the moved one: break FUNC lands in moved code.
			if perr != nil || len(pl) != 1 || len(pl[0].PCs) != 1 {
				t.Fatalf("plain FindLocation(%s) = %+v, %v", tc.fn, pl, perr)
			}
			if f, ok := s.client.Resolver().Frame(pl[0].PCs[0], false); !ok || !f.Moved() {
				t.Errorf("plain FindLocation(%s) = %#x, not in moved code", tc.fn, pl[0].PCs[0])
			}
		}
		want, err := s.client.Resolver().Resolve(tc.fn)
		if err != nil {
			t.Fatal(err)
		}
		cl, _, err := s.client.FindLocation(curScope, tc.fn, true, nil)
		if err != nil || len(cl) != 1 || len(cl[0].PCs) != 1 || cl[0].PCs[0] != want.Locs[0].PC || cl[0].Function.Name() != tc.fn {
			t.Errorf("FindLocation(%s) = %+v, %v; want %#x", tc.fn, cl, err, want.Locs[0].PC)
		}
		if want.Locs[0].Frag != 0 {
			t.Errorf("Resolve(%s) = fragment %d; want the entry fragment", tc.fn, want.Locs[0].Frag)
		}
		bp, err := s.client.CreateBreakpoint(&api.Breakpoint{FunctionName: tc.fn})
		if err != nil || !slices.Equal(bp.Addrs, want.Addrs()) || bp.FunctionName != tc.fn {
			t.Errorf("CreateBreakpoint(%s) = %+v, %v; want %#x", tc.fn, bp, err, want.Addrs())
		}
		if err == nil {
			s.client.ClearBreakpoint(bp.ID)
		}
		return
	}
	samePlain(t, s, tc.fn)
	if perr != nil || len(pl) != 1 {
		return
	}
	hot := pl[0].File + ":" + strconv.Itoa(pl[0].Line)
	if res, err := s.client.Resolver().Resolve(hot); err == nil && !res.Moved() {
		samePlain(t, s, hot)
	}
}
