package tokenizer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// benchText is about 100 KB of mixed English, digits, punctuation and
// non-Latin text.
var benchText = strings.Repeat("Once upon a time, there was a little girl named Lily. She loved to play outside in the park 1234. "+
	"Ça va? Привет, мир! 你好世界 🙂\n", 700)

// TestEncode100KB checks that encoding 100 KB takes well under a second
// with each kind of tokenizer (the brief's performance bar).
func TestEncode100KB(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	toks := map[string]Tokenizer{
		"gguf gpt-2":        loadBPEGGUF(t, testutil.Shared(t, "tokenizer/ggml-vocab-gpt-2.gguf")),
		"json llama3-style": mustJSON(t, synthTokenizer(t, "llama3-style")),
		"json llama2-style": mustJSON(t, synthTokenizer(t, "llama2-style")),
	}
	require.Greater(t, len(benchText), 100_000)
	for name, tok := range toks {
		start := time.Now()
		ids := tok.Encode(benchText, true)
		d := time.Since(start)
		t.Logf("%s: %d bytes -> %d tokens in %v", name, len(benchText), len(ids), d)
		require.Less(t, d, time.Second, name)
		require.Equal(t, benchText, tok.Decode(ids), name)
	}
}

// mustJSON loads a tokenizer.json.
func mustJSON(t testing.TB, data []byte) *BPE {
	t.Helper()
	tok, err := FromTokenizerJSON(data, nil)
	require.NoError(t, err)
	return tok.(*BPE)
}

// BenchmarkEncodeGPT2 encodes ~100 KB with the GPT-2 GGUF vocabulary.
func BenchmarkEncodeGPT2(b *testing.B) {
	tok := loadBPEGGUF(b, testutil.Shared(b, "tokenizer/ggml-vocab-gpt-2.gguf"))
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		tok.Encode(benchText, false)
	}
}

// BenchmarkEncodeLlama2JSON encodes ~100 KB with a SentencePiece-style
// tokenizer.json (no pre-tokenizer: BPE runs over the whole text).
func BenchmarkEncodeLlama2JSON(b *testing.B) {
	tok := mustJSON(b, synthTokenizer(b, "llama2-style"))
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		tok.Encode(benchText, false)
	}
}
