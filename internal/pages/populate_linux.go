//go:build linux

package pages

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Populate maps every whole page inside b now, writable (MADV_POPULATE_WRITE, Linux 5.14
// and later), without changing its contents, and reports whether the kernel did. On an
// older kernel it does nothing: the pages fault in on their first writes as before.
func Populate(b []byte) bool {
	inner := wholePages(b)
	return len(inner) > 0 && unix.Madvise(inner, unix.MADV_POPULATE_WRITE) == nil
}

// Resident reports how many of the whole pages inside b are in memory (mincore), and how
// many there are.
func Resident(b []byte) (resident, total int, err error) {
	inner := wholePages(b)
	if len(inner) == 0 {
		return 0, 0, nil
	}
	vec := make([]byte, len(inner)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(inner))), uintptr(len(inner)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		return 0, 0, fmt.Errorf("pages: mincore of %d bytes: %w", len(inner), errno)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec), nil
}

// wholePages is the part of b that covers whole pages (madvise and mincore take whole pages).
func wholePages(b []byte) []byte {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return nil
	}
	return b[lo-start : hi-start]
}
