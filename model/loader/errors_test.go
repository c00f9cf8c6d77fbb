package loader

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoTokenizerError: a file that is not GGUF, with no tokenizer.bin beside it, is
// refused with a NoTokenizerError naming it and its first bytes, from Open and from
// OpenTokenizer alike.
func TestNoTokenizerError(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "model.bin")
	require.NoError(t, os.WriteFile(path, []byte("JUNKJUNKJUNK"), 0o644))
	_, err := Open(path, Options{})
	var nt *NoTokenizerError
	require.ErrorAs(t, err, &nt)
	require.Equal(t, NoTokenizerError{Path: path, Magic: "JUNK"}, *nt)
	require.ErrorContains(t, err, `starts with "JUNK", not "GGUF"`)
	_, err = OpenTokenizer(path, Options{})
	require.ErrorAs(t, err, &nt)
}
