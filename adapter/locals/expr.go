package locals

import (
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/dwarf/op"
	"github.com/go-delve/delve/service/api"
)

// ErrNotLocal reports an expression that names nothing of the frame's
// program: a register, a call; Delve can evaluate those.
var ErrNotLocal = errors.New("not an expression on a variable of the program")

// Eval evaluates expr in fr: a variable — a local of the frame, a static
// of its function, a static of its compilation unit, a global of any —
// followed by any of .field, ->field, [index] and *, with parentheses,
// &, casts to the program's types and sizeof; or arithmetic (on pointers
// as C's), comparisons and logic on such values of scalar types and
// constants. Delve's expression language is Go's, with p.field for C's
// p->field; both are accepted here, and C's casts and sizeof (cSyntax).
// An expression that names no variable fails with ErrNotLocal.
func (r *Reader) Eval(fr *Frame, expr string, cfg api.LoadConfig) (*api.Variable, error) {
	goExpr, casts, err := cSyntax(expr, func(name string) bool { return r.isTypedef(name) && !r.isLocal(fr, name) })
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotLocal, err)
	}
	x, err := parser.ParseExpr(goExpr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotLocal, err)
	}
	regs, err := r.frameRegs(fr)
	if err != nil {
		return nil, err
	}
	l := &loader{mem: fr.Mem, cfg: cfg}
	ev := &evaluator{r: r, fr: fr, regs: regs, l: l, casts: casts}
	if u, ok := x.(*ast.UnaryExpr); ok && u.Op != token.AND || isBinary(x) && !ev.isPointerArith(x) { // & gives a typed address
		c, err := ev.constant(x)
		if err != nil {
			return nil, err
		}
		return constantVariable(expr, c), nil
	}
	typ, p, err := ev.eval(x)
	if err != nil {
		return nil, err
	}
	v := l.load(expr, typ, p, 0)
	return &v, nil
}

// pointerTo is a pointer to a value of type typ at addr.
func pointerTo(typ godwarf.Type, addr uint64) (godwarf.Type, place, error) {
	return &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8}, Type: typ}, place{addr: FakeAddress, buf: binary.LittleEndian.AppendUint64(nil, addr)}, nil
}

// isLocal reports whether name is a variable visible in fr, which hides
// a typedef of that name (C11 section 6.2.1): "(name) - 1" is then a
// subtraction, not a cast.
func (r *Reader) isLocal(fr *Frame, name string) bool {
	entries, _ := r.visible(fr)
	for _, e := range entries {
		if n, _ := e.Val(dwarf.AttrName).(string); n == name {
			return true
		}
	}
	return false
}

func isBinary(x ast.Expr) bool {
	_, ok := x.(*ast.BinaryExpr)
	return ok
}

// evaluator evaluates expressions in a frame whose registers, with the
// frame base, are regs.
type evaluator struct {
	r     *Reader
	fr    *Frame
	regs  *op.DwarfRegisters
	l     *loader
	casts []cast // the casts of the expression, by index
}

// constant evaluates a scalar expression to its value.
func (ev *evaluator) constant(x ast.Expr) (constant.Value, error) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return ev.constant(x.X)
	case *ast.BasicLit:
		c := constant.MakeFromLiteral(x.Value, x.Kind, 0)
		if c.Kind() == constant.Unknown {
			return nil, fmt.Errorf("literal %s", x.Value)
		}
		return c, nil
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			break // an address: the typed value below
		}
		if x.Op != token.ADD && x.Op != token.SUB && x.Op != token.XOR && x.Op != token.NOT {
			return nil, fmt.Errorf("operator %s", x.Op)
		}
		c, err := ev.constant(x.X)
		if err != nil {
			return nil, err
		}
		num := c.Kind() == constant.Int || c.Kind() == constant.Float
		if (x.Op == token.NOT) != (c.Kind() == constant.Bool) || x.Op == token.XOR && c.Kind() != constant.Int || (x.Op == token.ADD || x.Op == token.SUB) && !num {
			return nil, fmt.Errorf("operator %s on %s", x.Op, c)
		}
		return constant.UnaryOp(x.Op, c, 0), nil
	case *ast.BinaryExpr:
		if _, _, ok, err := ev.pointerArith(x); ok || err != nil {
			if err != nil {
				return nil, err
			}
			break // a pointer, or elements between two: the typed value below
		}
		a, err := ev.constant(x.X)
		if err != nil {
			return nil, err
		}
		b, err := ev.constant(x.Y)
		if err != nil {
			return nil, err
		}
		return binaryOp(x.Op, a, b)
	}
	if id, ok := x.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
		return constant.MakeBool(id.Name == "true"), nil
	}
	typ, p, err := ev.eval(x)
	if err != nil {
		return nil, err
	}
	v := ev.l.load("", typ, p, 0)
	if v.Unreadable != "" {
		return nil, fmt.Errorf("%s: %s", exprString(x), v.Unreadable)
	}
	val := v.Value
	if name, n, ok := strings.Cut(val, " ("); ok && name != "" { // an enumerator
		val = strings.TrimSuffix(n, ")")
	}
	var c constant.Value
	switch v.Kind {
	case reflect.Int, reflect.Uint:
		c = constant.MakeFromLiteral(val, token.INT, 0)
	case reflect.Float32, reflect.Float64:
		c = constant.MakeFromLiteral(val, token.FLOAT, 0)
	case reflect.Bool:
		c = constant.MakeBool(val == "true")
	case reflect.Ptr, reflect.UnsafePointer:
		c = constant.MakeFromLiteral(val, token.INT, 0)
	case reflect.String: // char *
		c = constant.MakeUint64(v.Base)
	case reflect.Array: // decays to a pointer to its first element
		if p.buf != nil {
			return nil, fmt.Errorf("%s is not in memory", exprString(x))
		}
		c = constant.MakeUint64(p.addr)
	default:
		return nil, fmt.Errorf("%s is not a number (%s)", exprString(x), v.Type)
	}
	if c.Kind() == constant.Unknown {
		return nil, fmt.Errorf("%s = %s is not a number", exprString(x), v.Value)
	}
	return c, nil
}

// binaryOp applies op as Go would to untyped constants, but for integer
// division, which truncates as in C.
func binaryOp(op token.Token, a, b constant.Value) (constant.Value, error) {
	if !operandsFit(op, a.Kind(), b.Kind()) {
		return nil, fmt.Errorf("invalid operation: %s %s %s", a, op, b)
	}
	switch op {
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		return constant.MakeBool(constant.Compare(a, op, b)), nil
	case token.SHL, token.SHR:
		s, ok := constant.Uint64Val(b)
		if !ok || s > 64 {
			return nil, fmt.Errorf("shift count %s", b)
		}
		return constant.Shift(a, op, uint(s)), nil
	case token.QUO, token.REM:
		if constant.Sign(b) == 0 {
			return nil, errors.New("division by zero")
		}
		if a.Kind() == constant.Int && b.Kind() == constant.Int && op == token.QUO {
			op = token.QUO_ASSIGN // integer division (go/constant's spelling)
		}
	}
	return constant.BinaryOp(a, op, b), nil
}

// operandsFit reports whether Go defines op on untyped constants of kinds
// a and b (The Go Programming Language Specification, "Operators"):
// numbers of any kind mix, other kinds only with their own. go/constant
// panics on many of the operations Go does not define.
func operandsFit(op token.Token, a, b constant.Kind) bool {
	num := func(k constant.Kind) bool { return k == constant.Int || k == constant.Float || k == constant.Complex }
	if a != b && !(num(a) && num(b)) {
		return false
	}
	switch op {
	case token.EQL, token.NEQ:
		return true
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
		return a != constant.Complex && b != constant.Complex && a != constant.Bool
	case token.ADD:
		return num(a) || a == constant.String
	case token.SUB, token.MUL, token.QUO:
		return num(a)
	case token.REM, token.AND, token.OR, token.XOR, token.AND_NOT, token.SHL, token.SHR:
		return a == constant.Int && b == constant.Int
	case token.LAND, token.LOR:
		return a == constant.Bool
	}
	return false
}

// constantVariable is the api form of a computed value.
func constantVariable(name string, c constant.Value) *api.Variable {
	v := &api.Variable{Name: name, Value: c.ExactString(), Flags: api.VariableConstant}
	switch c.Kind() {
	case constant.Int:
		v.Kind = reflect.Int
	case constant.Float:
		v.Kind = reflect.Float64
		f, _ := constant.Float64Val(c)
		v.Value = formatFloat(f, reflect.Float64)
	case constant.Bool:
		v.Kind = reflect.Bool
	}
	return v
}

// eval returns the type and place of the value x denotes.
func (ev *evaluator) eval(x ast.Expr) (godwarf.Type, place, error) {
	switch x := x.(type) {
	case *ast.ParenExpr:
		return ev.eval(x.X)
	case *ast.Ident:
		name := strings.TrimPrefix(x.Name, keywordPrefix)
		entries, err := ev.r.visible(ev.fr)
		if err != nil {
			return nil, place{}, err
		}
		best := -1
		for i, e := range entries {
			if n, _ := e.Val(dwarf.AttrName).(string); n == name && (best < 0 || e.Depth >= entries[best].Depth) {
				best = i
			}
		}
		var e *godwarf.Tree
		if best >= 0 {
			e = entries[best].Tree
		} else if e, err = ev.r.global(ev.fr.Subprogram, name); err != nil {
			return nil, place{}, err
		}
		if e == nil {
			return nil, place{}, fmt.Errorf("%w: %s", ErrNotLocal, name)
		}
		typ, p, _, err := ev.r.typedPlace(ev.fr, ev.regs, e)
		if err != nil {
			return nil, place{}, fmt.Errorf("%s: %w", name, err)
		}
		return typ, p, nil
	case *ast.StarExpr:
		typ, p, err := ev.eval(x.X)
		if err != nil {
			return nil, place{}, err
		}
		return ev.l.deref(typ, p)
	case *ast.SelectorExpr:
		typ, p, err := ev.eval(x.X)
		if err != nil {
			return nil, place{}, err
		}
		if _, ok := resolveTypedef(typ).(*godwarf.PtrType); ok {
			if typ, p, err = ev.l.deref(typ, p); err != nil {
				return nil, place{}, err
			}
		}
		st, ok := resolveTypedef(typ).(*godwarf.StructType)
		if !ok {
			return nil, place{}, fmt.Errorf("%s is not a struct (%s)", exprString(x.X), typ)
		}
		for _, f := range st.Field {
			if f.Name == strings.TrimPrefix(x.Sel.Name, keywordPrefix) {
				return f.Type, p.at(f.ByteOffset), nil
			}
		}
		return nil, place{}, fmt.Errorf("%s has no field %s", typ, x.Sel.Name)
	case *ast.IndexExpr:
		typ, p, err := ev.eval(x.X)
		if err != nil {
			return nil, place{}, err
		}
		i, err := ev.integer(x.Index)
		if err != nil {
			return nil, place{}, fmt.Errorf("index: %w", err)
		}
		switch t := resolveTypedef(typ).(type) {
		case *godwarf.ArrayType:
			if i < 0 || i >= t.Count {
				return nil, place{}, fmt.Errorf("index %d out of bounds [0:%d]", i, t.Count)
			}
			return t.Type, p.at(i * arrayStride(t)), nil
		case *godwarf.PtrType:
			elem, q, err := ev.l.deref(typ, p)
			if err != nil {
				return nil, place{}, err
			}
			return elem, place{addr: q.addr + uint64(i*typeSize(elem))}, nil
		}
		return nil, place{}, fmt.Errorf("%s cannot be indexed (%s)", exprString(x.X), typ)
	case *ast.BinaryExpr:
		typ, p, ok, err := ev.pointerArith(x)
		if ok {
			return typ, p, err
		}
	case *ast.UnaryExpr:
		if x.Op != token.AND {
			break
		}
		typ, p, err := ev.eval(x.X)
		if err != nil {
			return nil, place{}, err
		}
		if p.buf != nil {
			return nil, place{}, fmt.Errorf("%s is in registers: it has no address", exprString(x.X))
		}
		return pointerTo(typ, p.addr)
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, castPrefix) && len(x.Args) == 1 {
			return ev.cast(id.Name, x.Args[0])
		}
		if id, ok := x.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, sizeofPrefix) {
			return ev.sizeof(id.Name, x.Args)
		}
	}
	return nil, place{}, fmt.Errorf("%w: %s", ErrNotLocal, exprString(x))
}

// deref returns the value a pointer at p points to.
func (l *loader) deref(typ godwarf.Type, p place) (godwarf.Type, place, error) {
	t, ok := resolveTypedef(typ).(*godwarf.PtrType)
	if !ok {
		return nil, place{}, fmt.Errorf("%s is not a pointer", typ)
	}
	ptr, err := l.uint(p, ptrSize(t))
	if err != nil {
		return nil, place{}, err
	}
	if ptr == 0 {
		return nil, place{}, errors.New("nil pointer dereference")
	}
	return t.Type, place{addr: ptr}, nil
}

func exprString(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.BasicLit:
		return x.Value
	}
	return fmt.Sprintf("%T", x)
}

// cast evaluates the placeholder call fn(operand) cSyntax made of a C
// cast: operand's value converted as C converts scalars (C11 section
// 6.3.1): integers truncated to the type's size, floating values to
// integers toward zero, anything to _Bool as != 0, pointers and integers
// into each other; arrays decay to their address.
func (ev *evaluator) cast(fn string, operand ast.Expr) (godwarf.Type, place, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(fn, castPrefix))
	if err != nil || n < 0 || n >= len(ev.casts) {
		return nil, place{}, fmt.Errorf("%w: %s", ErrNotLocal, fn)
	}
	typ, err := ev.castType(ev.casts[n])
	if err != nil {
		return nil, place{}, err
	}
	c, err := ev.constant(operand)
	if err != nil {
		return nil, place{}, err
	}
	buf, err := encode(typ, c)
	if err != nil {
		return nil, place{}, err
	}
	return typ, place{addr: FakeAddress, buf: buf}, nil
}

// castType returns the type c names, as the unit of the frame's function
// declares it.
func (ev *evaluator) castType(c cast) (godwarf.Type, error) {
	var t godwarf.Type
	if c.name == "void" {
		if c.ptrs == 0 {
			return nil, errors.New("cast to void: no value")
		}
		t = &godwarf.VoidType{CommonType: godwarf.CommonType{Name: "void"}}
	} else {
		var err error
		if t, err = ev.r.namedType(ev.fr.Subprogram, c.name); err != nil {
			return nil, err
		}
		if t == nil {
			return nil, fmt.Errorf("no type %s in the program", c.name)
		}
	}
	for range c.ptrs {
		t = &godwarf.PtrType{CommonType: godwarf.CommonType{ByteSize: 8}, Type: t}
	}
	return t, nil
}

// encode returns the bytes of c as a value of the scalar type typ.
func encode(typ godwarf.Type, c constant.Value) ([]byte, error) {
	size := typeSize(typ)
	switch resolveTypedef(typ).(type) {
	case *godwarf.FloatType:
		f, _ := constant.Float64Val(constant.ToFloat(c))
		switch size {
		case 4:
			return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		case 8:
			return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)), nil
		}
	case *godwarf.PtrType, *godwarf.IntType, *godwarf.UintType, *godwarf.CharType, *godwarf.UcharType, *godwarf.EnumType, *godwarf.BoolType:
		switch c.Kind() {
		case constant.Float:
			f, _ := constant.Float64Val(c)
			if math.IsNaN(f) || math.Abs(f) >= 1<<63 {
				return nil, fmt.Errorf("%s does not fit in %s", c, typ)
			}
			c = constant.MakeInt64(int64(f))
		case constant.Bool:
			if constant.BoolVal(c) {
				c = constant.MakeInt64(1)
			} else {
				c = constant.MakeInt64(0)
			}
		}
		if c.Kind() != constant.Int {
			return nil, fmt.Errorf("cannot convert %s to %s", c, typ)
		}
		var u uint64
		if i, ok := constant.Int64Val(c); ok {
			u = uint64(i)
		} else if u, ok = constant.Uint64Val(c); !ok {
			return nil, fmt.Errorf("%s does not fit in 64 bits", c)
		}
		if _, ok := resolveTypedef(typ).(*godwarf.BoolType); ok && u != 0 {
			u = 1
		}
		if size == 1 || size == 2 || size == 4 || size == 8 {
			return binary.LittleEndian.AppendUint64(nil, u)[:size], nil
		}
	}
	return nil, fmt.Errorf("cast to %s: not a scalar type of 1, 2, 4 or 8 bytes", typ)
}

// isPointerArith reports whether x is + or - on a pointer (pointerArith).
func (ev *evaluator) isPointerArith(x ast.Expr) bool {
	b, ok := x.(*ast.BinaryExpr)
	if !ok {
		return false
	}
	_, _, ok, err := ev.pointerArith(b)
	return ok || err != nil
}

// pointerArith evaluates x as C does when it adds an integer to a pointer
// or an array (which decays to a pointer to its first element), or
// subtracts an integer or a pointer from one (C11 section 6.5.6): the
// pointer moves by whole elements, and the difference of two pointers
// counts the elements between them (a long). ok is false when x is no
// such operation; void * moves by bytes, as in GNU C.
func (ev *evaluator) pointerArith(x *ast.BinaryExpr) (typ godwarf.Type, p place, ok bool, err error) {
	if x.Op != token.ADD && x.Op != token.SUB {
		return nil, place{}, false, nil
	}
	elem, addr, isPtr := ev.pointer(x.X)
	if isPtr && x.Op == token.SUB {
		if e2, addr2, ok := ev.pointer(x.Y); ok {
			size := elemSize(elem)
			if elemSize(e2) != size {
				return nil, place{}, true, fmt.Errorf("subtraction of pointers to %s and %s", elem, e2)
			}
			long := builtinType("long")
			buf, err := encode(long, constant.MakeInt64((int64(addr)-int64(addr2))/size))
			return long, place{addr: FakeAddress, buf: buf}, true, err
		}
	}
	n := x.Y // the integer
	if !isPtr && x.Op == token.ADD {
		elem, addr, isPtr = ev.pointer(x.Y)
		n = x.X
	}
	if !isPtr {
		return nil, place{}, false, nil
	}
	k, err := ev.integer(n)
	if err != nil {
		return nil, place{}, true, err
	}
	if x.Op == token.SUB {
		k = -k
	}
	typ, p, err = pointerTo(elem, addr+uint64(k*elemSize(elem)))
	return typ, p, true, err
}

// elemSize is the distance between elements of type t a pointer moves
// by: 1 for void.
func elemSize(t godwarf.Type) int64 {
	if n := typeSize(t); n > 0 {
		return n
	}
	return 1
}

// pointer returns the element type and address of x when x is a pointer,
// or an array in memory.
func (ev *evaluator) pointer(x ast.Expr) (elem godwarf.Type, addr uint64, ok bool) {
	switch x.(type) {
	case *ast.BasicLit:
		return nil, 0, false // spare the lookup
	}
	typ, p, err := ev.eval(x)
	if err != nil {
		return nil, 0, false
	}
	switch t := resolveTypedef(typ).(type) {
	case *godwarf.PtrType:
		a, err := ev.l.uint(p, ptrSize(t))
		return t.Type, a, err == nil
	case *godwarf.ArrayType:
		return t.Type, p.addr, p.buf == nil
	}
	return nil, 0, false
}

// integer evaluates x to an integer.
func (ev *evaluator) integer(x ast.Expr) (int64, error) {
	c, err := ev.constant(x)
	if err != nil {
		return 0, err
	}
	if c.Kind() != constant.Int {
		return 0, fmt.Errorf("%s is not an integer", c)
	}
	i, exact := constant.Int64Val(c)
	if !exact {
		return 0, fmt.Errorf("%s does not fit in 64 bits", c)
	}
	return i, nil
}

// sizeof evaluates the placeholder call cSyntax made of sizeof: the size
// of a type (fn names it among the casts) or of the type of an operand
// (args), an unsigned long (C11 section 6.5.3.4).
func (ev *evaluator) sizeof(fn string, args []ast.Expr) (godwarf.Type, place, error) {
	var typ godwarf.Type
	switch n, err := strconv.Atoi(strings.TrimPrefix(fn, sizeofPrefix)); {
	case len(args) == 1 && fn == sizeofPrefix:
		if typ, _, err = ev.eval(args[0]); err != nil {
			return nil, place{}, err
		}
	case err == nil && n >= 0 && n < len(ev.casts) && len(args) == 0:
		if typ, err = ev.castType(ev.casts[n]); err != nil {
			return nil, place{}, err
		}
	default:
		return nil, place{}, fmt.Errorf("%w: %s", ErrNotLocal, fn)
	}
	size := valueSize(typ)
	if size < 0 {
		return nil, place{}, fmt.Errorf("the size of %s is unknown", typ)
	}
	ulong := builtinType("long unsigned")
	buf, err := encode(ulong, constant.MakeInt64(size))
	return ulong, place{addr: FakeAddress, buf: buf}, err
}
