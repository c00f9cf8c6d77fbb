package gguf

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsFile: a file starting with the magic is GGUF; another file, or one shorter than the
// magic, is not; a missing file is an error.
func TestIsFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"yes": Magic + "rest", "no": "GGML....", "short": "GG"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		ok, err := IsFile(path)
		if err != nil || ok != (name == "yes") {
			t.Errorf("IsFile(%s) = %v, %v", name, ok, err)
		}
	}
	if _, err := IsFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("IsFile of a missing file: no error")
	}
}
