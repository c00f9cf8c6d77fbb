package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// TestTokenizeLlamaCppVectorsCLI runs llama.cpp's tokenizer test vectors of every shared
// vocabulary (../shared/tokenizer/ggml-vocab-*.gguf with .inp/.out; the files hold only a
// vocabulary, of architectures llama, phi3 and gpt2) through kvref tokenize: the ids of
// `tokenize -m VOCAB --no-bos --json -- TEXT` must be llama.cpp's, and
// `tokenize -m VOCAB --decode --json IDS` must give the text back.
func TestTokenizeLlamaCppVectorsCLI(t *testing.T) {
	for _, name := range testutil.VocabNames(t) {
		t.Run(name, func(t *testing.T) {
			path, vs := testutil.VocabVectors(t, name)
			require.NotEmpty(t, vs)
			pass := 0
			for i, v := range vs {
				ok := t.Run(strconv.Itoa(i), func(t *testing.T) {
					out, stderr, code := kvref(t, "tokenize", "-m", path, "--no-bos", "--json", "--", v.Input)
					require.Equal(t, 0, code, stderr)
					var got []int
					require.NoError(t, json.Unmarshal([]byte(out), &got), out)
					require.Equal(t, v.Want, got, "tokenize %q", v.Input)

					out, stderr, code = kvref(t, "tokenize", "-m", path, "--decode", "--json", "--", strings.TrimSpace(out))
					require.Equal(t, 0, code, stderr)
					var text string
					require.NoError(t, json.Unmarshal([]byte(out), &text), out)
					require.Equal(t, v.Input, text, "tokenize --decode %v", got)
				})
				if ok {
					pass++
				}
			}
			t.Logf("%s: %d/%d vectors pass through kvref tokenize", name, pass, len(vs))
		})
	}
}

// tokenizeIDs runs kvref tokenize --json with args and returns the ids.
func tokenizeIDs(t *testing.T, args ...string) []int {
	t.Helper()
	out, stderr, code := kvref(t, append([]string{"tokenize", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var ids []int
	require.NoError(t, json.Unmarshal([]byte(out), &ids), out)
	return ids
}

// decodeText runs kvref tokenize --decode --json with args and returns the text.
func decodeText(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := kvref(t, append([]string{"tokenize", "--decode", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var text string
	require.NoError(t, json.Unmarshal([]byte(out), &text), out)
	return text
}

// TestTokenizeSpecialCLI runs special-token vectors through kvref tokenize --special:
// llama-server's ids for the built-in model's vocabulary, and Hugging Face's ids and
// decodes (--decode, --keep-special) for a directory holding only a Llama 2 layout
// tokenizer.json and tokenizer_config.json.
func TestTokenizeSpecialCLI(t *testing.T) {
	t.Run("builtin", func(t *testing.T) {
		for _, v := range testutil.SpecialVectors(t, "llama-server-special.jsonl", "stories260K") {
			require.Equal(t, v.IDsWithSpecial, tokenizeIDs(t, "--special", "--", v.Input), "tokenize --special %q", v.Input)
			require.Equal(t, v.IDs, tokenizeIDs(t, "--special", "--no-bos", "--", v.Input), "tokenize --special --no-bos %q", v.Input)
		}
	})
	t.Run("tokenizer.json", func(t *testing.T) {
		dir := filepath.Join(testutil.ModuleRoot(t), "tokenizer", "testdata", "special", "llama2-260k")
		for _, v := range testutil.SpecialVectors(t, "hf-special.jsonl", "llama2-260k") {
			require.Equal(t, v.IDsWithSpecial, tokenizeIDs(t, "-m", dir, "--special", "--", v.Input), "tokenize --special %q", v.Input)
			require.Equal(t, v.IDs, tokenizeIDs(t, "-m", dir, "--special", "--no-bos", "--", v.Input), "tokenize --special --no-bos %q", v.Input)
			ids := strings.Trim(fmt.Sprint(v.IDsWithSpecial), "[]")
			require.Equal(t, *v.Keep, decodeText(t, "-m", dir, "--keep-special", "--", ids), "tokenize --decode --keep-special %s", ids)
			require.Equal(t, *v.Skip, decodeText(t, "-m", dir, "--", ids), "tokenize --decode %s", ids)
		}
	})
	// Without --special, special-token text is text.
	require.Equal(t, []int{1, 2}, tokenizeIDs(t, "--special", "</s>"))
	require.NotContains(t, tokenizeIDs(t, "</s>"), 2)
}

// TestTokenizeVocabularyOnly checks that kvref tokenize opens what holds only a vocabulary,
// and says clearly what is wrong otherwise.
func TestTokenizeVocabularyOnly(t *testing.T) {
	gpt2 := testutil.Shared(t, "tokenizer/ggml-vocab-gpt-2.gguf")
	// GPT-2's "Hello world" (llama.cpp's and tiktoken's ids); the file's architecture is gpt2.
	require.Equal(t, []int{15496, 995}, tokenizeIDs(t, "-m", gpt2, "--no-bos", "Hello world"))

	hf := testutil.Shared(t, "tokenizer/hf/smollm")
	// SmolLM's published ids for "Hello, world!" (../shared/tokenizer/hf/PROVENANCE.md).
	require.Equal(t, []int{19556, 28, 905, 17}, tokenizeIDs(t, "-m", hf, "Hello, world!"))

	empty := t.TempDir()
	notes := filepath.Join(empty, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("not a model"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-m", empty, "x"}, "without tokenizer.json"},
		{[]string{"-m", notes, "x"}, "notes.txt"},
		{[]string{"--keep-special", "x"}, "--keep-special needs --decode"},
		{[]string{"--decode", "--special", "1"}, "--decode reads token ids"},
		{[]string{"--decode", "1 512"}, "token id 1 (512) is outside the vocabulary [0, 512)"},
		{[]string{"--decode", "1 x"}, `token id 1 ("x") is not an integer`},
		{[]string{"--decode", "[1, 2"}, "not a JSON array"},
	} {
		_, stderr, code := kvref(t, append([]string{"tokenize"}, c.args...)...)
		require.Equal(t, 1, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// TestTokenizeREADMEExamples keeps the README's special-token commands true (the
// conformance of the ids is TestTokenizeSpecialCLI's).
func TestTokenizeREADMEExamples(t *testing.T) {
	out, _, code := kvref(t, "tokenize", "--special", "<s>Once</s>")
	require.Equal(t, 0, code)
	require.Equal(t, "1 1 403 2\n", out)
	out, _, code = kvref(t, "tokenize", "--decode", "--keep-special", "1 403 2")
	require.Equal(t, 0, code)
	require.Equal(t, "<s> Once</s>\n", out)
	out, _, code = kvref(t, "tokenize", "--decode", "1 403 2")
	require.Equal(t, 0, code)
	require.Equal(t, "Once\n", out)
}
