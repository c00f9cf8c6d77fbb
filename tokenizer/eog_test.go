package tokenizer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScanEOG checks the parts of llama.cpp's end-of-generation rules that
// the llama-server vectors (llama.cpp c392e50) cannot show, from
// llama_vocab::impl::load of current llama.cpp: the newer end-of-turn texts,
// FIM repo tokens such as Granite's and SmolLM's <reponame>, and the harmony
// (gpt-oss) rule that drops <|end|> when <|return|> and <|call|> both end
// generation, making it and the <|channel|> family user-defined.
func TestScanEOG(t *testing.T) {
	t.Parallel()

	toks := []string{"a", "</s>", "<|end_of_text|>", "_<EOT>", "<end_of_utterance>", "<reponame>", "<fim_prefix>", "<|im_start|>"}
	s := scanEOG(toks, 1, -1, -1, [3]int{-1, -1, -1})
	require.Equal(t, 2, s.eot, "<|end_of_text|> is the first end-of-turn text")
	require.ElementsMatch(t, []int{1, 2, 3, 4, 5}, s.eog)
	require.ElementsMatch(t, []int{2, 3, 4, 5, 6}, dedup(s.control), "found by text, so control tokens")
	require.Equal(t, -1, s.endDropped)

	harmony := []string{"<|end|>", "<|return|>", "<|call|>", "<|channel|>", "<|message|>", "<|start|>", "<|constrain|>", "x"}
	s = scanEOG(harmony, -1, -1, -1, [3]int{-1, -1, -1})
	require.ElementsMatch(t, []int{1, 2}, s.eog, "<|end|> does not end generation in a harmony vocabulary")
	require.Equal(t, 0, s.endDropped)
	require.ElementsMatch(t, []int{3, 4, 5, 6}, s.userDefined)
	v := Vocab{Tokens: harmony, Types: make([]int32, len(harmony)), EOS: -1, EOT: -1}
	detectEOG(&v, -1, [3]int{-1, -1, -1})
	require.Equal(t, []int32{TypeUserDefined, TypeControl, TypeControl, TypeUserDefined, TypeUserDefined, TypeUserDefined, TypeUserDefined, 0}, v.Types)

	s = scanEOG([]string{"<|end|>", "<|return|>"}, -1, -1, -1, [3]int{-1, -1, -1})
	require.ElementsMatch(t, []int{0, 1}, s.eog, "without <|call|>, <|end|> stays")

	s = scanEOG(toks, 1, 7, 0, [3]int{6, -1, -1})
	require.Equal(t, 7, s.eot, "the file's eot_token_id wins")
	require.Subset(t, s.eog, []int{0, 6, 7}, "the file's eot, eom and fim pad ids end generation")
}

// dedup drops repeated ids, keeping the first.
func dedup(ids []int) []int {
	var out []int
	seen := map[int]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// TestEOGTokenizerJSON checks a tokenizer.json's end-of-generation ids:
// SmolLM's EOS (<|im_end|>, from tokenizer_config.json), and by their text
// <|endoftext|> and the FIM repo token <reponame>, as llama.cpp finds them in
// the same vocabulary; not <|im_start|>.
func TestEOGTokenizerJSON(t *testing.T) {
	t.Parallel()

	data, config := specialHFTokenizer(t, "smollm")
	tok, err := FromTokenizerJSON(data, config)
	require.NoError(t, err)
	b := tok.(*BPE)
	id := func(s string) int {
		i, ok := b.TokenID(s)
		require.True(t, ok, s)
		return i
	}
	require.Equal(t, id("<|im_end|>"), tok.EOS())
	require.Equal(t, []int{id("<|endoftext|>"), id("<|im_end|>"), id("<reponame>")}, eogIDs(tok))
	require.Equal(t, id("<|endoftext|>"), b.eot, "the lowest id with an end-of-turn text")
}

// TestFromHFDir checks a directory holding only a tokenizer, and the
// end-of-generation ids of config.json and generation_config.json.
func TestFromHFDir(t *testing.T) {
	t.Parallel()

	data, config := specialHFTokenizer(t, "llama2-260k")
	dir := t.TempDir()
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	require.False(t, IsHFDir(dir))
	_, err := FromHFDir(dir)
	require.ErrorContains(t, err, "tokenizer.json")

	write("tokenizer.json", string(data))
	require.True(t, IsHFDir(dir))
	tok, err := FromHFDir(dir)
	require.NoError(t, err)
	imEnd := 513 // <|im_end|>, an end-of-generation text
	require.Equal(t, []int{imEnd}, eogIDs(tok), "without tokenizer_config.json there is no EOS")
	require.Equal(t, 1, tok.Encode("hi", true)[0], "the post-processor adds <s>")
	require.Equal(t, -1, tok.EOS())

	write("tokenizer_config.json", string(config))
	tok, err = FromHFDir(dir)
	require.NoError(t, err)
	require.Equal(t, 2, tok.EOS(), "eos_token of tokenizer_config.json")
	require.Equal(t, []int{2, imEnd}, eogIDs(tok))
	write("config.json", `{"eos_token_id": 514, "bos_token_id": 1}`)
	write("generation_config.json", `{"eos_token_id": [2, 515, 516]}`)
	tok, err = FromHFDir(dir)
	require.NoError(t, err)
	require.Equal(t, []int{2, imEnd, 514, 515, 516}, eogIDs(tok))

	write("generation_config.json", `{"eos_token_id": null}`)
	tok, err = FromHFDir(dir)
	require.NoError(t, err)
	require.Equal(t, []int{2, imEnd, 514}, eogIDs(tok))

	for _, bad := range []struct{ file, body, want string }{
		{"generation_config.json", `{"eos_token_id": [2, 9999]}`, "generation_config.json: eos_token_id 9999 is not a token"},
		{"generation_config.json", `{"eos_token_id": "</s>"}`, `generation_config.json: eos_token_id is "</s>"`},
		{"config.json", `{"eos_token_id": -3}`, "config.json: eos_token_id -3 is not a token"},
		{"config.json", `{"eos_token_id": `, "config.json"},
		{"tokenizer_config.json", `{"eos_token": "<nope>"}`, `eos_token "<nope>" is not in the vocabulary`},
	} {
		write(bad.file, bad.body)
		_, err := FromHFDir(dir)
		require.ErrorContains(t, err, bad.want, "%s = %s", bad.file, bad.body)
		os.Remove(filepath.Join(dir, bad.file))
	}
}
