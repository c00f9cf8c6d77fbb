// Package digest names model files by their content: the SHA-256 of their bytes. The same
// file under two paths (a symlink, a relative path, a hard link, a copy) has one digest;
// two files that differ anywhere have two.
//
// Hashing a multi-gigabyte model at every start-up would cost seconds for nothing, so a
// file larger than SmallFile is hashed once per version and the sum remembered under the
// cache directory (internal/cachedir), keyed by what changes whenever the file does: its
// device and inode, size, modification time and status-change time (which no user can set:
// touch -r and cp -p set the modification time, not the change time). A later start costs
// a stat and a 64-byte read. A download whose sha256 was verified on arrival is recorded at
// once (Record), so a pulled model is never read for its digest. Where the operating system
// gives no inode and change time, large files are hashed at every open.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvref/kvref/internal/cachedir"
)

// SmallFile is the size up to which a file is hashed at every open: reading it costs less
// than the bookkeeping would save (64 MiB, a few tens of milliseconds).
var SmallFile int64 = 64 << 20

// File returns the hex SHA-256 of the file's content.
func File(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("digest: %s is not a regular file", path)
	}
	entry := ""
	if st.Size() > SmallFile {
		if entry = cacheEntry(st); entry != "" {
			if b, err := os.ReadFile(entry); err == nil && isHexSum(strings.TrimSpace(string(b))) {
				return strings.TrimSpace(string(b)), nil
			}
		}
	}
	sum, err := hashFile(path)
	if err != nil {
		return "", err
	}
	if entry != "" {
		remember(entry, sum) // a cache that cannot be written only costs the next start a read
	}
	return sum, nil
}

// Record remembers sum as the SHA-256 of the file at path, as it is now: for a file whose
// checksum was verified as it was written (a download). Small files are not recorded.
func Record(path, sum string) error {
	if !isHexSum(sum) {
		return fmt.Errorf("digest: %q is not a hex SHA-256", sum)
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() <= SmallFile {
		return nil
	}
	if entry := cacheEntry(st); entry != "" {
		return remember(entry, strings.ToLower(sum))
	}
	return nil
}

// Bytes returns the hex SHA-256 of b.
func Bytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// hashFile reads the whole file through SHA-256.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return "", fmt.Errorf("digest: reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cacheEntry is the path of the cache entry for the file version st describes, or "" when
// there is no cache directory or no identity of the version.
func cacheEntry(st fs.FileInfo) string {
	id, ok := versionOf(st)
	if !ok {
		return ""
	}
	dir, err := cachedir.Default()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "digests", Bytes([]byte(id)))
}

// remember writes sum to entry atomically (a temporary file renamed into place).
func remember(entry, sum string) error {
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(entry), ".digest-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(sum + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), entry)
}

func isHexSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
