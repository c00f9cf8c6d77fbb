// Package cachedir says where kvref keeps what it caches across runs: downloaded models
// (internal/hub) and the content hashes of model files (internal/digest).
package cachedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoDir is wrapped by Default's error when there is no cache directory.
var ErrNoDir = errors.New("no cache directory")

// Default returns $KVREF_CACHE, or kvref under the user's cache directory.
func Default() (string, error) {
	if d := os.Getenv("KVREF_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w (set KVREF_CACHE): %w", ErrNoDir, err)
	}
	return filepath.Join(base, "kvref"), nil
}
