package linetable

import "debug/dwarf"

// typeSize is the byte size of the type DIE at off, computed as LLVM's
// DWARFDie::getTypeSize computes it for llvm-symbolizer's DATA answers:
// DW_AT_byte_size if present; a pointer's or reference's address size;
// through typedefs and qualifiers to the type they name; an array's
// element size times each subrange's DW_AT_count or
// upper_bound - lower_bound + 1 (DWARF 5, section 5.13). It reports
// false for a size it cannot compute, and for a chain of types that
// comes back to a DIE it already visited (malformed DWARF: debug/dwarf's
// own Type.Size recurses without end on a typedef naming itself).
func typeSize(r *dwarf.Reader, off dwarf.Offset, addrSize int) (int64, bool) {
	var seen []dwarf.Offset
	return typeSizeFrom(r, off, addrSize, &seen)
}

// maxTypeChain bounds how many type DIEs one size may visit: real
// chains (qualifiers, typedefs, nested arrays) are a handful long.
const maxTypeChain = 64

func typeSizeFrom(r *dwarf.Reader, off dwarf.Offset, addrSize int, seen *[]dwarf.Offset) (int64, bool) {
	if len(*seen) >= maxTypeChain {
		return 0, false
	}
	for _, o := range *seen {
		if o == off {
			return 0, false
		}
	}
	*seen = append(*seen, off)
	r.Seek(off)
	e, err := r.Next()
	if err != nil || e == nil {
		return 0, false
	}
	if n, ok := e.Val(dwarf.AttrByteSize).(int64); ok {
		return n, n >= 0
	}
	next, hasNext := e.Val(dwarf.AttrType).(dwarf.Offset)
	switch e.Tag {
	case dwarf.TagPointerType, dwarf.TagReferenceType, dwarf.TagRvalueReferenceType:
		return int64(addrSize), true
	case dwarf.TagPtrToMemberType:
		if hasNext {
			r.Seek(next)
			if b, err := r.Next(); err == nil && b != nil && b.Tag == dwarf.TagSubroutineType {
				return 2 * int64(addrSize), true
			}
		}
		return int64(addrSize), true
	case dwarf.TagArrayType:
		if !hasNext {
			return 0, false
		}
		bounds, ok := subranges(r, e)
		if !ok {
			return 0, false
		}
		size, ok := typeSizeFrom(r, next, addrSize, seen)
		if !ok {
			return 0, false
		}
		for _, n := range bounds {
			if n < 0 || (n > 0 && size > (1<<62)/n) {
				return 0, false
			}
			size *= n
		}
		return size, true
	}
	if !hasNext {
		return 0, false
	}
	return typeSizeFrom(r, next, addrSize, seen)
}

// subranges returns the element count of each DW_TAG_subrange_type
// child of the array DIE e, which r has just read.
func subranges(r *dwarf.Reader, e *dwarf.Entry) ([]int64, bool) {
	var counts []int64
	if !e.Children {
		return nil, true
	}
	for depth := 1; depth > 0; {
		c, err := r.Next()
		if err != nil || c == nil {
			return nil, false
		}
		switch {
		case c.Tag == 0:
			depth--
			continue
		case c.Tag == dwarf.TagSubrangeType:
			n := int64(1)
			if k, ok := c.Val(dwarf.AttrCount).(int64); ok {
				n = k
			} else if hi, ok := c.Val(dwarf.AttrUpperBound).(int64); ok {
				lo, _ := c.Val(dwarf.AttrLowerBound).(int64)
				n = hi - lo + 1
			}
			counts = append(counts, n)
		}
		if c.Children {
			r.SkipChildren()
		}
	}
	return counts, true
}
