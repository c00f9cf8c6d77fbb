package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestEncode(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name       string
		opts       vocabOpts
		text       string
		addSpecial bool
		want       []string // token texts
	}{
		{"single merged word", vocabOpts{}, "hello", false, []string{"▁hello"}},
		{"two words", vocabOpts{}, "hello world", false, []string{"▁hello", "▁world"}},
		{"BOS when addSpecial", vocabOpts{}, "hello", true, []string{"<s>", "▁hello"}},
		{"EOS when add_eos", vocabOpts{addEOS: true}, "hello", true, []string{"<s>", "▁hello", "</s>"}},
		{"no EOS without addSpecial", vocabOpts{addEOS: true}, "hello", false, []string{"▁hello"}},
		{"no space prefix", vocabOpts{noSpacePrefix: true}, "hello world", false, []string{"hello", "▁world"}},
		{"no space prefix, leading space", vocabOpts{noSpacePrefix: true}, " hello", false, []string{"▁hello"}},
		{"leading space", vocabOpts{}, " hello", false, []string{"▁", "▁hello"}},
		{"two leading spaces", vocabOpts{}, "  hello", false, []string{"▁▁", "▁hello"}},
		{"only a space", vocabOpts{}, " ", false, []string{"▁▁"}},
		{"empty", vocabOpts{}, "", false, []string{}},
		{"empty with BOS", vocabOpts{}, "", true, []string{"<s>"}},
		{"empty with BOS and EOS", vocabOpts{addEOS: true}, "", true, []string{"<s>", "</s>"}},
		{"unmerged letters", vocabOpts{}, "xb", false, []string{"▁", "x", "b"}},
		{"byte fallback", vocabOpts{}, "é", false, []string{"▁", "<0xC3>", "<0xA9>"}},
		{"byte fallback 4-byte char", vocabOpts{}, "🦙", false, []string{"▁", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"}},
		{"byte fallback mid-word", vocabOpts{}, "aéb", false, []string{"▁a", "<0xC3>", "<0xA9>", "b"}},
		{"char token beats bytes", vocabOpts{withE: true}, "é", false, []string{"▁", "é"}},
		{"UNK without byte tokens", vocabOpts{noBytes: true}, "aéb", false, []string{"▁a", "<unk>", "b"}},
		{"UNK per unknown char", vocabOpts{noBytes: true}, "éé", false, []string{"▁", "<unk>", "<unk>"}},
		{"newline as byte", vocabOpts{}, "a\nb", false, []string{"▁a", "<0x0A>", "b"}},
		{"invalid UTF-8 as bytes", vocabOpts{}, "a\xffb", false, []string{"▁a", "<0xFF>", "<0x62>"}},
		{"user-defined token split out", vocabOpts{}, "a<sep>b", false, []string{"▁a", "<sep>", "▁", "b"}},
		{"control text stays text", vocabOpts{}, "x<|end|>", false, []string{"▁", "x", "<", "<0x7C>", "e", "<0x6E>", "d", "<0x7C>", ">"}},
		// "<s" is a normal token and "<s>" the control token with score 0, so
		// the text merges into BOS, exactly as llama.cpp's lookup of every
		// token type does.
		{"control text merges like llama.cpp", vocabOpts{}, "<s>", false, []string{"▁", "<s>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSPM(t, tt.opts)
			got := s.Encode(tt.text, tt.addSpecial)
			require.Equal(t, tt.want, texts(s, got))
		})
	}
}

// TestEncodeScoreOrder checks that merges happen highest score first and,
// on equal scores, leftmost first.
func TestEncodeScoreOrder(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name         string
		abScore      float32
		bcScore      float32
		want         []string
		abcAvailable bool
	}{
		{"ab scores higher", -1, -2, []string{"ab", "c"}, false},
		{"bc scores higher", -2, -1, []string{"a", "bc"}, false},
		{"tie goes left", -1, -1, []string{"ab", "c"}, false},
		// Once "bc" has merged, "a"+"bc" is a new candidate for "abc".
		{"merge continues from the winner", -2, -1, []string{"abc"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Vocab{
				Tokens: []string{"<unk>", "a", "b", "c", "ab", "bc"},
				Scores: []float32{0, -10, -10, -10, tt.abScore, tt.bcScore},
				Types:  []int32{TypeUnknown, 1, 1, 1, 1, 1},
				BOS:    -1, EOS: -1, UNK: 0, PAD: -1, EOT: -1,
			}
			if tt.abcAvailable {
				v.Tokens = append(v.Tokens, "abc")
				v.Scores = append(v.Scores, -5)
				v.Types = append(v.Types, TypeNormal)
			}
			s, err := NewSPM(v)
			require.NoError(t, err)
			require.Equal(t, tt.want, texts(s, s.Encode("abc", true)))
		})
	}
}

func TestEncodeSpecial(t *testing.T) {
	t.Parallel()

	s := newTestSPM(t, vocabOpts{})
	tests := []struct {
		name         string
		text         string
		parseSpecial bool
		want         []string
	}{
		{"control tokens parsed", "<s>hello</s>", true, []string{"<s>", "▁hello", "</s>"}},
		{"space prefix after each special token", "hello<|end|>world", true, []string{"▁hello", "<|end|>", "▁world"}},
		{"adjacent specials", "<|end|><|end|>", true, []string{"<|end|>", "<|end|>"}},
		{"user-defined token either way", "a<sep>b", false, []string{"▁a", "<sep>", "▁", "b"}},
		{"not parsed", "hello</s>", false, []string{"▁hello", "<", "<0x2F>", "s", ">"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, texts(s, s.EncodeSpecial(tt.text, EncodeOptions{AddSpecial: false, ParseSpecial: tt.parseSpecial})))
		})
	}
}

func TestEncodeStripAttributes(t *testing.T) {
	t.Parallel()

	v := testVocab(vocabOpts{})
	sep := -1
	for id, x := range v.Tokens {
		if x == "<sep>" {
			sep = id
		}
	}
	require.GreaterOrEqual(t, sep, 0)
	tests := []struct {
		name           string
		lstrip, rstrip bool
		want           []string
	}{
		{"none", false, false, []string{"▁a", "▁", "<sep>", "▁▁", "b"}},
		{"rstrip", false, true, []string{"▁a", "▁", "<sep>", "▁", "b"}},
		{"lstrip", true, false, []string{"▁a", "<sep>", "▁▁", "b"}},
		{"both", true, true, []string{"▁a", "<sep>", "▁", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v.LStrip = make([]bool, len(v.Tokens))
			v.RStrip = make([]bool, len(v.Tokens))
			v.LStrip[sep], v.RStrip[sep] = tt.lstrip, tt.rstrip
			s, err := NewSPM(v)
			require.NoError(t, err)
			require.Equal(t, tt.want, texts(s, s.Encode("a <sep> b", false)))
		})
	}
}

// TestEncodeLargeInput checks that 100 KB of text encodes quickly (the
// merge queue is a heap, not a rescan) and decodes back.
func TestEncodeLargeInput(t *testing.T) {
	s := newTestSPM(t, vocabOpts{})
	words := []string{"hello", "world", "abc", "é", "llo", "🦙", "he", "x", "\n"}
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 100_000 {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(3) > 0 {
			b.WriteByte(' ')
		}
	}
	text := strings.TrimLeft(b.String(), " ")
	// A single word with no spaces is the worst case for the merge queue.
	long := strings.Repeat("hello", 20_000)

	for _, in := range []string{text, long} {
		start := time.Now()
		ids := s.Encode(in, true)
		elapsed := time.Since(start)
		require.Less(t, elapsed, 2*time.Second, "Encode of %d bytes took %v", len(in), elapsed)
		require.Equal(t, in, s.Decode(ids))
	}
}

func BenchmarkEncode100KB(b *testing.B) {
	s := newTestSPM(b, vocabOpts{})
	text := strings.Repeat("hello world abc é x ", 5000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Encode(text, true)
	}
}

// FuzzEncodeDecode checks that Encode never panics and that, for valid
// UTF-8 without U+2581 (which the normalizer cannot tell from an escaped
// space), Decode(Encode(s)) == s. Leading spaces round-trip too: Decode
// strips only the one space the normalizer added. Short inputs are also
// checked against the slow reference merge.
func FuzzEncodeDecode(f *testing.F) {
	for _, seed := range []string{"", " ", "hello world", "  hello", "é🦙\n\t", "a\xffb", "<s>hello</s>", "a<sep> b", "<|end|>"} {
		f.Add(seed)
	}
	s, err := NewSPM(testVocab(vocabOpts{}))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, in string) {
		withBOS := s.Encode(in, true)
		plain := s.Encode(in, false)
		special := s.EncodeSpecial(in, Prompt)
		for _, id := range slices.Concat(withBOS, plain, special) {
			require.Falsef(t, id < 0 || id >= s.VocabSize(), "Encode(%q) produced id %d", in, id)
		}
		if in != "" && len(in) < 300 && !strings.Contains(in, "<sep>") {
			want := referenceEncode(s, in)
			require.Truef(t, slices.Equal(plain, want), "Encode(%q) = %v, reference merge gives %v", in, plain, want)
		}
		if !utf8.ValidString(in) || strings.Contains(in, spaceSymbol) ||
			strings.Contains(in, "<sep>") || strings.Contains(in, "<s>") {
			return // see TestRoundTripExceptions
		}
		require.Equalf(t, in, s.Decode(plain), "Decode(Encode(%q, false))", in)
		require.Equalf(t, in, s.Decode(withBOS), "Decode(Encode(%q, true))", in)
	})
}

// TestRoundTripExceptions documents the inputs for which Decode(Encode(x))
// is not x, in llama.cpp as here.
func TestRoundTripExceptions(t *testing.T) {
	t.Parallel()

	s := newTestSPM(t, vocabOpts{})
	tests := []struct {
		name, in, decoded string
	}{
		{"U+2581 reads as a space", "a▁b", "a b"},
		{"space prefix after a user-defined token", "a<sep>b", "a<sep> b"},
		{"control-token text merged into a control token", "<s>", ""},
		{"invalid UTF-8 swallowing an escaped space", "\xc3 b", "\xc3\xe2\x96\x81b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.decoded, s.Decode(s.Encode(tt.in, false)))
		})
	}
}
