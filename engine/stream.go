package engine

import "unicode/utf8"

// IncompleteUTF8 returns how many bytes at the end of b start a UTF-8 character that is not
// complete yet (0 to 3): text a stream must hold back until the next token completes it.
func IncompleteUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i > len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// Releasable returns how much of a continuation's text so far may be shown while it is
// still being generated: all but an incomplete UTF-8 character at the end and the longest
// tail that could still grow into one of the request's stop strings (a matched stop string
// cuts the text before it, so its first bytes must not have been shown).
func Releasable(text []byte, stops []string) int {
	n := len(text) - IncompleteUTF8(text)
	for _, stop := range stops {
		for k := min(len(stop)-1, len(text)); k > 0; k-- {
			if string(text[len(text)-k:]) == stop[:k] {
				n = min(n, len(text)-k)
				break
			}
		}
	}
	return n
}
