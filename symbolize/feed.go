package symbolize

import (
	"bufio"
	"bytes"
	"io"
)

// feed reads input lines on its own goroutine, so that reading overlaps
// answering, and hands them over in runs (lineBatch): a run ends where
// the input has no further whole line buffered (the next read may wait
// for the peer) or where a batch is full.
type feed struct {
	full chan *lineBatch
	free chan *lineBatch
	done chan struct{}
}

// lineBatch is a run of input lines, back to back in lines, line k
// ending at ends[k]. llvm-symbolizer reads lines of at most 1023 bytes: a
// longer line is cut into pieces of 1023, each a line of its own. err,
// if not nil, follows the lines: io.EOF or the error that ended reading;
// panicked carries a panic of the reader.
type lineBatch struct {
	lines    []byte
	ends     []int
	err      error
	panicked *carried
}

// feedRuns is how many runs are in flight between the reader and Serve.
const feedRuns = 3

func startFeed(in io.Reader) *feed {
	fd := &feed{full: make(chan *lineBatch, feedRuns), free: make(chan *lineBatch, feedRuns), done: make(chan struct{})}
	for range feedRuns {
		fd.free <- &lineBatch{}
	}
	go fd.read(bufio.NewReaderSize(in, 256<<10))
	return fd
}

// read runs on the feed's goroutine until the input ends or the feed is
// stopped. It only moves bytes; a panic of the reader's Read is carried
// to Serve.
func (fd *feed) read(r *bufio.Reader) {
	var lb *lineBatch
	defer func() {
		if p := recover(); p != nil {
			if lb == nil {
				lb = &lineBatch{}
			}
			lb.panicked = &carried{p}
			fd.send(lb)
		}
	}()
	if lb = fd.take(); lb == nil {
		return
	}
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than r's buffer: the next read reuses the
			// buffer, so the line so far is copied out first.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		for len(line) > 0 {
			n := min(len(line), 1023)
			lb.lines = append(lb.lines, line[:n]...)
			lb.ends = append(lb.ends, len(lb.lines))
			line = line[n:]
		}
		if err != nil {
			lb.err = err
			fd.send(lb)
			return
		}
		if len(lb.ends) > 0 && (!lineBuffered(r) || len(lb.ends) >= 1<<batchBits-1023) {
			if !fd.send(lb) {
				return
			}
			if lb = fd.take(); lb == nil {
				return
			}
		}
	}
}

// lineBuffered reports whether r holds the whole of a next line: else
// the next read may wait for the peer, which may be waiting for the
// answers to the lines before.
func lineBuffered(r *bufio.Reader) bool {
	next, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(next, '\n') >= 0
}

// take returns an empty run, nil if the feed is stopped.
func (fd *feed) take() *lineBatch {
	select {
	case lb := <-fd.free:
		lb.lines, lb.ends, lb.err = lb.lines[:0], lb.ends[:0], nil
		return lb
	case <-fd.done:
		return nil
	}
}

// send hands a run to Serve; false if the feed is stopped.
func (fd *feed) send(lb *lineBatch) bool {
	select {
	case fd.full <- lb:
		return true
	case <-fd.done:
		return false
	}
}

// tryNext returns the next run if one is ready.
func (fd *feed) tryNext() (*lineBatch, bool) {
	select {
	case lb := <-fd.full:
		return lb, true
	default:
		return nil, false
	}
}

// next waits for the next run.
func (fd *feed) next() *lineBatch { return <-fd.full }

// recycle gives a run back to the reader.
func (fd *feed) recycle(lb *lineBatch) { fd.free <- lb }

// stop ends the reader's goroutine once its current read returns.
func (fd *feed) stop() { close(fd.done) }
