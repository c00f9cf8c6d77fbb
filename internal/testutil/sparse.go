package testutil

import (
	"io"
	"os"
	"testing"
	"unsafe"
)

// SparseFile writes a model file of real size without writing its tensors: the bytes
// handed out by Zeros are skipped with a seek, leaving holes that read as zeros, so a file
// shaped like a billion-parameter model takes a few megabytes of disk and no memory. Use
// it as the io.Writer of a GGUF or safetensors writer whose tensor data are Zeros slices.
type SparseFile struct {
	f     *os.File
	zeros []byte // zeroMapping's bytes: on Unix a read-only anonymous mapping (the kernel's zero page)
	size  int64
}

// NewSparseFile creates path with a zero mapping of max bytes for Zeros; Close finishes
// the file.
func NewSparseFile(t testing.TB, path string, max int) *SparseFile {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zeros, err := zeroMapping(max)
	if err != nil {
		t.Fatal(err)
	}
	return &SparseFile{f: f, zeros: zeros}
}

// Zeros returns n zero bytes that Write skips (n at most the max of NewSparseFile).
func (s *SparseFile) Zeros(n int) []byte { return s.zeros[:n:n] }

// Write writes p, or seeks past it when it lies in the Zeros mapping (a writer that
// buffers may hand on any part of a Zeros slice).
func (s *SparseFile) Write(p []byte) (int, error) {
	start, base := uintptr(0), uintptr(unsafe.Pointer(&s.zeros[0]))
	if len(p) > 0 {
		start = uintptr(unsafe.Pointer(&p[0]))
	}
	if len(p) > 0 && start >= base && start+uintptr(len(p)) <= base+uintptr(len(s.zeros)) {
		if _, err := s.f.Seek(int64(len(p)), io.SeekCurrent); err != nil {
			return 0, err
		}
		s.size += int64(len(p))
		return len(p), nil
	}
	n, err := s.f.Write(p)
	s.size += int64(n)
	return n, err
}

// Close sets the file's length (a trailing hole has no bytes written) and closes it.
func (s *SparseFile) Close() error {
	err := s.f.Truncate(s.size)
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if merr := unmapZeros(s.zeros); err == nil {
		err = merr
	}
	return err
}
