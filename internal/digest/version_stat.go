//go:build linux || darwin

package digest

import (
	"fmt"
	"io/fs"
	"syscall"
)

// versionOf names one version of a file: device, inode, size, and modification and
// status-change times to the nanosecond. Any write changes the times; replacing the file
// changes the inode.
func versionOf(st fs.FileInfo) (string, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("dev %d ino %d size %d mtime %d ctime %d", uint64(sys.Dev), uint64(sys.Ino), st.Size(),
		st.ModTime().UnixNano(), ctimeNanos(sys)), true
}
