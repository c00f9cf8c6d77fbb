package plan

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseSize checks the unit convention (G = 10^9, Gi = GiB = 2^30, case ignored),
// fractions, and that junk is refused.
func TestParseSize(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"80GB", 80e9},
		{"80G", 80e9},
		{"80gb", 80e9},
		{"80GiB", 80 << 30},
		{"80Gi", 80 << 30},
		{"80gib", 80 << 30},
		{"14G", 14e9},
		{"512MB", 512e6},
		{"512MiB", 512 << 20},
		{"1.5TB", 1.5e12},
		{"1.5TiB", 3 << 39},
		{"2PB", 2e15},
		{"1Pi", 1 << 50},
		{"4096", 4096},
		{"4096B", 4096},
		{"64k", 64e3},
		{"64KiB", 64 << 10},
		{" 80 GB ", 80e9},
		{"0", 0},
		{"0.5GiB", 1 << 29},
		{".5KiB", 512},
		{"1.", 1},
		{"1.9", 1},      // rounded down to whole bytes
		{"0.1KiB", 102}, // 102.4
		{"9223372036854775807", 1<<63 - 1},
	} {
		got, err := ParseSize(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "GB", "eighty", "80 GBs", "80XB", "-1", "-1GB", "1..5G", ".", "1e9", "80 G B", "0x10", "9223372036854775808", "10000000PB", "1/2G"} {
		_, err := ParseSize(bad)
		require.Error(t, err, "%q", bad)
	}
	_, err := ParseSize("eighty")
	require.ErrorContains(t, err, "80GiB = 80Gi = 80·2^30", "the error explains the units")
	_, err = ParseSize("10000000PB")
	require.ErrorContains(t, err, "too large")
}

// TestFormatSize checks the human-readable sizes: binary units with two decimals.
func TestFormatSize(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{34, "34 B"},
		{1023, "1023 B"},
		{1024, "1.00 KiB"},
		{131072, "128.00 KiB"},
		{1 << 29, "512.00 MiB"},
		{2 << 30, "2.00 GiB"},
		{80e9, "74.51 GiB"},
		{66e9, "61.47 GiB"},
		{3 << 40, "3.00 TiB"},
		{1<<63 - 1, "8.00 EiB"},
		{-2048, "-2.00 KiB"},
	} {
		require.Equal(t, tc.want, FormatSize(tc.in), "%d", tc.in)
	}
}

// FuzzParseSize checks that parseSize never panics, never returns a negative count, and
// reads back every plain byte count exactly.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"80GB", "80GiB", "1.5TB", "4096", "", "x", ".5Ki", "99999999999999999999P"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		require.Falsef(t, n < 0, "ParseSize(%q) = %d", s, n)
		if want, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64); perr == nil {
			require.Equalf(t, want, n, "ParseSize(%q): want the number itself", s)
		}
	})
}
