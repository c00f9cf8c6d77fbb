package texttable

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrite: columns are as wide as their widest cell counted in runes, right-aligned columns
// are padded on the left, and no line ends in spaces.
func TestWrite(t *testing.T) {
	t.Parallel()

	var b strings.Builder
	Write(&b, "> ", "lrl", [][]string{
		{"name", "n", "note"},
		{"·ab", "1234", ""},
		{"x", "5", "last"},
	})
	want := "> name     n  note\n" +
		"> ·ab   1234\n" +
		"> x        5  last\n"
	require.Equal(t, want, b.String())
}
