package precheck

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// cfiSection describes a call frame information section being checked.
type cfiSection struct {
	name     string
	data     []byte
	eh       bool // .eh_frame (LSB), else .debug_frame (DWARF)
	ptrSize  int  // the file's address size
	bo       binary.ByteOrder
	cies     map[int64]*cie // by section offset, checked once
	checking map[int64]bool
}

// cie is what an FDE needs of its CIE.
type cie struct {
	fdeEnc     byte // DW_EH_PE encoding of FDE addresses (.eh_frame)
	addrSize   int  // .debug_frame version 4
	segSize    int
	augData    bool // 'z': FDEs have augmentation data
	remembered int  // states the CIE's instructions leave remembered
}

// DW_EH_PE pointer encodings (LSB, "DWARF Extensions": "DWARF Exception
// Header Encoding").
const (
	peAbsptr  = 0x00
	peULEB128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSLEB128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	peOmit    = 0xff
)

// CheckCFI checks every CIE and FDE of a .eh_frame (eh true; LSB 5.0,
// "Exception Frames") or .debug_frame (DWARF 5, section 6.4.1) section:
// lengths that fit, each FDE's CIE, pointer encodings, augmentations and
// the operands of every call frame instruction (DWARF 5, section 6.4.2).
// ptrSize is the file's address size. The error is a *cursor.DecodeError
// naming the section and the offset of the first fault.
func CheckCFI(name string, data []byte, eh bool, ptrSize int, bo binary.ByteOrder) error {
	_, _, err := checkCFI(name, data, eh, ptrSize, bo)
	return err
}

// checkCFI is CheckCFI, also counting the CIEs and FDEs it checked.
func checkCFI(name string, data []byte, eh bool, ptrSize int, bo binary.ByteOrder) (cies, fdes int, err error) {
	s := &cfiSection{name: name, data: data, eh: eh, ptrSize: ptrSize, bo: bo,
		cies: make(map[int64]*cie), checking: make(map[int64]bool)}
	c := cursor.New(name, 0, data)
	c.SetByteOrder(bo)
	for !c.Done() {
		start := c.Offset()
		body, dwarf64, ok := s.entry(c)
		if !ok {
			if eh && c.Err() == nil {
				break // the zero terminator
			}
			continue
		}
		idAt := body.Offset()
		id := s.id(&body, dwarf64)
		if body.Err() != nil {
			return cies, fdes, body.Err()
		}
		if s.isCIE(id, dwarf64) {
			if _, err := s.cie(start); err != nil {
				return cies, fdes, err
			}
			cies++
			continue
		}
		if err := s.fde(&body, idAt, id); err != nil {
			return cies, fdes, err
		}
		fdes++
	}
	return cies, fdes, c.Err()
}

// entry reads an entry's length and returns a cursor over the rest of
// it; ok is false at .eh_frame's zero terminator or on error.
func (s *cfiSection) entry(c *cursor.Cursor) (body cursor.Cursor, dwarf64, ok bool) {
	at := c.Offset()
	n := uint64(c.U32())
	if n == 0xffffffff {
		dwarf64 = true
		n = c.U64()
	} else if n >= 0xfffffff0 && c.Err() == nil {
		c.FailAt(at, cursor.ErrCorrupt, "reserved length %#x", n)
	}
	if c.Err() != nil {
		return body, false, false
	}
	if n == 0 {
		if !s.eh {
			c.FailAt(at, cursor.ErrCorrupt, "entry of length 0")
		}
		return body, false, false
	}
	if n > uint64(c.Len()) {
		c.FailAt(at, cursor.ErrTruncated, "entry of %d bytes, %d left in the section", n, c.Len())
		return body, false, false
	}
	return c.Sub(int(n)), dwarf64, true
}

// id reads a CIE id or an FDE's CIE pointer: 4 bytes in .eh_frame, the
// offset size in .debug_frame.
func (s *cfiSection) id(c *cursor.Cursor, dwarf64 bool) uint64 {
	if dwarf64 && !s.eh {
		return c.U64()
	}
	return uint64(c.U32())
}

func (s *cfiSection) isCIE(id uint64, dwarf64 bool) bool {
	switch {
	case s.eh:
		return id == 0
	case dwarf64:
		return id == ^uint64(0)
	}
	return id == 0xffffffff
}

// cie checks the CIE at offset off, once.
func (s *cfiSection) cie(off int64) (*cie, error) {
	if e, ok := s.cies[off]; ok {
		return e, nil
	}
	if s.checking[off] {
		return nil, cursor.Errorf(s.name, off, cursor.ErrCorrupt, "CIE refers to itself")
	}
	s.checking[off] = true
	c := cursor.New(s.name, 0, s.data)
	c.SetByteOrder(s.bo)
	c.Skip(int(off))
	body, dwarf64, ok := s.entry(c)
	if !ok {
		if c.Err() != nil {
			return nil, c.Err()
		}
		return nil, cursor.Errorf(s.name, off, cursor.ErrCorrupt, "CIE pointer to the terminator")
	}
	if id := s.id(&body, dwarf64); body.Err() == nil && !s.isCIE(id, dwarf64) {
		return nil, cursor.Errorf(s.name, off, cursor.ErrCorrupt, "CIE pointer to an FDE")
	}
	e := &cie{fdeEnc: peAbsptr, addrSize: s.ptrSize}
	var err error
	verAt := body.Offset()
	version := body.U8()
	switch {
	case body.Err() != nil:
	case s.eh && version != 1 && version != 3, !s.eh && version != 1 && version != 3 && version != 4:
		return nil, cursor.Errorf(s.name, verAt, cursor.ErrUnsupportedVersion, "CIE version %d", version)
	}
	augAt := body.Offset()
	aug := body.CString()
	if version >= 4 {
		e.addrSize, e.segSize = int(body.U8()), int(body.U8())
		if body.Err() == nil && e.addrSize != 2 && e.addrSize != 4 && e.addrSize != 8 || e.segSize > 8 {
			return nil, cursor.Errorf(s.name, augAt, cursor.ErrCorrupt, "address size %d, segment selector size %d", e.addrSize, e.segSize)
		}
	}
	body.ULEB128() // code_alignment_factor
	body.SLEB128() // data_alignment_factor
	if version == 1 {
		body.U8() // return_address_register
	} else {
		body.ULEB128()
	}
	if err := body.Err(); err != nil {
		return nil, err
	}
	if len(aug) > 0 {
		if aug[0] != 'z' {
			if string(aug) != "eh" {
				return nil, cursor.Errorf(s.name, augAt, cursor.ErrUnsupported, "augmentation %q", aug)
			}
			body.Skip(s.ptrSize) // GCC 2's "eh": the exception table's address
		} else {
			e.augData = true
			n := body.ULEB128()
			if body.Err() == nil && n > uint64(body.Len()) {
				body.Fail(cursor.ErrTruncated, "augmentation data of %d bytes, %d left", n, body.Len())
			}
			data := body.Sub(int(n))
			for _, a := range aug[1:] {
				switch a {
				case 'L':
					s.encoding(&data, false)
				case 'P':
					s.pointer(&data, s.encoding(&data, true), "personality routine")
				case 'R':
					e.fdeEnc = s.encoding(&data, false)
				case 'S', 'B', 'G':
				default:
					// Unknown letters are allowed after 'z': the
					// length says where the data ends.
				}
			}
			if err := data.Err(); err != nil {
				return nil, err
			}
		}
	}
	if err := body.Err(); err != nil {
		return nil, err
	}
	if e.remembered, err = s.instructions(&body, e, 0); err != nil {
		return nil, err
	}
	s.cies[off] = e
	return e, nil
}

// encoding reads a DW_EH_PE byte and checks it; indirect (0x80) is
// allowed only for the personality routine.
func (s *cfiSection) encoding(c *cursor.Cursor, indirect bool) byte {
	at := c.Offset()
	enc := c.U8()
	if c.Err() != nil || enc == peOmit {
		return enc
	}
	if enc&0x80 != 0 && !indirect || enc&0x70 > 0x50 || !knownFormat(enc&0x0f) {
		c.FailAt(at, cursor.ErrCorrupt, "pointer encoding %#x", enc)
	}
	return enc
}

func knownFormat(f byte) bool {
	switch f {
	case peAbsptr, peULEB128, peUdata2, peUdata4, peUdata8, peSLEB128, peSdata2, peSdata4, peSdata8:
		return true
	}
	return false
}

// pointer reads a pointer of encoding enc; what names it in errors.
func (s *cfiSection) pointer(c *cursor.Cursor, enc byte, what string) {
	if enc == peOmit {
		return
	}
	n := 0
	switch enc & 0x0f {
	case peAbsptr:
		n = s.ptrSize
	case peULEB128:
		c.ULEB128()
	case peSLEB128:
		c.SLEB128()
	case peUdata2, peSdata2:
		n = 2
	case peUdata4, peSdata4:
		n = 4
	case peUdata8, peSdata8:
		n = 8
	}
	if n > 0 && c.Need(n, what) {
		c.Skip(n)
	}
}

// fde checks an FDE whose CIE pointer, at section offset idAt, is id.
func (s *cfiSection) fde(c *cursor.Cursor, idAt int64, id uint64) error {
	cieOff := int64(id)
	if s.eh {
		cieOff = idAt - int64(id) // relative to the pointer itself
	}
	if cieOff < 0 || cieOff >= int64(len(s.data)) {
		return cursor.Errorf(s.name, idAt, cursor.ErrCorrupt, "CIE pointer %#x leads outside the section", id)
	}
	e, err := s.cie(cieOff)
	if err != nil {
		return fmt.Errorf("the CIE of the FDE at %#x: %w", idAt, err)
	}
	if s.eh {
		if e.fdeEnc == peOmit {
			return cursor.Errorf(s.name, idAt, cursor.ErrCorrupt, "the CIE omits FDE addresses")
		}
		s.pointer(c, e.fdeEnc, "FDE initial location")
		s.pointer(c, e.fdeEnc&0xf, "FDE address range") // the format alone
	} else if c.Need(e.segSize+2*e.addrSize, "FDE initial location and address range") {
		c.Skip(e.segSize + 2*e.addrSize)
	}
	if e.augData {
		n := c.ULEB128()
		if c.Err() == nil && n > uint64(c.Len()) {
			return c.Fail(cursor.ErrTruncated, "augmentation data of %d bytes, %d left", n, c.Len())
		}
		c.Skip(int(n))
	}
	if err := c.Err(); err != nil {
		return err
	}
	_, err = s.instructions(c, e, e.remembered)
	return err
}

// Call frame instructions (DWARF 5, section 7.24; GNU extensions), also
// what the adapter evaluates CFI rows with.
const (
	CFAAdvanceLoc  = 0x40 // high 2 bits; delta in the low 6
	CFAOffset      = 0x80 // register in the low 6; ULEB offset
	CFARestore     = 0xc0 // register in the low 6
	CFANop         = 0x00
	CFASetLoc      = 0x01
	CFAAdvanceLoc1 = 0x02
	CFAAdvanceLoc2 = 0x03
	CFAAdvanceLoc4 = 0x04
	CFAOffsetExt   = 0x05
	CFARestoreExt  = 0x06
	CFAUndefined   = 0x07
	CFASameValue   = 0x08
	CFARegister    = 0x09
	CFARemember    = 0x0a
	CFARestoreSt   = 0x0b
	CFADefCFA      = 0x0c
	CFADefCFAReg   = 0x0d
	CFADefCFAOff   = 0x0e
	CFADefCFAExpr  = 0x0f
	CFAExpression  = 0x10
	CFAOffsetExtSF = 0x11
	CFADefCFASF    = 0x12
	CFADefCFAOffSF = 0x13
	CFAValOffset   = 0x14
	CFAValOffsetSF = 0x15
	CFAValExpr     = 0x16
	CFAWindowSave  = 0x2d // GNU (SPARC), AArch64 negate_ra_state
	CFAArgsSize    = 0x2e // GNU
	CFANegOffExt   = 0x2f // GNU
)

// instructions checks the call frame instructions that fill the rest of
// c: every opcode known, its operands present, no DW_CFA_restore_state
// without a DW_CFA_remember_state before it. depth is the number of
// remembered states on entry; the count at the end is returned.
func (s *cfiSection) instructions(c *cursor.Cursor, e *cie, depth int) (int, error) {
	for !c.Done() {
		at := c.Offset()
		op := c.U8()
		switch op & 0xc0 {
		case CFAAdvanceLoc, CFARestore:
			continue
		case CFAOffset:
			c.ULEB128()
			continue
		}
		switch op {
		case CFANop, CFARemember, CFAWindowSave:
			if op == CFARemember {
				depth++
			}
		case CFARestoreSt:
			if depth == 0 {
				return depth, cursor.Errorf(s.name, at, cursor.ErrCorrupt, "DW_CFA_restore_state without a remembered state")
			}
			depth--
		case CFASetLoc:
			if s.eh {
				s.pointer(c, e.fdeEnc, "DW_CFA_set_loc")
			} else {
				c.Skip(e.addrSize)
			}
		case CFAAdvanceLoc1:
			c.Skip(1)
		case CFAAdvanceLoc2:
			c.Skip(2)
		case CFAAdvanceLoc4:
			c.Skip(4)
		case CFAOffsetExt, CFARegister, CFADefCFA, CFAValOffset, CFANegOffExt:
			c.ULEB128()
			c.ULEB128()
		case CFAOffsetExtSF, CFADefCFASF, CFAValOffsetSF:
			c.ULEB128()
			c.SLEB128()
		case CFARestoreExt, CFAUndefined, CFASameValue, CFADefCFAReg, CFADefCFAOff, CFAArgsSize:
			c.ULEB128()
		case CFADefCFAOffSF:
			c.SLEB128()
		case CFADefCFAExpr:
			s.block(c, at)
		case CFAExpression, CFAValExpr:
			c.ULEB128()
			s.block(c, at)
		default:
			return depth, cursor.Errorf(s.name, at, cursor.ErrCorrupt, "unknown call frame instruction %#x", op)
		}
		if err := c.Err(); err != nil {
			if de := (*cursor.DecodeError)(nil); errors.As(err, &de) && de.Offset == at {
				return depth, err
			}
			return depth, cursor.Errorf(s.name, at, cursor.ErrTruncated, "call frame instruction %#x cut short", op)
		}
	}
	return depth, c.Err()
}

// block skips a ULEB128-sized DWARF expression.
func (s *cfiSection) block(c *cursor.Cursor, at int64) {
	n := c.ULEB128()
	if c.Err() == nil && n > uint64(c.Len()) {
		c.FailAt(at, cursor.ErrTruncated, "expression of %d bytes, %d left", n, c.Len())
		return
	}
	c.Skip(int(n))
}
