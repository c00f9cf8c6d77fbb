package fileerr

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuote: short names are quoted whole; longer ones are cut to MaxQuoted bytes and say
// their length.
func TestQuote(t *testing.T) {
	t.Parallel()
	require.Equal(t, `"blk.0.attn_q.weight"`, Quote("blk.0.attn_q.weight"))
	exact := strings.Repeat("a", MaxQuoted)
	require.Equal(t, `"`+exact+`"`, Quote(exact))
	require.Equal(t, `"`+exact+`"... (1000 bytes)`, Quote(strings.Repeat("a", 1000)))
}

// TestErrorf: the message starts with the format and the file name, and %w wraps.
func TestErrorf(t *testing.T) {
	t.Parallel()
	err := Errorf("gguf", "m.gguf", "tensor %s: %w", Quote("x"), io.ErrUnexpectedEOF)
	require.EqualError(t, err, `gguf: m.gguf: tensor "x": unexpected EOF`)
	require.True(t, errors.Is(err, io.ErrUnexpectedEOF))
}
