package writefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrite: the file holds what write wrote, an existing file is truncated, write's error
// is returned, and a path in a missing directory is an error naming it.
func TestWrite(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "out.txt")
	require.NoError(t, os.WriteFile(path, []byte("an older, longer content"), 0o644))
	require.NoError(t, Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "new", string(got))

	boom := errors.New("boom")
	require.ErrorIs(t, Write(path, func(io.Writer) error { return boom }), boom)

	missing := filepath.Join(t.TempDir(), "missing", "out.txt")
	err = Write(missing, func(io.Writer) error { require.FailNow(t, "write called without a file"); return nil })
	require.ErrorContains(t, err, missing)
}
