package safetensors

import (
	"errors"

	"github.com/kvref/kvref/format/internal/fileerr"
)

// ErrTruncated is wrapped by parse errors where the file ends before the
// data its header describes.
var ErrTruncated = errors.New("the file is truncated or corrupt; re-download it")

// ErrNotFound is wrapped by TensorData errors about a tensor that is not there.
var ErrNotFound = errors.New("tensor not found")

// errClosed is wrapped by errors about reading a closed file.
var errClosed = errors.New("file is closed")

// quote quotes a key or tensor name for an error message, shortening it if it is long.
func quote(s string) string { return fileerr.Quote(s) }

// fileErrorf formats an error about the named file in the package's style:
// "safetensors: NAME: message".
func fileErrorf(name, format string, args ...any) error {
	return fileerr.Errorf("safetensors", name, format, args...)
}
