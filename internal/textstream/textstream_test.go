package textstream

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestReleasableHoldsBackStopPrefixesAndPartialCharacters(t *testing.T) {
	t.Parallel()

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

// TestStopMatcherMatchesTheDefinition: fed a text in random pieces, the matcher holds back
// exactly the longest end of the text that is a proper prefix of a stop string, as the
// definition computed directly says, for random texts over a small alphabet (so that
// stop strings overlap themselves and each other, and match in the middle of the text).
func TestStopMatcherMatchesTheDefinition(t *testing.T) {
	t.Parallel()

	rapid.Check(t, func(rt *rapid.T) {
		word := rapid.StringOfN(rapid.RuneFrom([]rune("ab")), 0, 6, -1)
		stops := rapid.SliceOfN(word, 0, 4).Draw(rt, "stops")
		m := NewStopMatcher(stops)
		st := m.Start()
		var text []byte
		for _, piece := range rapid.SliceOfN(word, 0, 20).Draw(rt, "pieces") {
			text = append(text, piece...)
			m.Feed(st, []byte(piece))
			want := 0
			for _, stop := range stops {
				for k := min(len(stop)-1, len(text)); k > want; k-- {
					if string(text[len(text)-k:]) == stop[:k] {
						want = k
						break
					}
				}
			}
			require.Equal(rt, want, m.Held(st), "text %q, stops %q", text, stops)
		}
	})
}
