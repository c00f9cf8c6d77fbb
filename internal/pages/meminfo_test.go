package pages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseMemAvailable checks the MemAvailable line is read as KiB and that malformed files
// give errors, not numbers.
func TestParseMemAvailable(t *testing.T) {
	t.Parallel()

	n, err := parseMemAvailable(strings.NewReader("MemTotal:       24683620 kB\nMemFree:        23592728 kB\nMemAvailable:   24293040 kB\n"))
	require.NoError(t, err)
	require.Equal(t, int64(24293040)*1024, n)

	for _, bad := range []string{
		"MemTotal: 1 kB\n",
		"MemAvailable: 12\n",
		"MemAvailable: x kB\n",
		"MemAvailable: -5 kB\n",
		"MemAvailable: 12 MB\n",
		"",
	} {
		_, err := parseMemAvailable(strings.NewReader(bad))
		require.Error(t, err, "%q", bad)
	}
}

// TestAvailableMemory checks the file is read from meminfoPath and that a missing file is an
// error (as on every system but Linux), with no memory cgroup to read.
func TestAvailableMemory(t *testing.T) {
	noCgroups(t)
	old := meminfoPath
	t.Cleanup(func() { meminfoPath = old })

	meminfoPath = filepath.Join(t.TempDir(), "meminfo")
	require.NoError(t, os.WriteFile(meminfoPath, []byte("MemAvailable: 2048 kB\n"), 0o644))
	n, source, err := AvailableMemory()
	require.NoError(t, err)
	require.Equal(t, int64(2<<20), n)
	require.Equal(t, SourceMemAvailable, source)

	meminfoPath = filepath.Join(t.TempDir(), "absent")
	_, _, err = AvailableMemory()
	require.ErrorContains(t, err, "cannot read the available memory")
}

// noCgroups points the cgroup reading at a process that is in none, for the test.
func noCgroups(t *testing.T) {
	oldProc, oldRoot := procCgroupPath, cgroupRoot
	t.Cleanup(func() { procCgroupPath, cgroupRoot = oldProc, oldRoot })
	procCgroupPath = filepath.Join(t.TempDir(), "absent")
}

// fakeCgroups writes a /proc/self/cgroup and a cgroup tree of files (path → content) under
// a temporary root, and points the cgroup reading at them.
func fakeCgroups(t *testing.T, self string, files map[string]string) {
	oldProc, oldRoot := procCgroupPath, cgroupRoot
	t.Cleanup(func() { procCgroupPath, cgroupRoot = oldProc, oldRoot })
	dir := t.TempDir()
	procCgroupPath, cgroupRoot = filepath.Join(dir, "cgroup"), filepath.Join(dir, "sys")
	require.NoError(t, os.WriteFile(procCgroupPath, []byte(self), 0o644))
	for path, content := range files {
		full := filepath.Join(cgroupRoot, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
}

// TestAvailableMemoryInACgroup: a memory cgroup's limit less its usage is the memory
// available when it is less than MemAvailable, the least over the process's cgroup and its
// ancestors, in cgroup v2 ("max" is no limit) and v1 (the largest page-aligned int64 is
// none); a limit above MemAvailable, or none, leaves MemAvailable; with no meminfo the
// cgroup's room stands alone.
func TestAvailableMemoryInACgroup(t *testing.T) {
	old := meminfoPath
	t.Cleanup(func() { meminfoPath = old })
	meminfoPath = filepath.Join(t.TempDir(), "meminfo")
	require.NoError(t, os.WriteFile(meminfoPath, []byte("MemAvailable: 8388608 kB\n"), 0o644)) // 8 GiB

	for _, c := range []struct {
		name   string
		self   string
		files  map[string]string
		want   int64
		source string
	}{
		{"v2 container at its namespace's root", "0::/\n", map[string]string{
			"memory.max": "2147483648\n", "memory.current": "536870912\n"}, 3 << 29, SourceCgroup},
		{"v2 unit under a slice with the tighter limit", "0::/app.slice/kvref.service\n", map[string]string{
			"app.slice/kvref.service/memory.max": "max\n", "app.slice/kvref.service/memory.current": "100\n",
			"app.slice/memory.max": "4096\n", "app.slice/memory.current": "1024\n"}, 3072, SourceCgroup},
		{"v2 limit above MemAvailable", "0::/\n", map[string]string{
			"memory.max": "17179869184\n", "memory.current": "0\n"}, 8 << 30, SourceMemAvailable},
		{"v2 usage past the limit", "0::/\n", map[string]string{
			"memory.max": "1000\n", "memory.current": "5000\n"}, 0, SourceCgroup},
		{"v1 with the memory controller among others", "12:pids:/\n4:cpu,memory:/docker/abc\n", map[string]string{
			"memory/docker/abc/memory.limit_in_bytes": "1073741824\n", "memory/docker/abc/memory.usage_in_bytes": "0\n",
			"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 1 << 30, SourceCgroup},
		{"v1 without a limit", "4:memory:/process_api/x\n", map[string]string{
			"memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n", "memory/process_api/x/memory.usage_in_bytes": "6247018496\n"},
			8 << 30, SourceMemAvailable},
		{"no memory cgroup files", "0::/user.slice\n", nil, 8 << 30, SourceMemAvailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeCgroups(t, c.self, c.files)
			n, source, err := AvailableMemory()
			require.NoError(t, err)
			require.Equal(t, c.want, n)
			require.Equal(t, c.source, source)
		})
	}

	fakeCgroups(t, "0::/\n", map[string]string{"memory.max": "4096\n", "memory.current": "0\n"})
	meminfoPath = filepath.Join(t.TempDir(), "absent")
	n, source, err := AvailableMemory()
	require.NoError(t, err)
	require.Equal(t, int64(4096), n)
	require.Equal(t, SourceCgroup, source)
}
