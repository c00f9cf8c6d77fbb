package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
)

// specialInputs are the inputs of the special-token vectors: the special
// tokens of every fixture vocabulary at the start, in the middle and at the
// end of text, next to spaces and to each other; near misses that must stay
// text; and the flagTokens in the contexts each of their flags is about.
var specialInputs = []string{
	// BOS / EOS / UNK strings, and near misses.
	"<s>Hello</s>", "Hello <s> world </s> end", "a</s>b<s>c", " <s> ", "<s><s></s></s>", "<s>",
	"< s >", "<S>", "</S>", "<s >", "< /s>", "<\ns>", "<<s>>", "<s", "s>",
	"<unk>", " <unk> ", "x<unk>y", "<unk><unk>", "<UNK>", "< unk >", "a <unk>\tb", "<unk >",
	// GPT-2's end of text.
	"<|endoftext|>", "a<|endoftext|>b", " <|endoftext|> ", "<|endoftext|><|endoftext|>", "Hi<|endoftext|>\n\nBye",
	"<|endoftext", "|endoftext|>", "<|ENDOFTEXT|>", "<| endoftext |>", "<|endoftext|\n>",
	// ChatML and SmolLM's other special tokens.
	"<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
	"<|im_start|><|im_end|>", "<|im_start |>", "<|im_start|", "<<|im_end|>>", "<|im_end|><|im_end|>x", " <|im_end|> ",
	"<|im_start|>user\n<s>x</s><|endoftext|><|im_end|>", "<repo_name>kvref<file_sep>main.go<|endoftext|>",
	"<jupyter_code>print(1)<jupyter_output>1<empty_output>",
	// Phi-3's chat tokens (each swallows the whitespace after it, but
	// <|endoftext|>), and Llama 3's, which no fixture has.
	"<|user|>\nHello<|end|>\n<|assistant|>\n", "a <|end|>   b", "<|system|>  x</s>  y", "<|endoftext|>  x",
	"<|end|><|end|>  <|end|>\t", " <|assistant|>", "<|placeholder1|>\n\n<|placeholder2|> z",
	"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
	// lstrip.
	"a <|lstrip|> b", "a\t\n<|lstrip|>b", "<|lstrip|>", "  <|lstrip|>  ", "x\u3000\u00a0<|lstrip|>y",
	// rstrip.
	"a <|rstrip|>  b", "x<|rstrip|>\n\ny", "<|rstrip|> ", "x<|rstrip|>\u2003\u00a0y",
	// both, and strips that meet.
	"a  <|both|>  b", " <|both|> <|both|> ", "<|lstrip|><|rstrip|>", "<|rstrip|>   <|lstrip|>", "a <|both|><user> <|both|> b",
	// single_word.
	"a<|word|>b", "a <|word|> b", "<|word|>", "(<|word|>)", "é<|word|>", "1<|word|>", "<|word|>_",
	"cat", "a cat sat", "concat", "cats", "cat's", "the_cat", " cat ", "Cat", "cat cat,cat.", "catcat",
	"[lone]", "x [lone]", "x[lone]", "x  [lone] y", "[lone]s", "([lone])",
	// normalized.
	"<norm>", "a <norm> b", "a<norm>b", "<norm><norm>",
	"a dog", "adog", "a  dog", " dog dog", "dog", "hot dogs",
	// not special, stripped.
	"x <user> y", "x<user>y", "  <user>  ", "<user>", "a <sep>  b", "a<sep>\n b", "<sep><sep>",
	// a prefix of a longer special token.
	"<|im", "<|im_start", "<|imx", "<|im<|im_start|>", "<|im_end",
	// mixed, and nothing special.
	"<s> <|both|> </s>", "Once upon a time <s>there was", "Hello world", "", " ", "\n",
}

// checkSpecialVectors runs the vectors through the tokenizers load gives,
// one subtest per tokenizer (skipped alone when its files are absent), and
// logs how many pass per tokenizer.
func checkSpecialVectors(t *testing.T, vs []testutil.SpecialVector, load func(t *testing.T, name string) Tokenizer) {
	byName := map[string][]testutil.SpecialVector{}
	var order []string
	for _, v := range vs {
		if byName[v.Tokenizer] == nil {
			order = append(order, v.Tokenizer)
		}
		byName[v.Tokenizer] = append(byName[v.Tokenizer], v)
	}
	for _, name := range order {
		t.Run(name, func(t *testing.T) {
			tok := load(t, name)
			pass := 0
			for i, v := range byName[name] {
				if t.Run(fmt.Sprintf("%d/%q", i, shorten(v.Input, 30)), func(t *testing.T) { checkSpecialVector(t, tok, v) }) {
					pass++
				}
			}
			t.Logf("%s: %d/%d vectors pass", name, pass, len(byName[name]))
		})
	}
}

// checkSpecialVector checks one vector.
func checkSpecialVector(t *testing.T, tok Tokenizer, v testutil.SpecialVector) {
	require.Equal(t, orEmpty(v.IDs), orEmpty(tok.EncodeSpecial(v.Input, EncodeOptions{ParseSpecial: true})), "EncodeSpecial(%q, {ParseSpecial})", v.Input)
	require.Equal(t, orEmpty(v.IDsWithSpecial), orEmpty(tok.EncodeSpecial(v.Input, Prompt)), "EncodeSpecial(%q, Prompt)", v.Input)
	if v.Keep != nil {
		require.Equal(t, *v.Keep, tok.DecodeSpecial(v.IDsWithSpecial, true), "DecodeSpecial(%v, true)", v.IDsWithSpecial)
	}
	if v.Skip != nil {
		require.Equal(t, *v.Skip, tok.DecodeSpecial(v.IDsWithSpecial, false), "DecodeSpecial(%v, false)", v.IDsWithSpecial)
		require.Equal(t, *v.Skip, tok.Decode(v.IDsWithSpecial), "Decode(%v)", v.IDsWithSpecial)
	}
}

// TestSpecialVectorsHF checks EncodeSpecial and DecodeSpecial against what
// Hugging Face's tokenizers library (npm tokenizers@0.23.2) gives for text
// with special tokens, for SmolLM's and GPT-2's tokenizer.json (genuine, and
// with added tokens carrying each flag) and for a Llama 2 layout
// tokenizer.json (testdata/special/llama2-260k).
func TestSpecialVectorsHF(t *testing.T) {
	t.Parallel()

	vs := testutil.SpecialVectors(t, "hf-special.jsonl")
	checkSpecialVectors(t, vs, func(t *testing.T, name string) Tokenizer {
		data, config := specialHFTokenizer(t, name)
		tok, err := FromTokenizerJSON(data, config)
		require.NoError(t, err, name)
		return tok
	})
}

// TestSpecialVectorsLlamaServer checks EncodeSpecial against llama.cpp's
// llama-server (its /tokenize endpoint parses special tokens) for GGUF
// vocabularies: stories260K's, and llama.cpp's Llama 2, Phi-3 (every special
// token but <unk>, <s> and <|endoftext|> swallowing the spaces after it) and
// GPT-2 vocabularies.
func TestSpecialVectorsLlamaServer(t *testing.T) {
	t.Parallel()

	vs := testutil.SpecialVectors(t, "llama-server-special.jsonl")
	checkSpecialVectors(t, vs, func(t *testing.T, name string) Tokenizer {
		f, err := gguf.Open(specialGGUFPath(t, name))
		require.NoError(t, err)
		defer f.Close()
		tok, err := FromGGUF(f)
		require.NoError(t, err, name)
		return tok
	})
}

// TestEOGLlamaServer checks the end-of-generation ids against the ones
// llama.cpp's vocabulary loader chose (llama-server's log), for GGUF
// vocabularies that name them (eot_token_id, eom_token_id) and ones where
// they are found by their text. Where several tokens could be the end of
// turn, llama.cpp's pick depends on hash order; then only membership in the
// EOG set is checked.
func TestEOGLlamaServer(t *testing.T) {
	t.Parallel()

	f, err := os.Open(filepath.Join(specialDir, "llama-server-eog.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var want struct {
			Tokenizer string `json:"tokenizer"`
			EOT       int    `json:"eot"`
			EOG       []int  `json:"eog"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &want))
		n++
		t.Run(want.Tokenizer, func(t *testing.T) {
			g, err := gguf.Open(specialGGUFPath(t, want.Tokenizer))
			require.NoError(t, err)
			defer g.Close()
			tok, err := FromGGUF(g)
			require.NoError(t, err)
			require.Equal(t, want.EOG, eogIDs(tok), "end-of-generation ids")
			eot, candidates := -1, 0
			switch x := tok.(type) {
			case *SPM:
				eot = x.eot
			case *BPE:
				eot = x.eot
			}
			for id := range tok.VocabSize() {
				if slices.Contains(eotTexts, tok.TokenText(id)) {
					candidates++
				}
			}
			if _, named := g.Lookup(keyEOT); named || candidates <= 1 {
				require.Equal(t, want.EOT, eot, "end-of-turn id")
			} else {
				require.Contains(t, want.EOG, eot, "end-of-turn id %d (llama.cpp chose %d of %d candidates)", eot, want.EOT, candidates)
			}
		})
	}
	require.NoError(t, sc.Err())
	require.Equal(t, len(specialGGUFNames), n, "one line per vocabulary")
}

// eogIDs lists the ids for which tok.IsEOG holds.
func eogIDs(tok Tokenizer) []int {
	var out []int
	for id := range tok.VocabSize() {
		if tok.IsEOG(id) {
			out = append(out, id)
		}
	}
	return out
}

// TestSpecialVectorsLlama2c runs llama-server's vectors for stories260K's vocabulary
// through the same vocabulary read from llama2.c's tokenizer.bin (tok512.bin), whose
// special tokens kvref types by llama2.c's convention (<unk>, <s>, </s> at ids 0, 1, 2).
func TestSpecialVectorsLlama2c(t *testing.T) {
	t.Parallel()

	vs := testutil.SpecialVectors(t, "llama-server-special.jsonl", "stories260K")
	checkSpecialVectors(t, vs, func(t *testing.T, name string) Tokenizer {
		tok, err := FromLlama2cFile(testutil.Shared(t, "models/tok512.bin"), 512)
		require.NoError(t, err)
		return tok
	})
}
