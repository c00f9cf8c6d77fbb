package tokenizer

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// binTok builds the bytes of a tokenizer.bin by hand.
type binTok []byte

func newBinTok(maxLen int32) binTok {
	return binary.LittleEndian.AppendUint32(nil, uint32(maxLen))
}

// token appends one token: score, length, text.
func (b binTok) token(score float32, text string) binTok {
	return b.raw(score, int32(len(text)), text)
}

// raw appends a token whose stored length may disagree with its text.
func (b binTok) raw(score float32, n int32, text string) binTok {
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(score))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	return append(b, text...)
}

// specials appends <unk>, <s>, </s>.
func (b binTok) specials() binTok {
	return b.token(0, "<unk>").token(0, "<s>").token(0, "</s>")
}

// spmOf asserts tok is an *SPM.
func spmOf(t *testing.T, tok Tokenizer) *SPM {
	t.Helper()
	s, ok := tok.(*SPM)
	require.True(t, ok, "got %T, want *SPM", tok)
	return s
}

// TestLlama2cMatchesGGUF loads tok512.bin, the llama2.c form of the
// stories260K vocabulary, and requires the very tokenizer the GGUF file's
// metadata gives: same pieces, scores, types, special ids and flags, and the
// same ids for the golden prompts.
func TestLlama2cMatchesGGUF(t *testing.T) {
	t.Parallel()

	binPath := testutil.Shared(t, "models/tok512.bin")
	fromGGUF := loadGGUF(t, testutil.Shared(t, "models/stories260K.gguf"))
	tok, err := FromLlama2cFile(binPath, 512)
	require.NoError(t, err)
	fromBin := spmOf(t, tok)

	require.Equal(t, fromGGUF.text, fromBin.text)
	require.Equal(t, fromGGUF.scores, fromBin.scores)
	require.Equal(t, fromGGUF.types, fromBin.types)
	require.Equal(t, []int{fromGGUF.bos, fromGGUF.eos, fromGGUF.unk, fromGGUF.pad, fromGGUF.eot},
		[]int{fromBin.bos, fromBin.eos, fromBin.unk, fromBin.pad, fromBin.eot})
	require.Equal(t, fromGGUF.eog, fromBin.eog)
	require.Equal(t, []bool{fromGGUF.addBOS, fromGGUF.addEOS, fromGGUF.addSpacePrefix},
		[]bool{fromBin.addBOS, fromBin.addEOS, fromBin.addSpacePrefix})

	// Reading every token to the end of the file gives the same vocabulary.
	all, err := FromLlama2cFile(binPath, 0)
	require.NoError(t, err)
	require.Equal(t, 512, all.VocabSize())

	for _, g := range testutil.Goldens(t, "stories260K") {
		require.Equal(t, g.PromptIDs, fromBin.Encode(g.Prompt, true), "%s: %q", g.Name, g.Prompt)
		require.Equal(t, fromGGUF.Encode(g.Prompt, true), fromBin.Encode(g.Prompt, true), "%s", g.Name)
	}
	for _, s := range []string{"", " ", "Once upon a time", "Lily's ball\n\n  went  é 🦙 \x00 <s> </s>", "ТЕКСТ 123"} {
		require.Equal(t, fromGGUF.Encode(s, true), fromBin.Encode(s, true), "%q", s)
		ids := fromBin.Encode(s, false)
		require.Equal(t, fromGGUF.Decode(ids), fromBin.Decode(ids), "%q", s)
	}
}

// TestLlama2cLlamaVocabRoundTrip writes Llama 2's 32000-token vocabulary as a
// tokenizer.bin, reads it back and requires llama.cpp's expected ids for every
// test vector.
func TestLlama2cLlamaVocabRoundTrip(t *testing.T) {
	t.Parallel()

	dir := testutil.Shared(t, "tokenizer")
	orig := loadGGUF(t, filepath.Join(dir, "ggml-vocab-llama-spm.gguf"))
	var buf bytes.Buffer
	require.NoError(t, WriteLlama2c(&buf, Vocab{Tokens: orig.text, Scores: orig.scores}))
	tok, err := FromLlama2c(buf.Bytes(), orig.VocabSize())
	require.NoError(t, err)
	s := spmOf(t, tok)
	require.Equal(t, orig.text, s.text)
	require.Equal(t, orig.scores, s.scores)
	require.Equal(t, orig.types, s.types)

	_, vs := testutil.VocabVectors(t, "llama-spm")
	for _, v := range vs {
		got := s.Encode(v.Input, false)
		if got == nil {
			got = []int{}
		}
		require.Equal(t, v.Want, got, "Encode(%q)", v.Input)
	}
}

// TestLlama2cRoundTrip writes the hand-made test vocabulary and reads it back.
func TestLlama2cRoundTrip(t *testing.T) {
	t.Parallel()

	v := testVocab(vocabOpts{withE: true})
	var buf bytes.Buffer
	require.NoError(t, WriteLlama2c(&buf, v))

	// "▁" is stored as a space, as llama2.c's exporter does.
	require.Contains(t, buf.String(), " hello")
	require.NotContains(t, buf.String(), "▁")
	require.Equal(t, uint32(len("<|end|>")), binary.LittleEndian.Uint32(buf.Bytes()), "max_token_length")

	tok, err := FromLlama2c(buf.Bytes(), len(v.Tokens))
	require.NoError(t, err)
	s := spmOf(t, tok)
	require.Equal(t, v.Tokens, s.text)
	require.Equal(t, v.Scores, s.scores)
	for id, typ := range s.types {
		want := TypeNormal
		switch {
		case id == tUNK:
			want = TypeUnknown
		case id == tBOS || id == tEOS || v.Tokens[id] == "<|end|>": // <|end|> is found by its text, as in GGUF loading
			want = TypeControl
		case v.Types[id] == TypeByte:
			want = TypeByte
		}
		require.Equal(t, want, typ, "type of %q", v.Tokens[id])
	}
	require.Equal(t, []int{tBOS, tEOS, tUNK}, []int{s.BOS(), s.EOS(), s.UNK()})
	require.True(t, s.AddBOS())
	require.True(t, s.IsEOG(tEOS))
	require.Equal(t, ids(t, s, "▁hello", "▁world"), s.Encode("hello world", false))
}

// TestLlama2cNewerExporter reads the texts later versions of llama2.c's
// exporter write: "\n<s>\n", "\n</s>\n" and raw bytes for the byte tokens.
func TestLlama2cNewerExporter(t *testing.T) {
	t.Parallel()

	b := newBinTok(8).token(0, "<unk>").token(0, "\n<s>\n").token(0, "\n</s>\n")
	for c := range 256 {
		b = b.token(0, string(rune(c)))
	}
	b = b.token(-1, " a").token(-2, "a")
	tok, err := FromLlama2c(b, 0)
	require.NoError(t, err)
	s := spmOf(t, tok)
	require.Equal(t, "<s>", s.TokenText(1))
	require.Equal(t, "</s>", s.TokenText(2))
	require.Equal(t, "<0x20>", s.TokenText(3+0x20))
	require.Equal(t, TypeByte, s.TokenType(3+0xC3))
	require.Equal(t, "▁a", s.TokenText(259))
	require.Equal(t, []int{1, 259, 3 + 'b'}, s.Encode("ab", true))
	require.Equal(t, "aé", s.Decode(s.Encode("aé", true)))
}

// TestLlama2cSmallVocab: vocabularies without the usual special tokens work,
// and the ids that do not exist are -1.
func TestLlama2cSmallVocab(t *testing.T) {
	t.Parallel()

	tok, err := FromLlama2c(newBinTok(1).token(0, "x"), 1)
	require.NoError(t, err)
	s := spmOf(t, tok)
	require.Equal(t, []int{0, -1, -1}, []int{s.UNK(), s.BOS(), s.EOS()})
	require.False(t, s.AddBOS())
	require.Equal(t, TypeUnknown, s.TokenType(0))
}

func TestLlama2cRejectsBadFiles(t *testing.T) {
	t.Parallel()

	good := newBinTok(5).specials()
	cases := []struct {
		name  string
		data  []byte
		vocab int
		want  []string
	}{
		{"empty", nil, 3, []string{"0 bytes", "too short", "max_token_length"}},
		{"short header", []byte{5, 0}, 3, []string{"2 bytes", "too short"}},
		{"zero max length", newBinTok(0).specials(), 3, []string{"max_token_length is 0"}},
		{"negative max length", newBinTok(-7).specials(), 3, []string{"max_token_length is -7"}},
		{"negative vocab", good, -1, []string{"vocabulary size -1"}},
		{"huge vocab", good, 1 << 30, []string{"vocabulary size 1073741824"}},
		{"fewer tokens than vocab", good, 4, []string{"token 3", "offset 40", "needs 8 bytes", "has 0 left", "truncated"}},
		{"score cut", good[:len(good)-10], 3, []string{"token 2 ", "needs 8 bytes", "has 2 left"}},
		{"text cut", good[:len(good)-2], 3, []string{"token 2 ", "length 4", "has 2 bytes left"}},
		{"text cut short", append(newBinTok(5).token(0, "<unk>").token(0, "<s>"), 0, 0, 0, 0, 4, 0, 0, 0, '<'), 3,
			[]string{"token 2", "length 4", "1 bytes left", "truncated"}},
		{"negative length", newBinTok(5).token(0, "<unk>").raw(0, -1, ""), 2, []string{"token 1", "length -1", "want 0..5"}},
		{"huge length", newBinTok(math.MaxInt32).token(0, "<unk>").raw(0, math.MaxInt32, "abc"), 2,
			[]string{"token 1", "length 2147483647", "3 bytes left"}},
		{"longer than max_token_length", newBinTok(3).token(0, "<unk>"), 1, []string{"token 0", "length 5", "want 0..3"}},
		{"NaN score", newBinTok(5).token(float32(math.NaN()), "<unk>"), 1, []string{"token 0", "score NaN"}},
		{"trailing bytes", good, 2, []string{"12 bytes left after the 2 tokens"}},
		{"no tokens", newBinTok(5), 0, []string{"no tokens"}},
		{"duplicate", newBinTok(5).specials().token(0, "a").token(-1, "a"), 5, []string{`"a" appears twice`, "ids 3 and 4"}},
		{"duplicate after ▁ restore", newBinTok(5).specials().token(0, " ").token(-1, "▁"), 5, []string{"appears twice"}},
		{"bad byte token", newBinTok(6).specials().token(0, "<0xZZ>"), 4, nil}, // a normal token: accepted
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromLlama2c(c.data, c.vocab)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), "tokenizer.bin")
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := FromLlama2cFile(filepath.Join(t.TempDir(), "missing.bin"), 3)
	require.Error(t, err)
	require.Contains(t, err.Error(), "missing.bin")
}

func TestWriteLlama2cRejects(t *testing.T) {
	t.Parallel()

	var buf bytes.Buffer
	require.ErrorContains(t, WriteLlama2c(&buf, Vocab{}), "no tokens")
	require.ErrorContains(t, WriteLlama2c(&buf, Vocab{Tokens: []string{"a"}}), "1 tokens but 0 scores")
	require.ErrorContains(t, WriteLlama2c(&buf, Vocab{Tokens: []string{"a b"}, Scores: []float32{0}}), `token 0 ("a b") contains a space`)
}

// FuzzFromLlama2c feeds arbitrary bytes to FromLlama2c. It must not panic;
// what it accepts must survive WriteLlama2c and read back identically, and
// must encode and decode without panicking.
func FuzzFromLlama2c(f *testing.F) {
	f.Add([]byte(newBinTok(5).specials()), 3)
	f.Add([]byte(newBinTok(5).specials()), 0)
	f.Add([]byte(newBinTok(5).specials().token(-1, " a").token(-2, "<0x41>").token(-3, "a")), 0)
	f.Add([]byte(newBinTok(math.MaxInt32).raw(0, math.MaxInt32, "x")), 1)
	var buf bytes.Buffer
	require.NoError(f, WriteLlama2c(&buf, testVocab(vocabOpts{})))
	f.Add(buf.Bytes(), 0)

	f.Fuzz(func(t *testing.T, data []byte, vocab int) {
		tok, err := FromLlama2c(data, vocab)
		if err != nil {
			require.False(t, tok != nil, "non-nil tokenizer with an error")
			return
		}
		require.Falsef(t, vocab > 0 && tok.VocabSize() != vocab, "asked for %d tokens, got %d", vocab, tok.VocabSize())
		s := tok.(*SPM)
		ids := s.Encode("Hello, world! "+strconv.Itoa(len(data))+" é\n", true)
		for _, id := range ids {
			require.Falsef(t, id < 0 || id >= s.VocabSize(), "Encode produced id %d outside [0, %d)", id, s.VocabSize())
		}
		s.Decode(ids)

		var out bytes.Buffer
		v := Vocab{Tokens: slices.Clone(s.text), Scores: s.scores}
		for id, text := range v.Tokens {
			if text == "[EMPTY_"+strconv.Itoa(id)+"]" { // NewSPM's name for an empty token
				v.Tokens[id] = ""
			}
		}
		require.NoError(t, WriteLlama2c(&out, v), "cannot write back an accepted vocabulary")
		again, err := FromLlama2c(out.Bytes(), s.VocabSize())
		require.NoError(t, err, "rewritten tokenizer.bin does not load")
		a := again.(*SPM)
		same := slices.Equal(a.text, s.text) && slices.Equal(a.types, s.types) &&
			slices.EqualFunc(a.scores, s.scores, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
		require.Truef(t, same, "rewritten vocabulary differs:\n%q\n%q", a.text, s.text)
	})
}
