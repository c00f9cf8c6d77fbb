package gguf

import (
	"errors"

	"github.com/kvref/kvref/format/internal/fileerr"
)

// ErrTruncated is wrapped by parse errors where the file ends before the
// data it describes, or a length in it runs past the end of the file.
var ErrTruncated = errors.New("the file is truncated or corrupt; re-download or re-convert it")

// ErrKeyNotFound is wrapped by the typed getters when a metadata key is
// absent, so callers can tell an optional key from a malformed one.
var ErrKeyNotFound = errors.New("metadata key not found")

// quote quotes a key or tensor name for an error message, shortening it if it is long.
func quote(s string) string { return fileerr.Quote(s) }

// fileErrorf formats an error about the named file in the package's style:
// "gguf: NAME: message".
func fileErrorf(name, format string, args ...any) error {
	return fileerr.Errorf("gguf", name, format, args...)
}
