package pages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseMemAvailable checks the MemAvailable line is read as KiB and that malformed files
// give errors, not numbers.
func TestParseMemAvailable(t *testing.T) {
	t.Parallel()

	n, err := parseMemAvailable(strings.NewReader("MemTotal:       24683620 kB\nMemFree:        23592728 kB\nMemAvailable:   24293040 kB\n"))
	require.NoError(t, err)
	require.Equal(t, int64(24293040)*1024, n)

	for _, bad := range []string{
		"MemTotal: 1 kB\n",
		"MemAvailable: 12\n",
		"MemAvailable: x kB\n",
		"MemAvailable: -5 kB\n",
		"MemAvailable: 12 MB\n",
		"",
	} {
		_, err := parseMemAvailable(strings.NewReader(bad))
		require.Error(t, err, "%q", bad)
	}
}

// TestAvailableMemory checks the file is read from meminfoPath and that a missing file is an
// error (as on every system but Linux).
func TestAvailableMemory(t *testing.T) {
	old := meminfoPath
	t.Cleanup(func() { meminfoPath = old })

	meminfoPath = filepath.Join(t.TempDir(), "meminfo")
	require.NoError(t, os.WriteFile(meminfoPath, []byte("MemAvailable: 2048 kB\n"), 0o644))
	n, err := AvailableMemory()
	require.NoError(t, err)
	require.Equal(t, int64(2<<20), n)

	meminfoPath = filepath.Join(t.TempDir(), "absent")
	_, err = AvailableMemory()
	require.ErrorContains(t, err, "cannot read the available memory")
}
