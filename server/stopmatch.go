package server

// stopMatcher tells a stream how much of its text to hold back because it could be the
// start of a stop string (a matched stop string cuts the text before it, so its first bytes
// must not have been sent). It follows each stop string with the Knuth–Morris–Pratt
// automaton: a choice's state is, per stop string, the length of the longest prefix of it
// that the text ends with, updated in O(1) amortized time per new byte. Each token costs
// O(stop strings × its bytes), however long the text and the stop strings are.
type stopMatcher struct {
	stops []string
	fail  [][]int // fail[i][k]: the longest proper prefix of stops[i][:k] that ends stops[i][:k]
}

// stopState is one text's position in every stop string of its matcher.
type stopState []int

func newStopMatcher(stops []string) *stopMatcher {
	m := &stopMatcher{stops: stops, fail: make([][]int, len(stops))}
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

// start is the state of an empty text.
func (m *stopMatcher) start() stopState { return make(stopState, len(m.stops)) }

// feed advances st over the bytes b appended to its text.
func (m *stopMatcher) feed(st stopState, b []byte) {
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

// held returns how many bytes at the end of the text must wait: the longest end of it that
// is a proper prefix of a stop string.
func (m *stopMatcher) held(st stopState) int {
	n := 0
	for i, p := range m.stops {
		k := st[i]
		if k == len(p) && k > 0 { // matched: the engine ends the choice with this token
			k = m.fail[i][k]
		}
		n = max(n, k)
	}
	return n
}
