package splitinfo

import "strings"

// fragmentName recognizes the symbol naming conventions of moved code and
// returns the name of the symbol the fragment belongs to:
//
//	foo.cold, foo.cold.N       GCC hot/cold partitioning, clang machine
//	                           function splitting, BOLT (Cold)
//	foo.warm, foo.warm.N       (Warm)
//	foo.part.N                 GCC partial inlining (Part)
//	foo.__part.N               clang basic-block sections (Part)
//
// Only the outermost suffix is removed: foo.cold.cold.0 belongs to
// foo.cold, which in turn belongs to foo.
func fragmentName(name string) (parent string, kind Kind, ok bool) {
	base, last, found := cutLast(name)
	if !found || base == "" {
		return "", 0, false
	}
	switch last {
	case "cold":
		return base, Cold, true
	case "warm":
		return base, Warm, true
	}
	if !isDigits(last) {
		return "", 0, false
	}
	// foo.cold.N, foo.warm.N, foo.part.N, foo.__part.N
	b, mid, found := cutLast(base)
	if !found || b == "" {
		return "", 0, false
	}
	switch mid {
	case "cold":
		return b, Cold, true
	case "warm":
		return b, Warm, true
	case "part", "__part":
		return b, Part, true
	}
	return "", 0, false
}

func cutLast(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
