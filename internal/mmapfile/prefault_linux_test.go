//go:build linux

package mmapfile

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// evicted writes size bytes to a new file and drops its pages from the page cache, so that
// a mapping of it starts with no page in memory.
func evicted(t *testing.T, size int) string {
	path := filepath.Join(t.TempDir(), "weights.bin")
	f, err := os.Create(path)
	require.NoError(t, err)
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync()) // clean pages can be dropped
	require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	require.NoError(t, f.Close())
	return path
}

// resident returns the fraction of data's pages in memory (mincore).
func resident(t *testing.T, data []byte) float64 {
	page := os.Getpagesize()
	vec := make([]byte, (len(data)+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore")
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return float64(n) / float64(len(vec))
}

// TestPrefaultReadsTheFileIn: a mapping of a file that is not in the page cache has its
// pages read in by Prefault (and by its fallback, touchPages), not later by the first
// forward pass; without it they stay out.
func TestPrefaultReadsTheFileIn(t *testing.T) {
	const size = 16 << 20
	m, err := Open(evicted(t, size))
	require.NoError(t, err)
	if resident(t, m.Data) > 0.5 {
		m.Close()
		t.Skip("this file system keeps the file in memory whatever is asked (tmpfs?): no page to read in, nothing to test")
	}
	require.Less(t, resident(t, m.Data), 0.5, "without Prefault the pages stay on disk")
	m.Prefault()
	require.Equal(t, 1.0, resident(t, m.Data), "Prefault read every page in")
	require.Equal(t, byte(100), m.Data[size-256+100])
	require.NoError(t, m.Close())

	m, err = Open(evicted(t, size))
	require.NoError(t, err)
	defer m.Close()
	touchPages(m.Data)
	require.Equal(t, 1.0, resident(t, m.Data), "touchPages read every page in")

	var read Mapping // bytes that were read, not mapped: nothing to do
	read.Data = []byte{1}
	read.Prefault()
	var none *Mapping
	none.Prefault()
}
