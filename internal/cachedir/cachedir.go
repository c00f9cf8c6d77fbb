// Package cachedir says where kvref keeps what it caches across runs: downloaded models
// (internal/hub) and the content hashes of model files (internal/digest).
package cachedir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Default returns $KVREF_CACHE, or kvref under the user's cache directory.
func Default() (string, error) {
	if d := os.Getenv("KVREF_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set KVREF_CACHE or use --cache): %w", err)
	}
	return filepath.Join(base, "kvref"), nil
}
