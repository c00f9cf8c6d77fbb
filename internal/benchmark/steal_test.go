package benchmark

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeStat(t *testing.T, path, cpuLine string) {
	t.Helper()
	body := cpuLine + "\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\n"
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

// TestStealMeterMeasuresTheStolenShare: the share is the growth of the steal counter over
// the growth of all eight counters, and the report says what a high share means.
func TestStealMeterMeasuresTheStolenShare(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "stat")
	writeStat(t, path, "cpu  100 0 50 800 0 0 0 50 0 0")
	m := startSteal(path)
	// 400 more ticks: 100 user, 200 idle, 100 steal (guest columns are ignored).
	writeStat(t, path, "cpu  200 0 50 1000 0 0 0 150 99 99")
	f, ok := m.Fraction()
	require.True(t, ok)
	require.InDelta(t, 0.25, f, 1e-12)
	require.InDelta(t, 0.25, *m.JSON(), 1e-12)

	var buf bytes.Buffer
	WriteSteal(&buf, m)
	require.Contains(t, buf.String(), "host steal: 25.0% of the CPU time")
	require.Contains(t, buf.String(), "compare only figures from one interleaved run")

	buf.Reset()
	quiet := startSteal(path)
	WriteSteal(&buf, quiet)
	require.Empty(t, buf.String(), "no time has passed: nothing to say")
	writeStat(t, path, "cpu  300 0 50 1900 0 0 0 151 0 0") // 1 tick of 1001 more
	WriteSteal(&buf, quiet)
	require.Contains(t, buf.String(), "host steal: 0.1% of the CPU time")
	require.NotContains(t, buf.String(), "slowed", "a quiet host needs no warning")
}

// TestStealMeterSaysNothingWithoutCounters: no /proc/stat, a short cpu line, or counters
// that went backwards give no figure rather than a wrong one.
func TestStealMeterSaysNothingWithoutCounters(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	_, ok := startSteal(filepath.Join(dir, "missing")).Fraction()
	require.False(t, ok)
	require.Nil(t, startSteal(filepath.Join(dir, "missing")).JSON(), "JSON null when the machine does not say")

	short := filepath.Join(dir, "short")
	writeStat(t, short, "cpu  1 2 3")
	_, err := readCPUTimes(short)
	require.ErrorContains(t, err, "has 3 counters, want at least 8")

	back := filepath.Join(dir, "back")
	writeStat(t, back, "cpu  100 0 0 100 0 0 0 50")
	m := startSteal(back)
	writeStat(t, back, "cpu  200 0 0 200 0 0 0 10")
	_, ok = m.Fraction()
	require.False(t, ok)
}

// TestReadCPUTimesOfThisMachine reads the real counters where there are some.
func TestReadCPUTimesOfThisMachine(t *testing.T) {
	t.Parallel()

	if _, err := os.Stat(procStat); err != nil {
		t.Skip("no /proc/stat on this system")
	}
	c, err := readCPUTimes(procStat)
	require.NoError(t, err)
	require.Positive(t, c.total)
	require.LessOrEqual(t, c.steal, c.total)
}
