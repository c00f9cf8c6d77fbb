package term

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIsTerminal: a regular file, a pipe and a buffer are not terminals; /dev/null, a
// character device, counts as one (as it does for isatty's callers that only look at the
// mode).
func TestIsTerminal(t *testing.T) {
	t.Parallel()

	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, IsTerminal(f))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, IsTerminal(w))
	require.False(t, IsTerminal(&bytes.Buffer{}))
	require.False(t, IsTerminal(nil))
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer null.Close()
	require.True(t, IsTerminal(null))
}
