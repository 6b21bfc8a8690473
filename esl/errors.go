package esl

import "errors"

// Malformed input is a *splitdbg.DecodeError naming the section and
// offset, wrapping one of the sentinel errors of package splitdbg
// (ErrTruncated, ErrCorrupt, ErrOverflow, ErrUnsupportedVersion,
// ErrUnsupported) or ErrUnknownCommand, for errors.Is: every splitdbg
// decoder's error type.
//
// ErrUnknownCommand means a command byte whose low 6 bits name no command
// of this version.
var ErrUnknownCommand = errors.New("unknown command")

// ErrUnencodable is wrapped by the errors of the encoders (AppendProgram,
// Builder.Add): the rows cannot be expressed, e.g. an address that is not
// a whole number of pc units from the previous one.
var ErrUnencodable = errors.New("esl: cannot encode")

// DefaultSection is the section name errors carry when the caller gives
// none.
const DefaultSection = "ESL"

// sectionName returns section, or DefaultSection if it is empty.
func sectionName(section string) string {
	if section == "" {
		return DefaultSection
	}
	return section
}

// leUint reads the little-endian unsigned integer of len(b) (1 to 8) bytes.
func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
