//go:build linux

package kvcache

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvref/kvref/quant"
)

// TestNewPoolMapsItsPages: a new pool's K/V storage is resident before anything is written
// to it (mincore), so that no step takes its first writes' page faults. On a kernel without
// MADV_POPULATE_WRITE (before 5.14) there is nothing to check.
func TestNewPoolMapsItsPages(t *testing.T) {
	probe := make([]byte, 2<<20)
	if populateUnsupported(probe) {
		t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14): pages fault in on first write")
	}
	p, err := NewPool(Config{Layers: 2, KVHeads: 4, HeadDim: 64, BlockSize: 16, NumBlocks: 256, KType: quant.F16, VType: quant.F16})
	require.NoError(t, err)
	for l := range p.k {
		for _, b := range [][]byte{p.k[l], p.v[l]} {
			resident, pages := residentPages(t, b)
			require.Equal(t, pages, resident, "layer %d: pages of %d bytes of storage resident", l, len(b))
		}
	}
}

// populateUnsupported reports whether the kernel refuses MADV_POPULATE_WRITE.
func populateUnsupported(b []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + 4095) &^ 4095
	return unix.Madvise(b[lo-start:lo-start+4096], unix.MADV_POPULATE_WRITE) != nil
}

// residentPages counts the whole pages inside b that are in memory, and all its whole pages.
func residentPages(t *testing.T, b []byte) (resident, pages int) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + 4095) &^ 4095
	hi := (start + uintptr(len(b))) &^ 4095
	vec := make([]byte, (hi-lo)/4096)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	require.Zero(t, errno, "mincore")
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}
