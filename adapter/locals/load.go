package locals

import (
	"encoding/binary"
	"errors"
	"fmt"
	"go/constant"
	"go/token"
	"math"
	"reflect"
	"strconv"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/service/api"
)

// place is where a value lives: at addr in the process's memory, or, when
// buf is set, in buf (a value gathered from registers and constants, or
// one read from memory already; addr is then its address, fake or real).
type place struct {
	addr uint64
	buf  []byte
	gaps []gap // the bytes of buf no location describes
}

// A gap is n bytes at off of a value gathered from pieces that no
// location describes (a DW_OP_piece with an empty location, DWARF 5
// section 2.6.1.2): they were optimized out.
type gap struct{ off, n int64 }

// errOptimizedOut is the error of a value a gap overlaps; gdb prints it
// <optimized out>.
var errOptimizedOut = errors.New("optimized out")

// at returns the place off bytes into p.
func (p place) at(off int64) place {
	q := place{addr: p.addr + uint64(off)}
	if p.buf != nil {
		q.buf = []byte{}
		if off >= 0 && off <= int64(len(p.buf)) {
			q.buf = p.buf[off:]
		}
		for _, g := range p.gaps {
			if g.off+g.n > off {
				q.gaps = append(q.gaps, gap{g.off - off, g.n})
			}
		}
	}
	return q
}

// bytes returns the first n bytes of a value held in buf.
func (p place) bytes(n int64) ([]byte, error) {
	if n > int64(len(p.buf)) {
		return nil, fmt.Errorf("%d bytes beyond the value at %#x", n, p.addr)
	}
	for _, g := range p.gaps {
		if g.off < n && g.off+g.n > 0 {
			return nil, errOptimizedOut
		}
	}
	return p.buf[:n], nil
}

// loader builds api.Variable values as Delve's pkg/proc loads and
// service/api converts them (variables.go newVariable, loadValueInternal;
// conversions.go ConvertVar) for the types of C compile units.
type loader struct {
	mem Memory
	cfg api.LoadConfig
}

// maxBlock bounds what is read from memory in one piece to spare calls:
// a struct or an array of small elements (Delve: maxArrayStridePrefetch).
const maxBlock = 1024

func (l *loader) read(p place, n int64) ([]byte, error) {
	if n < 0 || n > maxValueSize {
		return nil, fmt.Errorf("value of %d bytes", n)
	}
	if p.buf != nil {
		return p.bytes(n)
	}
	b, err := l.mem(p.addr, int(n))
	if err == nil && len(b) < int(n) {
		err = fmt.Errorf("short read at %#x", p.addr)
	}
	return b, err
}

// cache reads n bytes at p once, so the parts of an aggregate cost no
// further reads; on failure the parts are read one by one.
func (l *loader) cache(p place, n int64) place {
	if p.buf != nil || n <= 0 || n > maxBlock {
		return p
	}
	if b, err := l.read(p, n); err == nil {
		p.buf = b
	}
	return p
}

// variable is a variable being built: the api form and what loading it
// needs (Delve's proc.Variable).
type variable struct {
	api.Variable
	p         place
	real      godwarf.Type
	elem      godwarf.Type // pointee or array element
	stride    int64
	loaded    bool
	unreadErr error
}

// unreadable returns a variable whose location could not be evaluated.
func (l *loader) unreadable(name string, typ godwarf.Type, err error) api.Variable {
	v := l.header(name, typ, place{})
	v.unreadErr = err
	return v.convert()
}

// load builds the variable name of type typ at p and loads its value.
func (l *loader) load(name string, typ godwarf.Type, p place, depth int) api.Variable {
	v := l.header(name, typ, p)
	l.value(v, depth)
	return v.convert()
}

// header is Delve's newVariable: kind and type, and for C pointers the
// pointer's value.
func (l *loader) header(name string, typ godwarf.Type, p place) *variable {
	v := &variable{p: p}
	v.Name, v.Addr = name, p.addr
	v.Type = api.PrettyTypeName(typ)
	v.real = resolveTypedef(typ)
	v.RealType = api.PrettyTypeName(v.real)
	switch t := v.real.(type) {
	case *godwarf.PtrType:
		v.Kind = reflect.Ptr
		v.elem = t.Type
		if _, void := t.Type.(*godwarf.VoidType); void {
			v.Kind = reflect.UnsafePointer
			break
		}
		v.Flags |= api.VariableCPtr
		if isChar(t.Type) {
			v.Kind = reflect.String
		}
		if v.Addr != 0 {
			v.Base, v.unreadErr = l.uint(p, ptrSize(t))
		}
	case *godwarf.StructType:
		v.Kind = reflect.Struct
	case *godwarf.ArrayType:
		v.Kind = reflect.Array
		v.Base, v.Len, v.Cap = v.Addr, t.Count, t.Count
		v.elem = t.Type
		v.stride = arrayStride(t)
	case *godwarf.ComplexType:
		switch t.ByteSize {
		case 8:
			v.Kind = reflect.Complex64
		case 16:
			v.Kind = reflect.Complex128
		}
	case *godwarf.IntType, *godwarf.CharType, *godwarf.EnumType:
		// Delve cannot read enumerations ("unknown type"): they read as
		// integers named by their enumerator.
		v.Kind = reflect.Int
	case *godwarf.UintType, *godwarf.UcharType:
		// Delve reads unsigned char as signed.
		v.Kind = reflect.Uint
	case *godwarf.FloatType:
		switch t.ByteSize {
		case 4:
			v.Kind = reflect.Float32
		case 8:
			v.Kind = reflect.Float64
		}
	case *godwarf.BoolType:
		v.Kind = reflect.Bool
	case *godwarf.FuncType:
		v.Kind = reflect.Func
	case *godwarf.VoidType, *godwarf.UnspecifiedType:
		v.Kind = reflect.Invalid
	default:
		v.unreadErr = fmt.Errorf("unknown type: %T", t)
	}
	return v
}

// isChar reports whether t is char or unsigned char, under qualifiers and
// typedefs: a pointer to it reads as a C string (Delve's isCgoCharPtr).
func isChar(t godwarf.Type) bool {
	switch resolveTypedef(t).(type) {
	case *godwarf.CharType, *godwarf.UcharType:
		return true
	}
	return false
}

// value is Delve's loadValueInternal for the kinds C types have.
func (l *loader) value(v *variable, depth int) {
	if v.unreadErr != nil || v.loaded || (v.Addr == 0 && v.Base == 0) {
		return
	}
	v.loaded = true
	switch v.Kind {
	case reflect.Ptr, reflect.UnsafePointer:
		l.pointer(v, depth)
	case reflect.String:
		s, done, err := l.cString(v.Base)
		if v.unreadErr = err; err == nil {
			v.Len = int64(len(s))
			if !done {
				v.Len++
			}
			v.Value = s
		}
	case reflect.Array:
		l.array(v, depth)
	case reflect.Struct:
		t := v.real.(*godwarf.StructType)
		v.p = l.cache(v.p, t.ByteSize)
		v.Len = int64(len(t.Field))
		if depth > l.cfg.MaxVariableRecurse {
			break
		}
		for _, f := range t.Field {
			if l.cfg.MaxStructFields >= 0 && len(v.Children) >= l.cfg.MaxStructFields {
				break
			}
			v.Children = append(v.Children, l.load(f.Name, f.Type, v.p.at(f.ByteOffset), depth+1))
		}
	case reflect.Complex64, reflect.Complex128:
		l.complex(v)
	case reflect.Int:
		size := v.real.Size()
		n, err := l.int(v.p, size)
		if v.unreadErr = err; err == nil {
			v.Value = strconv.FormatInt(n, 10)
			if e, ok := v.real.(*godwarf.EnumType); ok {
				v.Value = enumName(e, n)
			}
		}
	case reflect.Uint:
		n, err := l.uint(v.p, v.real.Size())
		if v.unreadErr = err; err == nil {
			v.Value = strconv.FormatUint(n, 10)
		}
	case reflect.Bool:
		b, err := l.read(v.p, 1)
		if v.unreadErr = err; err == nil {
			v.Value = strconv.FormatBool(b[0] != 0)
		}
	case reflect.Float32, reflect.Float64:
		f, err := l.float(v.p, v.real.Size())
		if v.unreadErr = err; err == nil {
			v.Value = formatFloat(f, v.Kind)
		}
	case reflect.Func:
		v.Base = v.Addr
	default:
		v.unreadErr = fmt.Errorf("unknown or unsupported kind: %q", v.Kind.String())
	}
}

// pointer is Delve's loadPtr and the pointer case of loadValueInternal.
func (l *loader) pointer(v *variable, depth int) {
	t := v.real.(*godwarf.PtrType)
	v.Len = 1
	ptr, err := l.uint(v.p, ptrSize(t))
	if err != nil {
		v.unreadErr = err
		child := l.header("", t.Type, place{})
		child.unreadErr = fmt.Errorf("parent pointer unreadable: %w", err)
		v.Children = []api.Variable{child.convert()}
		return
	}
	child := l.header("", t.Type, place{addr: ptr})
	v.Value = strconv.FormatUint(ptr, 10)
	switch {
	case !l.cfg.FollowPointers:
		child.OnlyAddr = true
	case isPointer(t.Type) && depth > l.cfg.MaxVariableRecurse:
		child.OnlyAddr = true
	case isPointer(t.Type):
		l.value(child, depth+1)
	default:
		l.value(child, depth)
	}
	v.Children = []api.Variable{child.convert()}
}

// ptrSize is the size of a pointer of type t: clang leaves
// DW_AT_byte_size out of pointer types.
func ptrSize(t *godwarf.PtrType) int64 {
	if t.ByteSize <= 0 {
		return 8
	}
	return t.ByteSize
}

// arrayStride is the distance between elements of t: DW_AT_byte_stride,
// else the element's size. (GCC gives arrays no DW_AT_byte_size, and
// Delve, which divides that by the count, reads every element at the
// array's address.)
func arrayStride(t *godwarf.ArrayType) int64 {
	if t.StrideBitSize > 0 {
		return t.StrideBitSize / 8
	}
	return typeSize(t.Type)
}

// typeSize is the size of a value of type t, pointers included.
func typeSize(t godwarf.Type) int64 {
	if p, ok := resolveTypedef(t).(*godwarf.PtrType); ok {
		return ptrSize(p)
	}
	return t.Size()
}

// valueSize is the size of a value of type t: typeSize, or for an array,
// to which GCC and clang give no DW_AT_byte_size, its elements'.
func valueSize(t godwarf.Type) int64 {
	if a, ok := resolveTypedef(t).(*godwarf.ArrayType); ok && a.Count >= 0 {
		return a.Count * arrayStride(a)
	}
	return typeSize(t)
}

func isPointer(t godwarf.Type) bool {
	_, ok := resolveTypedef(t).(*godwarf.PtrType)
	return ok
}

// array is Delve's loadArrayValues.
func (l *loader) array(v *variable, depth int) {
	if v.Len < 0 {
		v.unreadErr = errors.New("Negative array length")
		return
	}
	count := min(v.Len, int64(max(l.cfg.MaxArrayValues, 0)))
	if v.stride > 0 && count > 0 && v.stride <= maxBlock/count {
		v.p = l.cache(v.p, v.stride*count)
	}
	errs := 0
	for i := range count {
		c := l.header("", v.elem, v.p.at(i*v.stride))
		l.value(c, depth+1)
		if c.unreadErr != nil {
			errs++
		}
		v.Children = append(v.Children, c.convert())
		if errs > 3 { // Delve's maxErrCount
			break
		}
	}
}

// complex reads a complex value and gives it the two children Delve's
// ConvertVar gives one.
func (l *loader) complex(v *variable) {
	half := int64(4)
	bits := 32
	kind := reflect.Float32
	if v.Kind == reflect.Complex128 {
		half, bits, kind = 8, 64, reflect.Float64
	}
	re, err := l.float(v.p, half)
	if err == nil {
		var im float64
		im, err = l.float(v.p.at(half), half)
		if err == nil {
			c := constant.BinaryOp(constant.MakeFloat64(re), token.ADD, constant.MakeImag(constant.MakeFloat64(im)))
			v.Value = c.String()
			v.Children = []api.Variable{
				{Name: "real", Kind: kind, Value: strconv.FormatFloat(re, 'f', -1, bits)},
				{Name: "imaginary", Kind: kind, Value: strconv.FormatFloat(im, 'f', -1, bits)},
			}
			v.Len = 2
		}
	}
	v.unreadErr = err
}

// cString reads the NUL-terminated string at addr, at most MaxStringLen
// bytes, in reads that do not cross a 1 KiB boundary (Delve's
// readCStringValue); done is false when it was cut short.
func (l *loader) cString(addr uint64) (s string, done bool, err error) {
	limit := max(l.cfg.MaxStringLen, 0)
	var val []byte
	for len(val) < limit {
		cur := addr + uint64(len(val))
		n := min(limit-len(val), int(1024-cur%1024))
		b, err := l.read(place{addr: cur}, int64(n))
		if err != nil {
			return "", false, fmt.Errorf("could not read string at %#x due to %w", addr, err)
		}
		for i, c := range b {
			if c == 0 {
				return string(append(val, b[:i]...)), true, nil
			}
		}
		val = append(val, b...)
	}
	return string(val), false, nil
}

func (l *loader) int(p place, size int64) (int64, error) {
	b, err := l.read(p, size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return int64(int8(b[0])), nil
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	case 8:
		return int64(binary.LittleEndian.Uint64(b)), nil
	}
	return 0, fmt.Errorf("integer of %d bytes", size)
}

func (l *loader) uint(p place, size int64) (uint64, error) {
	b, err := l.read(p, size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case 8:
		return binary.LittleEndian.Uint64(b), nil
	}
	return 0, fmt.Errorf("unsigned integer of %d bytes", size)
}

func (l *loader) float(p place, size int64) (float64, error) {
	b, err := l.read(p, size)
	if err != nil {
		return 0, err
	}
	switch size {
	case 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
	case 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	}
	return 0, fmt.Errorf("floating-point number of %d bytes", size)
}

// formatFloat formats as Delve's ConvertVar does.
func formatFloat(f float64, k reflect.Kind) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	bits := 64
	if k == reflect.Float32 {
		bits = 32
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// enumName formats n as its enumerator, as Delve formats Go constants
// ("NAME (n)"); n alone when no enumerator has that value.
func enumName(t *godwarf.EnumType, n int64) string {
	for _, e := range t.Val {
		if e.Val == n {
			return fmt.Sprintf("%s (%d)", e.Name, n)
		}
	}
	return strconv.FormatInt(n, 10)
}

// convert finishes the api form.
func (v *variable) convert() api.Variable {
	if v.unreadErr != nil {
		v.Unreadable = v.unreadErr.Error()
	}
	return v.Variable
}

// maxTypedefs bounds the typedefs and qualifiers resolveTypedef follows;
// compilers nest a handful.
const maxTypedefs = 64

// resolveTypedef is godwarf.ResolveTypedef, bounded: it strips typedefs
// and qualifiers (const, volatile) down to the type they name. On
// malformed DWARF whose typedef names itself, directly or through
// others, Delve's loops forever; this stops after maxTypedefs and
// returns the typedef, which no value kind matches (an unreadable
// variable, not a hang).
func resolveTypedef(t godwarf.Type) godwarf.Type {
	for range maxTypedefs {
		switch tt := t.(type) {
		case *godwarf.TypedefType:
			t = tt.Type
		case *godwarf.QualType:
			t = tt.Type
		default:
			return t
		}
	}
	return t
}
