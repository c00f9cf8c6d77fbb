package pages

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// meminfoPath is where Linux reports memory; a variable so tests can point elsewhere.
var meminfoPath = "/proc/meminfo"

// Where AvailableMemory's figure came from.
const (
	SourceMemAvailable = "MemAvailable"                             // /proc/meminfo
	SourceCgroup       = "the memory cgroup's limit less its usage" // a container's limit
)

// AvailableMemory returns the bytes this process can be given without swapping, and where
// the figure comes from: MemAvailable from /proc/meminfo, or less when a memory cgroup the
// process is in (a container's, a systemd unit's) sets a limit with less room left under it
// (cgroupRoom). Where neither can be read (every system but Linux) it returns an error;
// callers then ask for the memory explicitly.
func AvailableMemory() (int64, string, error) {
	n, err := memAvailable()
	if room, ok := cgroupRoom(); ok && (err != nil || room < n) {
		return room, SourceCgroup, nil
	}
	if err != nil {
		return 0, "", err
	}
	return n, SourceMemAvailable, nil
}

// memAvailable is MemAvailable from meminfoPath.
func memAvailable() (int64, error) {
	f, err := os.Open(meminfoPath)
	if err != nil {
		return 0, fmt.Errorf("pages: cannot read the available memory: %w", err)
	}
	defer f.Close()
	n, err := parseMemAvailable(f)
	if err != nil {
		return 0, fmt.Errorf("pages: %s: %w", meminfoPath, err)
	}
	return n, nil
}

// parseMemAvailable reads the MemAvailable line of /proc/meminfo, whose "kB" are KiB.
func parseMemAvailable(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("MemAvailable line %q is not \"MemAvailable: N kB\"", sc.Text())
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kib < 0 || kib > (1<<53)/1024 {
			return 0, fmt.Errorf("MemAvailable value %q is not a plausible number of kB", fields[0])
		}
		return kib * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no MemAvailable line (a kernel older than Linux 3.14?)")
}
