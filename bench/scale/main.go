//go:build ignore

// scale measures splitdbg against the reference tools on the inputs of
// bench/gen-scale.sh (issue 19): for each binary, interleaved rounds of
//
//	bulk:   splitdbg funcs -all -json BIN        llvm-gsymutil --convert BIN -o X
//	stream: splitdbg addr -json BIN -            1,000,000 addresses on stdin,
//	        splitdbg symbolize --obj=BIN --output-style=JSON
//	        llvm-symbolizer --obj=BIN --output-style=JSON
//	first:  splitdbg addr BIN ADDR, break BIN FUNC, break BIN FILE:LINE,
//	        symbolize --obj=BIN ADDR             llvm-symbolizer --obj=BIN ADDR
//	debug:  splitdbg debug BIN <<< exit          dlv exec BIN <<< exit
//
// timing each process (wall clock from start to exit, user+sys CPU from
// wait4's rusage, peak RSS from GNU time), and writes every sample to -json and a
// Markdown summary (medians) to standard output. Output goes to
// /dev/null. Before measuring it checks with "splitdbg funcs -json" that
// every generated function KQnnn_fI is found split in two fragments, and
// that the first-answer questions answer in the function they ask about.
//
//	go run bench/scale/main.go bench/scale/plot.go -splitdbg SD -dlv DLV -json OUT -plot PNG BIN...
package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/splitdbg/splitdbg/internal/elfx"
)

// Sample is one timed process.
type Sample struct {
	Wall, CPU float64 // seconds
	RSS       int64   // peak, KiB
}

// Cmd is one measured command on one input.
type Cmd struct {
	Group, Name string // Name: "splitdbg addr ADDR" etc.
	Tool        string // "splitdbg" or the reference tool's name
	Args        []string
	Stdin       string // a file, or "" for /dev/null
	Samples     []Sample
	Err         string `json:",omitempty"`
}

// Input is one binary and its measurements.
type Input struct {
	Path, Compiler        string
	Size                  int64 // file bytes
	Functions, Split      int   // generated functions, found split by splitdbg funcs
	AllFuncs              int   // procedures in funcs -all
	SectionsRead          int64 // .debug_*, .symtab, .strtab and code bytes
	Sections              map[string]uint64
	Addr, Func, FileLine  string
	FirstAnswers          map[string]string
	Cmds                  []*Cmd
	LoadBefore, LoadAfter string
}

var (
	sd      = flag.String("splitdbg", "", "splitdbg binary")
	gsym    = flag.String("gsymutil", "/usr/lib/llvm-22/bin/llvm-gsymutil", "llvm-gsymutil")
	sym     = flag.String("symbolizer", "/usr/lib/llvm-22/bin/llvm-symbolizer", "llvm-symbolizer")
	dlv     = flag.String("dlv", "", "dlv binary (Delve); empty: skip the debug group")
	runs    = flag.Int("runs", 5, "rounds of the bulk, first and debug groups")
	sruns   = flag.Int("stream-runs", 3, "rounds of the stream group")
	naddrs  = flag.Int("addrs", 1000000, "addresses of the stream group")
	groups  = flag.String("groups", "bulk,stream,first,debug", "groups to run")
	jsonOut = flag.String("json", "", "write every sample here (and read earlier inputs from it to merge)")
	tmp     = flag.String("tmp", os.TempDir(), "scratch directory")
	timeout = flag.Duration("timeout", 15*time.Minute, "per process")
	plotOut = flag.String("plot", "", "draw every input of -json into this PNG at the end (with no BIN: print the tables of -json and draw)")
	gnuTime = flag.String("time", "/usr/bin/time", "GNU time, for the peak RSS")
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("scale: ")
	flag.Parse()
	if (*sd == "" || flag.NArg() == 0) && *plotOut == "" {
		log.Fatal("usage: scale -splitdbg SD [-dlv DLV] [-json OUT] [-plot PNG] BIN...")
	}
	for _, bin := range flag.Args() {
		in := prepare(bin)
		measure(in, func() { save(in) })
		report(in)
	}
	if *plotOut != "" {
		all := readAll()
		summary(all)
		if flag.NArg() == 0 { // only drawing: the tables of every input too
			for _, in := range all {
				report(in)
			}
		}
		if err := plot(all, *plotOut); err != nil {
			log.Fatal(err)
		}
	}
}

// summary prints, per compiler and command, the median CPU per function
// and peak RSS at each size, and how the largest size compares with the
// smallest: the goals are per-function cost flat within 20 % and
// a first answer whose time does not grow with the binary.
func summary(all []*Input) {
	sort.Slice(all, func(i, j int) bool {
		if all[i].Compiler != all[j].Compiler {
			return all[i].Compiler < all[j].Compiler
		}
		return all[i].Functions < all[j].Functions
	})
	fmt.Print("\n### Growth with the number of functions\n\n")
	fmt.Print("CPU µs per function (median CPU / generated functions), then peak RSS in MB, at each size; last column: largest size / smallest.\n\n")
	for _, cc := range []string{"gcc", "clang"} {
		var ins []*Input
		var names []string
		seen := map[string]bool{}
		for _, in := range all {
			if in.Compiler != cc {
				continue
			}
			ins = append(ins, in)
			for _, c := range in.Cmds {
				if !seen[c.Name] && len(c.Samples) > 0 {
					seen[c.Name] = true
					names = append(names, c.Name)
				}
			}
		}
		if len(ins) < 2 {
			continue
		}
		fmt.Printf("| %s | tool |", cc)
		for _, in := range ins {
			fmt.Printf(" %dk µs/fn |", in.Functions/1000)
		}
		fmt.Printf(" growth |")
		for _, in := range ins {
			fmt.Printf(" %dk RSS MB |", in.Functions/1000)
		}
		fmt.Println(" growth |")
		fmt.Println("|---|---|" + strings.Repeat("---|", 2*len(ins)+2))
		for _, n := range names {
			var per, rss []float64
			tool := ""
			for _, in := range ins {
				p, r := math.NaN(), math.NaN()
				for _, c := range in.Cmds {
					if c.Name == n && len(c.Samples) > 0 {
						m := Median(c.Samples)
						p, r, tool = m.CPU*1e6/float64(in.Functions), float64(m.RSS)/1024, c.Tool
					}
				}
				per, rss = append(per, p), append(rss, r)
			}
			row := func(v []float64, f string) {
				var known []float64
				for _, x := range v {
					if math.IsNaN(x) {
						fmt.Print(" – |")
					} else {
						fmt.Printf(" "+f+" |", x)
						known = append(known, x)
					}
				}
				if len(known) < 2 {
					fmt.Print(" – |")
				} else {
					fmt.Printf(" %.2fx |", known[len(known)-1]/known[0])
				}
			}
			fmt.Printf("| %s | %s |", n, tool)
			row(per, "%.1f")
			row(rss, "%.0f")
			fmt.Println()
		}
		fmt.Println()
	}
}

// readAll reads the inputs measured so far from -json.
func readAll() []*Input {
	var all []*Input
	if *jsonOut == "" {
		return nil
	}
	if b, err := os.ReadFile(*jsonOut); err == nil {
		if err := json.Unmarshal(b, &all); err != nil {
			log.Fatalf("%s: %v", *jsonOut, err)
		}
	}
	return all
}

// save merges in into -json (read again each time, so that runs on other
// inputs can share the file): it replaces an earlier measurement of the
// same file, keeping that one's groups this run does not measure.
func save(in *Input) {
	if *jsonOut == "" {
		return
	}
	all := readAll()
	kept := all[:0]
	cmds := in.Cmds
	for _, x := range all {
		if x.Path != in.Path {
			kept = append(kept, x)
			continue
		}
		var old []*Cmd
		for _, c := range x.Cmds {
			if !strings.Contains(*groups, c.Group) {
				old = append(old, c)
			}
		}
		cmds = append(old, in.Cmds...)
	}
	x := *in
	x.Cmds = cmds
	b, err := json.MarshalIndent(append(kept, &x), "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*jsonOut+".tmp", b, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(*jsonOut+".tmp", *jsonOut); err != nil {
		log.Fatal(err)
	}
}

var genName = regexp.MustCompile(`^KQ(\d{3})_f(\d+)$`)

// prepare reads BIN's symbols, checks that splitdbg finds every generated
// function split, and picks the questions.
func prepare(bin string) *Input {
	abs, err := filepath.Abs(bin)
	if err != nil {
		log.Fatal(err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		log.Fatal(err)
	}
	in := &Input{Path: abs, Size: st.Size(), Compiler: filepath.Base(filepath.Dir(abs)), Sections: map[string]uint64{}}
	f, err := elfx.Open(abs)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || s.Name == ".symtab" || s.Name == ".strtab" || s.Flags&elf.SHF_EXECINSTR != 0 {
			in.Sections[s.Name] = s.Size
			in.SectionsRead += int64(s.Size)
		}
	}
	// Code symbols: functions, and clang's fragment symbols (fI.cold is
	// STT_NOTYPE), as splitdbg reads them.
	syms, err := f.CodeSymbols()
	if err != nil {
		log.Fatal(err)
	}
	type rng struct{ lo, hi uint64 }
	var hot, cold []rng
	coldOf := map[string]rng{}
	maxCopy, maxF := -1, -1
	for _, s := range syms {
		if s.Size == 0 {
			continue
		}
		r := rng{s.Value, s.Value + s.Size}
		if name, ok := strings.CutSuffix(s.Name, ".cold"); ok {
			cold = append(cold, r)
			coldOf[name] = r
			continue
		}
		hot = append(hot, r)
		if m := genName.FindStringSubmatch(s.Name); m != nil {
			in.Functions++
			c, _ := strconv.Atoi(m[1])
			i, _ := strconv.Atoi(m[2])
			maxCopy, maxF = max(maxCopy, c), max(maxF, i)
		}
	}
	if in.Functions == 0 {
		log.Fatalf("%s: no generated functions KQnnn_fI: not an input of bench/gen-scale.sh", abs)
	}
	// The questions: the middle function of the last copy, an address in
	// its cold fragment, and the line of its call to sink_fail, which is
	// in the cold fragment (gen-scale.sh: function I starts at line
	// 7+11*I, the call is 4 lines below).
	mid := (maxF + 1) / 2
	in.Func = fmt.Sprintf("KQ%03d_f%d", maxCopy, mid)
	c, ok := coldOf[in.Func]
	if !ok {
		log.Fatalf("%s: no %s.cold", abs, in.Func)
	}
	in.Addr = fmt.Sprintf("%#x", c.lo+(c.hi-c.lo)/2)
	in.FileLine = fmt.Sprintf("m_KQ%03d.c:%d", maxCopy, 7+11*mid+4)

	// Every generated function split, as splitdbg sees it.
	var procs []struct {
		Name      string
		Fragments []struct{ Symbol, Kind string }
	}
	out := run1(*sd, "funcs", "-json", abs)
	if err := json.Unmarshal(out, &procs); err != nil {
		log.Fatalf("splitdbg funcs -json %s: %v", abs, err)
	}
	for _, p := range procs {
		if genName.MatchString(p.Name) && len(p.Fragments) == 2 && p.Fragments[1].Symbol == p.Name+".cold" {
			in.Split++
		}
	}
	if in.Split != in.Functions {
		log.Fatalf("%s: splitdbg funcs finds %d of the %d generated functions split", abs, in.Split, in.Functions)
	}
	out = run1(*sd, "funcs", "-all", "-json", abs)
	in.AllFuncs = bytes.Count(out, []byte("\n    \"name\": "))

	// The first answers, once, to check them and show them.
	in.FirstAnswers = map[string]string{}
	check := func(key, want string, args ...string) {
		a := strings.TrimSpace(string(run1(args[0], args[1:]...)))
		in.FirstAnswers[key] = a
		if !strings.Contains(a, want) {
			log.Fatalf("%s: %q does not answer %s: %s", abs, key, want, a)
		}
	}
	check("addr", in.Func+"+", *sd, "addr", abs, in.Addr)
	check("break FUNC", "in "+in.Func+" ", *sd, "break", abs, in.Func)
	check("break FILE:LINE", "in "+in.Func+" (fragment 1 cold", *sd, "break", abs, in.FileLine)
	check("symbolize", in.Func+"\n", *sd, "symbolize", "--obj="+abs, in.Addr)
	check("llvm-symbolizer", in.Func+".cold\n", *sym, "--obj="+abs, in.Addr)

	// The stream: half hot, half cold, as bench/compare-symbolize.sh.
	if strings.Contains(*groups, "stream") {
		rnd := rand.New(rand.NewSource(1))
		var b bytes.Buffer
		for i := 0; i < *naddrs; i++ {
			set := hot
			if i%2 == 1 {
				set = cold
			}
			r := set[rnd.Intn(len(set))]
			fmt.Fprintf(&b, "%#x\n", r.lo+uint64(rnd.Int63n(int64(r.hi-r.lo))))
		}
		if err := os.WriteFile(addrFile(abs), b.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	return in
}

func addrFile(bin string) string {
	return filepath.Join(*tmp, "scale-addrs-"+filepath.Base(filepath.Dir(bin))+"-"+filepath.Base(bin))
}

// run1 runs a command and returns its standard output, failing on error.
func run1(name string, args ...string) []byte {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		log.Fatalf("%s %s: %v %s", name, strings.Join(args, " "), err, msg)
	}
	return out
}

func load() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// measure runs the rounds, calling save after each.
func measure(in *Input, save func()) {
	bin := in.Path
	gs := filepath.Join(*tmp, "scale.gsym")
	exitFile := filepath.Join(*tmp, "scale-exit")
	if err := os.WriteFile(exitFile, []byte("exit\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	addrs := addrFile(bin)
	base := filepath.Base
	var cmds []*Cmd
	add := func(group, name, tool, stdin string, args ...string) {
		if strings.Contains(*groups, group) {
			cmds = append(cmds, &Cmd{Group: group, Name: name, Tool: tool, Args: args, Stdin: stdin})
		}
	}
	add("bulk", "funcs -all -json", "splitdbg", "", *sd, "funcs", "-all", "-json", bin)
	add("bulk", "gsymutil --convert", base(*gsym), "", *gsym, "--convert", bin, "-o", gs)
	add("stream", "addr -json -", "splitdbg", addrs, *sd, "addr", "-json", bin, "-")
	add("stream", "symbolize JSON", "splitdbg", addrs, *sd, "symbolize", "--obj="+bin, "--output-style=JSON")
	add("stream", "llvm-symbolizer JSON", base(*sym), addrs, *sym, "--obj="+bin, "--output-style=JSON")
	add("first", "addr ADDR", "splitdbg", "", *sd, "addr", bin, in.Addr)
	add("first", "break FUNC", "splitdbg", "", *sd, "break", bin, in.Func)
	add("first", "break FILE:LINE", "splitdbg", "", *sd, "break", bin, in.FileLine)
	add("first", "symbolize ADDR", "splitdbg", "", *sd, "symbolize", "--obj="+bin, in.Addr)
	add("first", "llvm-symbolizer ADDR", base(*sym), "", *sym, "--obj="+bin, in.Addr)
	if *dlv != "" {
		add("debug", "debug, to the prompt and exit", "splitdbg", exitFile, *sd, "debug", bin)
		add("debug", "dlv exec, to the prompt and exit", "dlv", exitFile, *dlv, "exec", "--allow-non-terminal-interactive=true", bin)
	}
	in.Cmds = cmds
	in.LoadBefore = load()
	maxRuns := *runs
	if strings.Contains(*groups, "stream") {
		maxRuns = max(maxRuns, *sruns)
	}
	for r := 0; r < maxRuns; r++ {
		for _, c := range cmds {
			n := *runs
			if c.Group == "stream" {
				n = *sruns
			}
			if r >= n || c.Err != "" {
				continue
			}
			s, err := timed(c)
			if err != nil {
				c.Err = err.Error()
				log.Printf("%s: %s: %v", bin, c.Name, err)
				continue
			}
			c.Samples = append(c.Samples, s)
		}
		in.LoadAfter = load()
		save()
		log.Printf("%s: round %d of %d done, load %s", base(bin), r+1, maxRuns, in.LoadAfter)
	}
	os.Remove(gs)
}

// timed runs c once: wall time from start to exit and CPU from wait4's
// rusage, peak RSS from GNU time. Not the peak RSS of wait4: Go starts a
// child with vfork (CLONE_VM), so the kernel carries this process's own
// high-water RSS into the child's at exec, which hides a smaller peak
// under this program's; GNU time forks, and its child starts from its
// small address space.
func timed(c *Cmd) (Sample, error) {
	rssFile := filepath.Join(*tmp, "scale-rss")
	args := append([]string{"-o", rssFile, "-f", "%M"}, c.Args...)
	cmd := exec.Command(*gnuTime, args...)
	if c.Stdin != "" {
		f, err := os.Open(c.Stdin)
		if err != nil {
			return Sample{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Stdout nil: /dev/null.
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return Sample{}, err
	}
	timer := time.AfterFunc(*timeout, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	wall := time.Since(t0)
	timer.Stop()
	if err != nil {
		return Sample{}, fmt.Errorf("%v: %s", err, lastLine(stderr.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage) // GNU time's, with its child's CPU
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	b, err := os.ReadFile(rssFile)
	if err != nil {
		return Sample{}, err
	}
	rss, err := strconv.ParseInt(lastLine(string(b)), 10, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %v", rssFile, err)
	}
	return Sample{Wall: wall.Seconds(), CPU: cpu.Seconds(), RSS: rss}, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Median of the samples: wall, CPU, RSS each on its own.
func Median(ss []Sample) Sample {
	if len(ss) == 0 {
		return Sample{}
	}
	med := func(get func(Sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = get(s)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Sample{
		Wall: med(func(s Sample) float64 { return s.Wall }),
		CPU:  med(func(s Sample) float64 { return s.CPU }),
		RSS:  int64(med(func(s Sample) float64 { return float64(s.RSS) })),
	}
}

func report(in *Input) {
	fmt.Printf("\n### %s, %s functions (%s)\n\n", in.Compiler, comma(int64(in.Functions)), filepath.Base(in.Path))
	fmt.Printf("%s MB file; %s MB read by a whole-binary pass (code, .symtab, .strtab, .debug_*); %s generated functions, %s found split by `splitdbg funcs`, %s procedures in `funcs -all`; load %s before, %s after.\n\n",
		mb(in.Size), mb(in.SectionsRead), comma(int64(in.Functions)), comma(int64(in.Split)), comma(int64(in.AllFuncs)), in.LoadBefore, in.LoadAfter)
	fmt.Println("| command | tool | runs | wall s | CPU s | peak RSS MB | µs CPU per function | RSS / bytes read | splitdbg / reference (wall, CPU, RSS) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	ref := map[string]Sample{}
	for _, c := range in.Cmds {
		if c.Tool != "splitdbg" {
			ref[c.Group] = Median(c.Samples)
		}
	}
	for _, c := range in.Cmds {
		if c.Err != "" {
			fmt.Printf("| %s | %s | failed: %s | | | | | | |\n", c.Name, c.Tool, c.Err)
			continue
		}
		m := Median(c.Samples)
		ratio := ""
		if r, ok := ref[c.Group]; ok && c.Tool == "splitdbg" && r.Wall > 0 {
			ratio = fmt.Sprintf("%.2f, %.2f, %.2f", m.Wall/r.Wall, m.CPU/r.CPU, float64(m.RSS)/float64(r.RSS))
		}
		fmt.Printf("| %s | %s | %d | %.3f | %.3f | %.0f | %.2f | %.2f | %s |\n", c.Name, c.Tool, len(c.Samples), m.Wall, m.CPU,
			float64(m.RSS)/1024, m.CPU*1e6/float64(in.Functions), float64(m.RSS)*1024/float64(in.SectionsRead), ratio)
	}
}

func mb(b int64) string { return fmt.Sprintf("%.1f", float64(b)/1e6) }

func comma(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
