//go:build amd64 && !purego

package kernels

import "unsafe"

// prefetchLines issues PREFETCHT0 for every 64-byte line of the n > 0 bytes at p.
// Implemented in prefetch_avx_amd64.s.
//
//go:noescape
func prefetchLines(p *byte, n int)

// prefetchLinesL2 is prefetchLines with PREFETCHT1. Implemented in prefetch_avx_amd64.s.
//
//go:noescape
func prefetchLinesL2(p *byte, n int)

func prefetchL2(b []byte) {
	if implPrefetchAVX.on {
		prefetchLinesL2(unsafe.SliceData(b), len(b))
	}
}

func prefetch(b []byte) {
	if implPrefetchAVX.on { // SetPortable turns the hint off with the other fast paths
		prefetchLines(unsafe.SliceData(b), len(b))
	}
}
