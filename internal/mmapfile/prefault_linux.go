//go:build linux

package mmapfile

import "golang.org/x/sys/unix"

// prefault asks the kernel to read the mapped file ahead (MADV_WILLNEED) and to map
// every page now (MADV_POPULATE_READ, Linux 5.14 and later: what MAP_POPULATE does at
// mmap time); on an older kernel it touches every page instead.
func prefault(data []byte) {
	_ = unix.Madvise(data, unix.MADV_WILLNEED) // advice: its failure changes nothing
	if unix.Madvise(data, unix.MADV_POPULATE_READ) != nil {
		touchPages(data)
	}
}
