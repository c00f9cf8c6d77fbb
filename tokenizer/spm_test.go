package tokenizer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewSPMAccessors(t *testing.T) {
	t.Parallel()

	s := newTestSPM(t, vocabOpts{addEOS: true})
	require.Equal(t, len(testVocab(vocabOpts{}).Tokens), s.VocabSize())
	require.Equal(t, tBOS, s.BOS())
	require.Equal(t, tEOS, s.EOS())
	require.Equal(t, tUNK, s.UNK())
	require.Equal(t, -1, s.PAD())
	require.True(t, s.AddBOS())
	require.True(t, s.AddEOS())
	require.Equal(t, TypeControl, s.TokenType(tBOS))
	require.Equal(t, TypeUndefined, s.TokenType(-1))
}

func TestNewSPMCopiesVocab(t *testing.T) {
	t.Parallel()

	v := testVocab(vocabOpts{})
	s, err := NewSPM(v)
	require.NoError(t, err)
	hello := ids(t, s, "▁hello")[0]
	v.Tokens[hello] = "changed"
	v.Scores[hello] = 100
	v.Types[hello] = TypeControl
	require.Equal(t, "▁hello", s.TokenText(hello))
	require.Equal(t, []byte(" hello"), s.Piece(hello))
}

func TestNewSPMEmptyToken(t *testing.T) {
	t.Parallel()

	v := testVocab(vocabOpts{})
	v.Tokens = append(v.Tokens, "", "")
	v.Scores = append(v.Scores, 0, 0)
	v.Types = append(v.Types, TypeNormal, TypeNormal)
	s, err := NewSPM(v)
	require.NoError(t, err, "empty tokens are renamed, as llama.cpp does, not duplicates")
	n := s.VocabSize()
	require.Equal(t, fmt.Sprintf("[EMPTY_%d]", n-1), s.TokenText(n-1))
}

func TestNewSPMErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name   string
		modify func(v *Vocab)
		errMsg string
	}{
		{"no tokens", func(v *Vocab) { *v = Vocab{} }, "no tokens"},
		{"scores length", func(v *Vocab) { v.Scores = v.Scores[1:] }, "tokens but"},
		{"types length", func(v *Vocab) { v.Types = append(v.Types, 1) }, "token types"},
		{"lstrip length", func(v *Vocab) { v.LStrip = []bool{true} }, "LStrip"},
		{"rstrip length", func(v *Vocab) { v.RStrip = []bool{true} }, "RStrip"},
		{"BOS out of range", func(v *Vocab) { v.BOS = len(v.Tokens) }, "BOS id"},
		{"EOS below -1", func(v *Vocab) { v.EOS = -2 }, "EOS id -2"},
		{"UNK out of range", func(v *Vocab) { v.UNK = 1 << 20 }, "UNK id"},
		{"PAD out of range", func(v *Vocab) { v.PAD = len(v.Tokens) }, "PAD id"},
		{"EOT out of range", func(v *Vocab) { v.EOT = len(v.Tokens) }, "EOT id"},
		{"EOG out of range", func(v *Vocab) { v.EOG = []int{-1} }, "EOG id -1"},
		{"add_bos without BOS", func(v *Vocab) { v.BOS = -1 }, "AddBOS"},
		{"add_eos without EOS", func(v *Vocab) { v.AddEOS, v.EOS = true, -1 }, "AddEOS"},
		{"bad type", func(v *Vocab) { v.Types[5] = 9 }, "unknown type 9"},
		{"bad byte token", func(v *Vocab) { v.Types[tBOS] = TypeByte }, `byte token 1 is "<s>"`},
		{"duplicate", func(v *Vocab) { v.Tokens[4] = v.Tokens[3] }, "appears twice, as ids 3 and 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := testVocab(vocabOpts{})
			tt.modify(&v)
			_, err := NewSPM(v)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.errMsg)
		})
	}
}

func TestParseByteToken(t *testing.T) {
	t.Parallel()

	for b := range 256 {
		got, ok := parseByteToken(byteTokenText(byte(b)))
		require.True(t, ok)
		require.Equal(t, byte(b), got)
	}
	for _, bad := range []string{"<0x4>", "<0xZZ>", "0x41", "<0x41", "<0x411>", "<1x41>"} {
		_, ok := parseByteToken(bad)
		require.False(t, ok, bad)
	}
	b, ok := parseByteToken("<0xab>")
	require.True(t, ok, "lower-case hex is accepted")
	require.Equal(t, byte(0xAB), b)
}
