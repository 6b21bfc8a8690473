package elfx

import "syscall"

// dropPages drops the resident pages of b, whole pages of a read-only
// shared file mapping (madvise(2), MADV_DONTNEED: the next access reads
// them from the page cache). It is advice: a refusal changes nothing.
func dropPages(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }
