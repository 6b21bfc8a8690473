package esl

import (
	"errors"

	"github.com/splitdbg/splitdbg/internal/cursor"
)

// DecodeError reports malformed ESL input: the section being decoded, the
// byte offset within it, and the cause, which wraps one of the sentinels
// below. It is the one error type of every splitdbg decoder
// (splitdbg.DecodeError).
type DecodeError = cursor.DecodeError

// Sentinel errors wrapped by *DecodeError, for errors.Is. They are the
// sentinels of every splitdbg decoder (splitdbg.ErrTruncated...).
var (
	// ErrTruncated means the input ended inside a value.
	ErrTruncated = cursor.ErrTruncated
	// ErrCorrupt means a value is out of range or inconsistent.
	ErrCorrupt = cursor.ErrCorrupt
	// ErrOverflow means a LEB128 value does not fit in 64 bits.
	ErrOverflow = cursor.ErrOverflow
	// ErrUnsupportedVersion means a unit version this package does not know.
	ErrUnsupportedVersion = cursor.ErrUnsupportedVersion
	// ErrUnsupported means a unit uses a feature (a header flag) this
	// package does not implement.
	ErrUnsupported = cursor.ErrUnsupported
	// ErrUnknownCommand means a command byte whose low 6 bits name no
	// command of this version.
	ErrUnknownCommand = errors.New("unknown command")
)

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
