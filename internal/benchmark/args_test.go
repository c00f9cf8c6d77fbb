package benchmark

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseInts reads positive integers and names the first bad item.
func TestParseInts(t *testing.T) {
	got, err := ParseInts("1, 2,4,64")
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 4, 64}, got)
	for _, bad := range []string{"", "1,,2", "0", "-3", "2,x"} {
		_, err := ParseInts(bad)
		require.ErrorContains(t, err, "is not a positive integer", bad)
	}
}

// TestCheckGGUF accepts a GGUF file and refuses no path, a synthetic reference and a
// file that is not GGUF.
func TestCheckGGUF(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "m.gguf")
	require.NoError(t, os.WriteFile(good, []byte("GGUF\x03\x00\x00\x00"), 0o644))
	require.NoError(t, CheckGGUF(good))
	require.ErrorContains(t, CheckGGUF(""), "-m must name a GGUF file")
	require.ErrorContains(t, CheckGGUF("synth:tiny"), "-m must name a GGUF file")
	bad := filepath.Join(dir, "m.bin")
	require.NoError(t, os.WriteFile(bad, []byte("not a model"), 0o644))
	require.ErrorContains(t, CheckGGUF(bad), "is not a GGUF file")
}
