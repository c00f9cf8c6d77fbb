package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceEncode is a slow, obviously correct statement of the merge rule:
// while some neighbouring pair concatenates to a token, merge the pair with
// the highest score, the leftmost among equals. It handles one raw-text
// non-empty raw-text fragment (no special tokens), with the space prefix.
func referenceEncode(s *SPM, text string) []int {
	if s.addSpacePrefix {
		text = " " + text
	}
	text = strings.ReplaceAll(text, " ", spaceSymbol)
	var syms []string
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		syms = append(syms, text[off:off+n])
		off += n
	}
	for {
		best := -1
		var bestScore float32
		for i := 0; i+1 < len(syms); i++ {
			id, ok := s.ids[syms[i]+syms[i+1]]
			if ok && (best < 0 || s.scores[id] > bestScore) {
				best, bestScore = i, s.scores[id]
			}
		}
		if best < 0 {
			break
		}
		syms[best] += syms[best+1]
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	out := []int{}
	for _, sym := range syms {
		out = s.emit(sym, out)
	}
	return out
}

// TestHeapMatchesReference compares the heap-driven merge with the
// reference on random text, with the test vocabulary and, when present,
// the Llama 2 vocabulary.
func TestHeapMatchesReference(t *testing.T) {
	t.Parallel()

	vocabs := map[string]*SPM{"hand-built": newTestSPM(t, vocabOpts{})}
	if !testing.Short() {
		if dir, ok := findShared("tokenizer"); ok {
			vocabs["llama-spm"] = loadGGUF(t, filepath.Join(dir, "ggml-vocab-llama-spm.gguf"))
		}
	}
	alphabet := []string{"a", "b", "c", "e", "h", "l", "o", "w", "r", "d", "x", " ", " ", "é", "🦙", "\n", "ll", "he", "th", "in", "1", "3"}
	r := rand.New(rand.NewPCG(3, 4))
	for name, s := range vocabs {
		t.Run(name, func(t *testing.T) {
			for range 2000 {
				var b strings.Builder
				for range 1 + r.IntN(40) {
					b.WriteString(alphabet[r.IntN(len(alphabet))])
				}
				in := b.String()
				require.Equal(t, referenceEncode(s, in), s.Encode(in, false), "input %q", in)
			}
		})
	}
}
