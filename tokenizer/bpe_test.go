package tokenizer

import (
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// tinyVocab is a hand-built byte-level vocabulary: the 256 byte characters
// (id = byte value), then the given extra tokens, then "<|end|>" (control,
// EOS) and "<sep>" (user-defined).
func tinyVocab(merges []string, extra ...string) BPEVocab {
	v := BPEVocab{Merges: merges, Pre: "gpt-2", BOS: -1, UNK: -1, PAD: -1, EOT: -1}
	for b := range 256 {
		v.Tokens = append(v.Tokens, byteCharStr[b])
		v.Types = append(v.Types, TypeNormal)
	}
	for _, e := range extra {
		v.Tokens = append(v.Tokens, e)
		v.Types = append(v.Types, TypeNormal)
	}
	v.Tokens = append(v.Tokens, "<|end|>", "<sep>")
	v.Types = append(v.Types, TypeControl, TypeUserDefined)
	v.EOS = len(v.Tokens) - 2
	return v
}

// newTiny builds a BPE from tinyVocab.
func newTiny(t testing.TB, merges []string, extra ...string) *BPE {
	t.Helper()
	tok, err := NewBPE(tinyVocab(merges, extra...))
	require.NoError(t, err)
	return tok
}

// toTexts maps ids to their vocabulary texts, for readable assertions.
func toTexts(tok *BPE, ids []int) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, tok.TokenText(id))
	}
	return out
}

func TestBPEMergeOrderByRank(t *testing.T) {
	t.Parallel()

	// The lower-ranked (earlier) merge wins, whatever its position.
	tok := newTiny(t, []string{"a b", "b c"}, "ab", "bc")
	require.Equal(t, []string{"ab", "c"}, toTexts(tok, tok.Encode("abc", false)))
	tok = newTiny(t, []string{"b c", "a b"}, "ab", "bc")
	require.Equal(t, []string{"a", "bc"}, toTexts(tok, tok.Encode("abc", false)))

	// Merges build on merges; later ranks apply once their parts exist.
	tok = newTiny(t, []string{"b c", "a b", "a bc", "abc abc"}, "ab", "bc", "abc", "abcabc")
	require.Equal(t, []string{"abcabc"}, toTexts(tok, tok.Encode("abcabc", false)))
	require.Equal(t, []string{"abc", "ab"}, toTexts(tok, tok.Encode("abcab", false)))

	// Equal ranks: the leftmost pair merges first.
	tok = newTiny(t, []string{"a a"}, "aa")
	require.Equal(t, []string{"aa", "a"}, toTexts(tok, tok.Encode("aaa", false)))
	require.Equal(t, []string{"aa", "aa"}, toTexts(tok, tok.Encode("aaaa", false)))

	// A merge whose result is not a token, or a malformed line, is ignored.
	tok = newTiny(t, []string{"x y", "nospace", "a b"}, "ab")
	require.Equal(t, []string{"x", "y", "ab"}, toTexts(tok, tok.Encode("xyab", false)))

	// The first of duplicate merges counts (llama.cpp's bpe_ranks.emplace).
	tok = newTiny(t, []string{"b c", "a b", "b c"}, "ab", "bc")
	require.Equal(t, []string{"a", "bc"}, toTexts(tok, tok.Encode("abc", false)))

	// Merges never cross pre-tokenizer word boundaries: "a b" is two words.
	tok = newTiny(t, []string{"Ġ b", "a Ġ"}, "Ġb", "aĠ")
	require.Equal(t, []string{"a", "Ġb"}, toTexts(tok, tok.Encode("a b", false)))
}

func TestBPEIgnoreMerges(t *testing.T) {
	t.Parallel()

	// Llama 3's ignore_merges: a word that is a token is taken whole, even
	// if the merges could not build it.
	v := tinyVocab([]string{"a b"}, "ab", "abc")
	v.Pre = "llama-bpe"
	tok, err := NewBPE(v)
	require.NoError(t, err)
	require.Equal(t, []string{"abc"}, toTexts(tok, tok.Encode("abc", false)))
	v.Pre = "gpt-2"
	tok, err = NewBPE(v)
	require.NoError(t, err)
	require.Equal(t, []string{"ab", "c"}, toTexts(tok, tok.Encode("abc", false)))
}

func TestBPESpecialTokens(t *testing.T) {
	t.Parallel()

	tok := newTiny(t, []string{"Ġ x"}, "Ġx")
	end, sep := tok.EOS(), tok.EOS()+1

	// Control tokens are text unless special tokens are parsed.
	plain := tok.Encode("a<|end|>", false)
	require.NotContains(t, plain, end)
	require.Equal(t, "a<|end|>", tok.Decode(plain))
	require.Equal(t, []int{'a', end}, tok.EncodeSpecial("a<|end|>", EncodeOptions{ParseSpecial: true}))

	// User-defined tokens are always split out, and render as their text.
	require.Equal(t, []int{'a', sep, int(tok.model.vocab["Ġx"])}, tok.Encode("a<sep> x", false))
	require.Equal(t, "a<sep> x", tok.Decode(tok.Encode("a<sep> x", false)))

	// Control tokens render as nothing, or as their text with DecodeSpecial.
	ids := tok.EncodeSpecial("<|end|>a", EncodeOptions{ParseSpecial: true})
	require.Equal(t, "a", tok.Decode(ids))
	require.Equal(t, "<|end|>a", tok.DecodeSpecial(ids, true))
	require.Nil(t, tok.Piece(end))
	require.Equal(t, []byte("<sep>"), tok.Piece(sep))

	// Longest special token first.
	v := tinyVocab(nil)
	end, sep = v.EOS, v.EOS+1
	v.Tokens = append(v.Tokens, "<sep><sep>")
	v.Types = append(v.Types, TypeUserDefined)
	long := len(v.Tokens) - 1
	tok2, err := NewBPE(v)
	require.NoError(t, err)
	require.Equal(t, []int{long, sep}, tok2.Encode("<sep><sep><sep>", false))

	// LSTRIP / RSTRIP swallow the spaces beside the token.
	v = tinyVocab(nil)
	v.LStrip = make([]bool, len(v.Tokens))
	v.RStrip = make([]bool, len(v.Tokens))
	v.LStrip[sep], v.RStrip[sep] = true, true
	tok3, err := NewBPE(v)
	require.NoError(t, err)
	require.Equal(t, []int{'a', sep, 'b'}, tok3.Encode("a  <sep> \tb", false))

	// EOS ends generation; add flags add BOS / EOS.
	require.True(t, tok3.IsEOG(end))
	require.False(t, tok3.IsEOG('a'))
	v = tinyVocab(nil)
	v.BOS, v.AddBOS, v.AddEOS = sep, true, true
	tok4, err := NewBPE(v)
	require.NoError(t, err)
	require.Equal(t, []int{sep, 'h', 'i', end}, tok4.Encode("hi", true))
	require.True(t, tok4.AddBOS())
	require.True(t, tok4.AddEOS())
	require.Equal(t, []int{'h', 'i'}, tok4.Encode("hi", false))
}

func TestByteLevelAlphabet(t *testing.T) {
	t.Parallel()

	seen := map[rune]bool{}
	for b := range 256 {
		r := byteChar[b]
		require.False(t, seen[r], "byte %#x maps to %U twice", b, r)
		seen[r] = true
		require.True(t, unicode.IsPrint(r) && !unicode.IsSpace(r), "byte %#x maps to %U, which is not printable", b, r)
		got, ok := byteDecode(string(r), nil)
		require.True(t, ok)
		require.Equal(t, []byte{byte(b)}, got)
	}
	// Anchors from GPT-2's encoder.py.
	require.Equal(t, 'Ġ', byteChar[' '])
	require.Equal(t, 'Ċ', byteChar['\n'])
	require.Equal(t, rune(0x100), byteChar[0])
	require.Equal(t, rune(0x121), byteChar[0x7F])
	require.Equal(t, rune(0x143), byteChar[0xAD])
	require.Equal(t, 'A', byteChar['A'])
	require.Equal(t, 'ÿ', byteChar[0xFF])

	tok := newTiny(t, nil)
	for b := range 256 {
		require.Equal(t, []byte{byte(b)}, tok.Piece(b), "Piece(%d)", b)
	}
	// Every ASCII character is its own byte token, and every character
	// comes out as the tokens of its UTF-8 bytes.
	for b := range 128 {
		if b == ' ' || b == '\'' {
			continue // the GPT-2 regex attaches spaces and contractions
		}
		require.Equal(t, []int{b}, tok.Encode(string(rune(b)), false), "byte %#x", b)
	}
	for _, r := range []rune{'é', 'Ġ', '€', '中', '😀', 0x10FFFF, utf8.RuneError} {
		s := string(r)
		var want []int
		for i := 0; i < len(s); i++ {
			want = append(want, int(s[i]))
		}
		require.Equal(t, want, tok.Encode(s, false), "%U", r)
		require.Equal(t, s, tok.Decode(want))
	}
	// Invalid UTF-8 input reads as U+FFFD, one per byte.
	require.Equal(t, []int{0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 'a'}, tok.Encode("\xff\xfea", false))
}

func TestBPEDecodeInvalidUTF8(t *testing.T) {
	t.Parallel()

	// GGUF vocabularies decode as llama.cpp does: the bytes, as they are.
	tok := newTiny(t, nil)
	euro := []int{0xE2, 0x82, 0xAC} // "€"
	require.Equal(t, "€", tok.Decode(euro))
	require.Equal(t, "\xe2\x82", tok.Decode(euro[:2]))
	require.Equal(t, "\xe2\x82A\xac", tok.Decode([]int{0xE2, 0x82, 'A', 0xAC}))
	require.Equal(t, []byte{0xE2}, tok.Piece(0xE2))
	// Ids out of range decode to nothing.
	require.Equal(t, "ab", tok.Decode([]int{-1, 'a', 1 << 20, 'b'}))

	// tokenizer.json vocabularies decode as Hugging Face does: Rust's
	// from_utf8_lossy, one U+FFFD per maximal invalid subpart.
	js := tinyJSON(t, `"decoder": {"type": "ByteLevel"}`)
	require.Equal(t, "€", js.Decode(euro))
	require.Equal(t, "\uFFFD", js.Decode(euro[:2]))
	require.Equal(t, "\uFFFDA\uFFFD", js.Decode([]int{0xE2, 0x82, 'A', 0xAC}))
	require.Equal(t, "\uFFFD\uFFFD", js.Decode([]int{0xFF, 0xC0}))
	require.Equal(t, "\uFFFD\uFFFD\uFFFD", js.Decode([]int{0xED, 0xA0, 0x80}), "a surrogate is three maximal subparts")
	require.Equal(t, "\uFFFD", js.Decode([]int{0xF0, 0x9F, 0x98}))
	require.Equal(t, []byte{0xE2}, js.Piece(0xE2), "Piece keeps partial sequences for streaming")

	// ByteFallback turns an invalid run of <0xNN> tokens into one U+FFFD per byte.
	js = tinyJSON(t, `"decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}`)
	b := func(x byte) int { id, ok := js.TokenID(byteTokenText(x)); require.True(t, ok); return id }
	require.Equal(t, "€", js.Decode([]int{b(0xE2), b(0x82), b(0xAC)}))
	require.Equal(t, "\uFFFD\uFFFDa", js.Decode([]int{b(0xE2), b(0x82), 'a'}))
}

// tinyJSON builds a tokenizer.json with the byte alphabet, the <0xNN>
// tokens, a few more tokens and the given extra top-level fields.
func tinyJSON(t testing.TB, fields string) *BPE {
	t.Helper()
	tok, err := FromTokenizerJSON([]byte(tinyJSONDoc(fields)), nil)
	require.NoError(t, err)
	return tok.(*BPE)
}

func TestLossyUTF8(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"\xe2\x82\xac", "€"},
		{"\xe2\x82", "\uFFFD"},
		{"\xe2\x82A", "\uFFFDA"},
		{"\xe0\x80", "\uFFFD\uFFFD"}, // E0 80: 80 cannot follow E0
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"a\xffb", "a\uFFFDb"},
		{"\xf0\x9f\x98\x80\xf0\x9f", "😀\uFFFD"},
	} {
		require.Equal(t, tc.want, lossyUTF8([]byte(tc.in)), "%q", tc.in)
	}
}

func TestLlamaPreTokenizers(t *testing.T) {
	t.Parallel()

	words := func(pre, s string) []string {
		v := tinyVocab(nil)
		v.Pre = pre
		tok, err := NewBPE(v)
		require.NoError(t, err, pre)
		var out []string
		for _, p := range tok.pre.preTokenize([]splitPiece{{text: s, first: true}}) {
			b, ok := byteDecode(p.text, nil)
			require.True(t, ok)
			out = append(out, string(b))
		}
		return out
	}
	require.Equal(t, []string{"Hello", ",", " world", "'s", " 1234", "  ", " x", "\n"}, words("gpt-2", "Hello, world's 1234   x\n"))
	require.Equal(t, []string{"Hello", ",", " world", "'S", " ", "123", "4", "  ", " x", "\n"}, words("llama-bpe", "Hello, world'S 1234   x\n"))
	require.Equal(t, []string{"Hello", ",", " world", " ", "1", "2", "3", "4"}, words("qwen2", "Hello, world 1234"))
	require.Equal(t, []string{"abc", " ", "1", "2", "3", " x"}, words("starcoder", "abc 123 x"))
	require.Equal(t, words("starcoder", "abc 123 x"), words("smollm", "abc 123 x"))
	require.Equal(t, words("starcoder", "abc 123 x"), words("refact", "abc 123 x"))
	require.Equal(t, []string{"Hello", ",", " world", "!", " ", "123", "4"}, words("default", "Hello, world! 1234"))
	require.Equal(t, words("default", "Hello, world! 1234"), words("", "Hello, world! 1234"))
	require.Equal(t, []string{"a", "+=`", "b", " ", "123", "45"}, words("falcon", "a+=`b 12345"))
	require.Equal(t, []string{"Hello", " world", ",", " ", "你好", " ", "123", "\n"}, words("deepseek-llm", "Hello world, 你好 123\n"))

	// Every supported name builds and round-trips text.
	for _, name := range preTypeNames() {
		v := tinyVocab(nil)
		v.Pre = name
		tok, err := NewBPE(v)
		require.NoError(t, err, name)
		s := "Hello, World! It's 2024…\n\t你好 🙂 ١٢٣ x  "
		require.Equal(t, s, tok.Decode(tok.Encode(s, false)), name)
	}
	_, err := NewBPE(BPEVocab{Tokens: []string{"a"}, Pre: "nonesuch", BOS: -1, EOS: -1, UNK: -1, PAD: -1, EOT: -1})
	require.Error(t, err)
	require.Contains(t, err.Error(), `"nonesuch"`)
	require.Contains(t, err.Error(), "llama-bpe")
}

func TestNewBPEErrors(t *testing.T) {
	t.Parallel()

	ok := tinyVocab(nil)
	for _, tc := range []struct {
		name string
		edit func(v *BPEVocab)
		want string
	}{
		{"no tokens", func(v *BPEVocab) { v.Tokens, v.Types = nil, nil }, "no tokens"},
		{"types length", func(v *BPEVocab) { v.Types = v.Types[:3] }, "token types"},
		{"lstrip length", func(v *BPEVocab) { v.LStrip = []bool{true} }, "LStrip"},
		{"rstrip length", func(v *BPEVocab) { v.RStrip = []bool{true} }, "RStrip"},
		{"bos range", func(v *BPEVocab) { v.BOS = 99999 }, "BOS id 99999"},
		{"eog range", func(v *BPEVocab) { v.EOG = []int{-3} }, "EOG id -3"},
		{"add bos without bos", func(v *BPEVocab) { v.AddBOS = true }, "AddBOS"},
		{"add eos without eos", func(v *BPEVocab) { v.EOS, v.AddEOS = -1, true }, "AddEOS"},
		{"duplicate", func(v *BPEVocab) { v.Tokens[5] = v.Tokens[6] }, "appears twice"},
		{"bad type", func(v *BPEVocab) { v.Types[7] = 9 }, "unknown type 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ok
			v.Tokens = append([]string(nil), ok.Tokens...)
			v.Types = append([]int32(nil), ok.Types...)
			tc.edit(&v)
			_, err := NewBPE(v)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
