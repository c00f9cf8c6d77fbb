// Package textstream holds back the end of a growing text that may not be shown yet: an
// incomplete UTF-8 character, or the start of a stop string (for streams that cut the text
// before a stop string, so that its first bytes are never sent).
package textstream

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
// cuts the text before it, so its first bytes must not have been shown). It reads the whole
// text; a stream that grows token by token keeps a StopState instead.
func Releasable(text []byte, stops []string) int {
	m := NewStopMatcher(stops)
	st := m.Start()
	m.Feed(st, text)
	return len(text) - max(IncompleteUTF8(text), m.Held(st))
}

// StopMatcher tells a stream how much of its text to hold back because it could be the
// start of a stop string. It follows each stop string with the Knuth–Morris–Pratt
// automaton: a text's StopState is, per stop string, the length of the longest prefix of it
// that the text ends with, updated in O(1) amortized time per new byte. Each token costs
// O(stop strings × its bytes), however long the text and the stop strings are (searching
// every suffix again, as a server once did, cost O(stop strings × their length²)).
type StopMatcher struct {
	stops []string
	fail  [][]int // fail[i][k]: the longest proper prefix of stops[i][:k] that ends stops[i][:k]
}

// StopState is one text's position in every stop string of its matcher.
type StopState []int

// NewStopMatcher prepares the automata of stops (empty strings never match).
func NewStopMatcher(stops []string) *StopMatcher {
	m := &StopMatcher{stops: stops, fail: make([][]int, len(stops))}
	for i, p := range stops {
		f := make([]int, len(p)+1)
		for k := 1; k < len(p); k++ {
			j := f[k]
			for j > 0 && p[k] != p[j] {
				j = f[j]
			}
			if p[k] == p[j] {
				j++
			}
			f[k+1] = j
		}
		m.fail[i] = f
	}
	return m
}

// Start returns the state of an empty text.
func (m *StopMatcher) Start() StopState { return make(StopState, len(m.stops)) }

// Feed advances st over the bytes b appended to its text.
func (m *StopMatcher) Feed(st StopState, b []byte) {
	for i, p := range m.stops {
		if p == "" {
			continue
		}
		f, k := m.fail[i], st[i]
		for _, c := range b {
			if k == len(p) { // a full match: go on from its longest proper border
				k = f[k]
			}
			for k > 0 && p[k] != c {
				k = f[k]
			}
			if p[k] == c {
				k++
			}
		}
		st[i] = k
	}
}

// Held returns how many bytes at the end of st's text must wait: the longest end of it that
// is a proper prefix of a stop string.
func (m *StopMatcher) Held(st StopState) int {
	n := 0
	for i, p := range m.stops {
		k := st[i]
		if k == len(p) && k > 0 { // matched: the engine ends the continuation with this token
			k = m.fail[i][k]
		}
		n = max(n, k)
	}
	return n
}
