package stepper

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseAttention: off, a layer's mean and one head parse; a layer or head out of the
// model's range is refused with the range.
func TestParseAttention(t *testing.T) {
	t.Parallel()

	for _, c := range []struct {
		arg  string
		want AttentionChoice
	}{{"", AttentionChoice{-1, -1}}, {"off", AttentionChoice{-1, -1}}, {"2", AttentionChoice{2, -1}}, {"3:7", AttentionChoice{3, 7}}} {
		got, err := ParseAttention(c.arg, 4, 8)
		require.NoError(t, err, "ParseAttention(%q)", c.arg)
		require.Equal(t, c.want, got, "ParseAttention(%q)", c.arg)
	}
	for _, c := range []struct{ arg, msg string }{
		{"4", `want LAYER or LAYER:HEAD with a layer from 0 to 3, got "4"`},
		{"x", `want LAYER or LAYER:HEAD with a layer from 0 to 3, got "x"`},
		{"1:8", `want a head from 0 to 7 after the colon, got "1:8"`},
	} {
		_, err := ParseAttention(c.arg, 4, 8)
		require.EqualError(t, err, c.msg, "ParseAttention(%q)", c.arg)
	}
}
