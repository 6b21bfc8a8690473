package locals

import (
	"go/constant"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/service/api"
)

// TestTypedefCycle: a variable whose typedef names itself (malformed
// DWARF) loads as unreadable, and expressions on it fail, instead of
// looping in godwarf.ResolveTypedef forever.
func TestTypedefCycle(t *testing.T) {
	a := &godwarf.TypedefType{CommonType: godwarf.CommonType{Name: "A", ByteSize: -1}}
	b := &godwarf.QualType{CommonType: godwarf.CommonType{ByteSize: -1}, Qual: "const", Type: a}
	a.Type = b
	l := &loader{mem: func(addr uint64, n int) ([]byte, error) { return make([]byte, n), nil }, cfg: api.LoadConfig{MaxVariableRecurse: 1}}
	v := l.load("x", a, place{addr: 0x1000}, 0)
	if v.Unreadable == "" {
		t.Errorf("x of a typedef naming itself: %+v; want unreadable", v)
	}
	if r := resolveTypedef(a); r != a && r != b {
		t.Errorf("resolveTypedef of a cycle = %v; want a typedef or qualifier of it", r)
	}
	if _, err := encode(a, constant.MakeInt64(1)); err == nil {
		t.Error("encode to a typedef naming itself: no error")
	}
}
