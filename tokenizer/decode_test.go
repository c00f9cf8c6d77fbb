package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPiece(t *testing.T) {
	t.Parallel()

	s := newTestSPM(t, vocabOpts{})
	tests := []struct {
		token string
		want  []byte
	}{
		{"▁hello", []byte(" hello")},
		{"▁▁", []byte("  ")},
		{"ll", []byte("ll")},
		{"<0x41>", []byte("A")},
		{"<0x0A>", []byte("\n")},
		{"<0xC3>", []byte{0xC3}},
		{"<s>", nil},
		{"</s>", nil},
		{"<unk>", nil},
		{"<|end|>", nil},
		{"<sep>", []byte("<sep>")}, // user-defined tokens render as their text
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			id := ids(t, s, tt.token)[0]
			require.Equal(t, tt.want, s.Piece(id))
			require.Equal(t, tt.token, s.TokenText(id))
		})
	}
	require.Nil(t, s.Piece(-1))
	require.Nil(t, s.Piece(s.VocabSize()))
	require.Equal(t, "", s.TokenText(-1))
	require.Equal(t, "", s.TokenText(s.VocabSize()))
}

func TestPieceUnusedAndUndefined(t *testing.T) {
	t.Parallel()

	v := testVocab(vocabOpts{})
	v.Tokens = append(v.Tokens, "▁unused", "▁undefined")
	v.Scores = append(v.Scores, 0, 0)
	v.Types = append(v.Types, TypeUnused, TypeUndefined)
	s, err := NewSPM(v)
	require.NoError(t, err)
	require.Nil(t, s.Piece(len(v.Tokens)-2))
	require.Nil(t, s.Piece(len(v.Tokens)-1))
}

func TestDecode(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		opts   vocabOpts
		tokens []string
		want   string
	}{
		{"strips the prefix space", vocabOpts{}, []string{"▁hello", "▁world"}, "hello world"},
		{"strips after BOS", vocabOpts{}, []string{"<s>", "▁hello", "▁world"}, "hello world"},
		{"strips one space only", vocabOpts{}, []string{"▁▁", "▁hello"}, "  hello"},
		{"keeps space without prefix", vocabOpts{noSpacePrefix: true}, []string{"▁hello"}, " hello"},
		{"no strip after other control", vocabOpts{}, []string{"<|end|>", "▁hello"}, " hello"},
		{"control tokens vanish", vocabOpts{}, []string{"▁hello", "</s>", "<|end|>", "<unk>", "▁world"}, "hello world"},
		{"bytes reassemble", vocabOpts{}, []string{"▁", "<0xC3>", "<0xA9>", "a"}, "éa"},
		{"incomplete UTF-8 kept as bytes", vocabOpts{}, []string{"a", "<0xC3>"}, "a\xc3"},
		{"empty", vocabOpts{}, nil, ""},
		{"BOS only", vocabOpts{}, []string{"<s>"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSPM(t, tt.opts)
			require.Equal(t, tt.want, s.Decode(ids(t, s, tt.tokens...)))
		})
	}
	s := newTestSPM(t, vocabOpts{})
	require.Equal(t, "a", s.Decode([]int{-5, ids(t, s, "a")[0], s.VocabSize()}), "ids out of range are ignored")
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()

	s := newTestSPM(t, vocabOpts{})
	for _, in := range []string{"", "hello", " hello", "  hello world ", "\n\nhello\tworld", "é🦙 ab", "<|end|>"} {
		t.Run(in, func(t *testing.T) {
			require.Equal(t, in, s.Decode(s.Encode(in, false)))
			require.Equal(t, in, s.Decode(s.Encode(in, true)))
		})
	}
}

func TestIsEOG(t *testing.T) {
	t.Parallel()

	v := testVocab(vocabOpts{})
	v.EOG = []int{tUNK} // any declared id counts
	s, err := NewSPM(v)
	require.NoError(t, err)
	end := ids(t, s, "<|end|>")[0]
	require.True(t, s.IsEOG(tEOS), "EOS")
	require.True(t, s.IsEOG(end), "EOT")
	require.True(t, s.IsEOG(tUNK), "listed in EOG")
	require.False(t, s.IsEOG(tBOS))
	require.False(t, s.IsEOG(ids(t, s, "▁hello")[0]))
	require.False(t, s.IsEOG(-1))

	v = testVocab(vocabOpts{})
	v.EOS, v.EOT = -1, -1
	s, err = NewSPM(v)
	require.NoError(t, err)
	require.False(t, s.IsEOG(-1))
	require.False(t, s.IsEOG(tEOS))
}

// TestDecodeSpecial checks that keepSpecial renders control and unknown
// tokens as their text, as llama.cpp's detokenize with unparse_special does:
// the space prefix is stripped from the first token only, so a leading BOS
// keeps the space of the token after it ("<s> hello", also what Hugging
// Face's Llama 2 decoder gives with skip_special_tokens=false).
func TestDecodeSpecial(t *testing.T) {
	t.Parallel()

	s := newTestSPM(t, vocabOpts{})
	tests := []struct {
		tokens     []string
		keep, skip string
	}{
		{[]string{"<s>", "▁hello", "</s>"}, "<s> hello</s>", "hello"},
		{[]string{"▁hello", "<|end|>", "▁world", "<unk>"}, "hello<|end|> world<unk>", "hello world"},
		{[]string{"<|end|>", "▁hello"}, "<|end|> hello", " hello"},
		{[]string{"▁a", "<sep>", "b"}, "a<sep>b", "a<sep>b"},
		{[]string{"<0xC3>", "<0xA9>", "<s>"}, "é<s>", "é"},
	}
	for _, tt := range tests {
		ids := ids(t, s, tt.tokens...)
		require.Equal(t, tt.keep, s.DecodeSpecial(ids, true), "DecodeSpecial(%v, true)", tt.tokens)
		require.Equal(t, tt.skip, s.DecodeSpecial(ids, false), "DecodeSpecial(%v, false)", tt.tokens)
		require.Equal(t, tt.skip, s.Decode(ids), "Decode(%v)", tt.tokens)
	}
	// Text after a control token gets a space prefix, so only these round-trip.
	for _, in := range []string{"hello</s>", "a b<|end|><unk>", "<s>"} {
		require.Equal(t, in, s.DecodeSpecial(s.EncodeSpecial(in, EncodeOptions{ParseSpecial: true}), true), "round trip of %q", in)
	}
}
