package pages

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Where Linux says which cgroups a process is in, and where they are mounted; variables so
// tests can point elsewhere.
var (
	procCgroupPath = "/proc/self/cgroup"
	cgroupRoot     = "/sys/fs/cgroup"
)

// unlimited is where a cgroup v1 limit stops being one: "no limit" reads as the largest
// page-aligned int64 (9223372036854771712).
const unlimited = 1 << 62

// cgroupRoom returns the bytes the memory cgroups this process is in still allow it: for
// each cgroup from the process's own up to the root of its hierarchy that sets a limit,
// the limit less the cgroup's usage, and the least of those. ok is false when none sets a
// limit (or none can be read). cgroup v2 (the unified hierarchy, line "0::PATH" of
// /proc/self/cgroup) keeps them in memory.max ("max": none) and memory.current; v1 (a line
// naming the memory controller) in memory/memory.limit_in_bytes and memory.usage_in_bytes.
// In a container the process's path is often "/" of a namespace whose root is the
// container's own cgroup, which the walk reads too.
func cgroupRoom() (room int64, ok bool) {
	data, err := os.ReadFile(procCgroupPath)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var mount, limitFile, usageFile string
		switch {
		case parts[0] == "0" && parts[1] == "":
			mount, limitFile, usageFile = cgroupRoot, "memory.max", "memory.current"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			mount, limitFile, usageFile = filepath.Join(cgroupRoot, "memory"), "memory.limit_in_bytes", "memory.usage_in_bytes"
		default:
			continue
		}
		for dir := filepath.Join(mount, parts[2]); ; dir = filepath.Dir(dir) {
			if r, set := cgroupDirRoom(dir, limitFile, usageFile); set && (!ok || r < room) {
				room, ok = r, true
			}
			if dir == mount || len(dir) <= len(mount) {
				break
			}
		}
	}
	return room, ok
}

// cgroupDirRoom reads one cgroup directory's limit and usage: set is false when the limit
// cannot be read, is "max", or is so large that it is none. The room is never negative.
func cgroupDirRoom(dir, limitFile, usageFile string) (room int64, set bool) {
	limit, ok := readCgroupNumber(filepath.Join(dir, limitFile))
	if !ok || limit >= unlimited {
		return 0, false
	}
	usage, ok := readCgroupNumber(filepath.Join(dir, usageFile))
	if !ok {
		usage = 0
	}
	return max(0, limit-usage), true
}

// readCgroupNumber reads a cgroup file holding one non-negative number ("max" is not one).
func readCgroupNumber(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil && n >= 0
}
