package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReleasableHoldsBackStopPrefixesAndPartialCharacters(t *testing.T) {
	cases := []struct {
		text  string
		stops []string
		want  int
	}{
		{"hello", nil, 5},
		{"hello wor", []string{"world"}, 6},
		{"hello w", []string{"world", "hello"}, 6},
		{"abab", []string{"abc"}, 2},
		{"xyz", []string{"", "q"}, 3},
		{"caf\xc3", nil, 3},               // the first byte of "é"
		{"caf\xc3\xa9", nil, 5},           // "café"
		{"\xe2\x82", nil, 0},              // two bytes of "€"
		{"a\x80", nil, 2},                 // an invalid byte is sent as it is
		{"end\xe2\x82", []string{"d"}, 3}, // both
	}
	for _, c := range cases {
		require.Equal(t, c.want, Releasable([]byte(c.text), c.stops), "%q %q", c.text, c.stops)
	}
}
