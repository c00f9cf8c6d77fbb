package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// piece is a hand-built vocabulary entry.
type piece struct {
	text  string
	score float32
	typ   int32
}

// Ids of the hand-built test vocabulary: <unk>, <s>, </s>, then (with byte
// tokens) <0x00>..<0xFF>, then the normal pieces of testPieces.
const (
	tUNK = 0
	tBOS = 1
	tEOS = 2
)

// testPieces are the normal and special tokens of the test vocabulary,
// after the byte tokens.
var testPieces = []piece{
	{"▁", -50, TypeNormal},
	{"a", -60, TypeNormal}, {"b", -60, TypeNormal}, {"c", -60, TypeNormal},
	{"d", -60, TypeNormal}, {"e", -60, TypeNormal}, {"h", -60, TypeNormal},
	{"l", -60, TypeNormal}, {"o", -60, TypeNormal}, {"r", -60, TypeNormal},
	{"w", -60, TypeNormal}, {"x", -60, TypeNormal},
	{"ll", -3, TypeNormal}, {"llo", -4, TypeNormal}, {"he", -5, TypeNormal},
	{"hello", -1, TypeNormal}, {"▁hello", -0.5, TypeNormal},
	{"wo", -6, TypeNormal}, {"rld", -7, TypeNormal}, {"ld", -8, TypeNormal},
	{"world", -2, TypeNormal}, {"▁world", -1.5, TypeNormal},
	{"▁▁", -40, TypeNormal}, {"▁a", -9, TypeNormal},
	{"é", -30, TypeNormal}, // only in vocabularies built with withE
	{"<sep>", 0, TypeUserDefined},
	{"<|end|>", 0, TypeControl},
	{"<s", -10, TypeNormal}, // lets "<s>" text merge into the control token
	{"<", -60, TypeNormal}, {"s", -60, TypeNormal}, {">", -60, TypeNormal},
}

// vocabOpts selects variants of the test vocabulary.
type vocabOpts struct {
	noBytes       bool // leave out the 256 byte tokens
	withE         bool // keep "é" as a token of its own
	noSpacePrefix bool // AddSpacePrefix false
	addEOS        bool
}

// testVocab builds the hand-made test vocabulary.
func testVocab(o vocabOpts) Vocab {
	v := Vocab{
		BOS: tBOS, EOS: tEOS, UNK: tUNK, PAD: -1, EOT: -1,
		AddBOS: true, AddEOS: o.addEOS, AddSpacePrefix: !o.noSpacePrefix,
	}
	add := func(p piece) {
		v.Tokens = append(v.Tokens, p.text)
		v.Scores = append(v.Scores, p.score)
		v.Types = append(v.Types, p.typ)
	}
	add(piece{"<unk>", 0, TypeUnknown})
	add(piece{"<s>", 0, TypeControl})
	add(piece{"</s>", 0, TypeControl})
	if !o.noBytes {
		for b := range 256 {
			add(piece{byteTokenText(byte(b)), 0, TypeByte})
		}
	}
	for _, p := range testPieces {
		if p.text == "é" && !o.withE {
			continue
		}
		add(p)
		if p.text == "<|end|>" {
			v.EOT = len(v.Tokens) - 1
		}
	}
	return v
}

// newTestSPM builds an SPM from the test vocabulary.
func newTestSPM(t testing.TB, o vocabOpts) *SPM {
	t.Helper()
	s, err := NewSPM(testVocab(o))
	require.NoError(t, err)
	return s
}

// ids maps token texts to ids, failing on unknown texts.
func ids(t testing.TB, s *SPM, texts ...string) []int {
	t.Helper()
	out := []int{}
	for _, x := range texts {
		id, ok := s.ids[x]
		require.True(t, ok, "no token %q", x)
		out = append(out, id)
	}
	return out
}

// texts maps ids back to token texts, for readable failures.
func texts(s *SPM, ids []int) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, s.TokenText(id))
	}
	return out
}
