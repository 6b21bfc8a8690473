package bbaddrmap

import "io"

// NewStreamDecoderWindow is NewStreamDecoder with a window of n bytes, to
// test the window's sliding and growth.
func NewStreamDecoderWindow(sec Section, r io.Reader, size int64, n int) *Decoder {
	d := NewStreamDecoder(sec, r, size)
	d.window = max(n, 1)
	return d
}
