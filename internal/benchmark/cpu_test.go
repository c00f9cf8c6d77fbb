package benchmark

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCPUInfo reads the first processor of a /proc/cpuinfo listing.
func TestCPUInfo(t *testing.T) {
	t.Parallel()

	p := filepath.Join(t.TempDir(), "cpuinfo")
	require.NoError(t, os.WriteFile(p, []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx2\n\nprocessor\t: 1\nmodel name\t: Other\n"), 0o644))
	name, family, model := cpuInfo(p)
	require.Equal(t, "AMD EPYC 9R14", name)
	require.Equal(t, "25", family)
	require.Equal(t, "17", model)
	name, _, _ = cpuInfo(filepath.Join(t.TempDir(), "absent"))
	require.Empty(t, name)

	s := CPUName()
	require.True(t, strings.HasSuffix(s, " CPUs"), s)
	require.Contains(t, s, ", ")
	if runtime.GOARCH == "amd64" {
		require.Contains(t, s, "(")
	}
}
