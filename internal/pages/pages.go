// Package pages maps fresh memory before it is written. A new buffer's pages are mapped by
// the kernel on their first writes, one page fault per 4 KiB, and in a virtual machine each
// fault costs about 20 µs: the first prefill of a new process, or the first after a garbage
// collection has dropped the recycled buffers, spent a fifth of its time on them (its
// activations, packed inputs and scores are tens of megabytes). Populate asks for all the
// pages of a buffer in one call, which the kernel serves many times faster, as llama.cpp's
// buffers are written (cleared) when they are made.
package pages

import "unsafe"

// page is the size of the pages Populate and Resident count.
const page = 4096

// MinBytes is the smallest buffer that Floats populates: below it, the call costs more
// than the faults it saves.
const MinBytes = 256 << 10

// Floats returns n zeroed float32s, their pages mapped now when they are at least MinBytes.
func Floats(n int) []float32 {
	f := make([]float32, n)
	if 4*n >= MinBytes {
		PopulateFloats(f)
	}
	return f
}

// PopulateFloats is Populate for float32s.
func PopulateFloats(f []float32) {
	if len(f) > 0 {
		Populate(bytesOf(f))
	}
}

// bytesOf is f's memory as bytes.
func bytesOf(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f))
}
