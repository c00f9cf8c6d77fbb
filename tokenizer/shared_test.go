package tokenizer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
)

// sharedPath returns the path of rel inside the workspace's ../shared
// directory (next to the module root), skipping the test when it is absent.
func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	p, ok := findShared(rel)
	if !ok {
		t.Skipf("../shared/%s not present: conformance vectors are only in the kvref workspace", rel)
	}
	return p
}

// findShared walks up from the working directory to the one holding go.mod
// and looks for ../shared/rel next to it.
func findShared(rel string) (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}

// loadGGUF opens a GGUF file and builds its tokenizer.
func loadGGUF(t testing.TB, path string) *SPM {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tok, err := FromGGUF(f)
	require.NoError(t, err)
	spm, ok := tok.(*SPM)
	require.True(t, ok, "FromGGUF(%s) returned %T, want *SPM", path, tok)
	return spm
}
