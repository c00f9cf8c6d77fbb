package term

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBarDrawsOnATerminalOnly: on a terminal each Set redraws the line in place with the
// filled share of 30 cells and the count, and Done ends the line; elsewhere nothing is
// written.
func TestBarDrawsOnATerminalOnly(t *testing.T) {
	t.Parallel()

	var out strings.Builder
	b := &Bar{w: &out, tty: true}
	b.Set(0, 0) // no total yet: nothing to draw
	b.Set(1, 3)
	b.Set(3, 3)
	b.Done()
	require.Equal(t, "\r["+strings.Repeat("=", 10)+strings.Repeat(" ", 20)+"] 1/3"+
		"\r["+strings.Repeat("=", 30)+"] 3/3\n", out.String())

	out.Reset()
	b = NewBar(&out) // a strings.Builder is no terminal
	b.Set(1, 2)
	b.Done()
	require.Empty(t, out.String())
}
