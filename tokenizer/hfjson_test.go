package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// miniJSON is a small tokenizer.json with every supported kind of
// component, used by the error tests (one field replaced at a time) and as a
// fuzz seed.
const miniJSON = `{
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 9, "content": "<tool>", "single_word": true, "lstrip": true, "rstrip": true, "normalized": true, "special": false}
  ],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Replace", "pattern": {"String": "\t"}, "content": " "}]},
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "\\s+(?!\\S)|\\p{L}+| ?\\p{N}"}, "behavior": "Isolated", "invert": false},
    {"type": "Digits", "individual_digits": true},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}},
  "decoder": {"type": "Sequence", "decoders": [{"type": "ByteLevel"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "continuing_subword_prefix": null,
    "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": false, "ignore_merges": false,
    "vocab": {"<s>": 0, "<unk>": 1, "a": 2, "b": 3, "ab": 4, "Ġ": 5, "Ġab": 6, "1": 7, "2": 8},
    "merges": ["a b", ["Ġ", "ab"]]}
}`

// withField returns miniJSON with one top-level field (or model field, for
// keys starting with "model.") replaced by raw JSON; raw "" deletes it.
func withField(t testing.TB, key, raw string) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(miniJSON), &doc))
	target := doc
	var model map[string]json.RawMessage
	if k, ok := strings.CutPrefix(key, "model."); ok {
		require.NoError(t, json.Unmarshal(doc["model"], &model))
		target, key = model, k
	}
	if raw == "" {
		delete(target, key)
	} else {
		target[key] = json.RawMessage(raw)
	}
	if model != nil {
		m, err := json.Marshal(model)
		require.NoError(t, err)
		doc["model"] = m
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

func TestFromTokenizerJSONMini(t *testing.T) {
	t.Parallel()

	tok := mustJSON(t, []byte(miniJSON))
	// "ab ab" -> "ab", " ", "ab": the Split regex leaves the space alone,
	// as a word of its own.
	require.Equal(t, []int{0, 4, 5, 4}, tok.Encode("ab ab", true))
	require.Equal(t, []int{4, 5, 4}, tok.Encode("ab ab", false))
	require.Equal(t, "ab ab", tok.Decode(tok.Encode("ab ab", true)))
	// Unknown characters become one fused UNK.
	require.Equal(t, []int{4, 1, 4}, tok.Encode("abxyab", false))
	// Digits are split one by one.
	require.Equal(t, []int{7, 8}, tok.Encode("12", false))
	// The special token is parsed only on request; the added (user) token always.
	require.Equal(t, []int{0}, tok.EncodeSpecial("<s>", EncodeOptions{ParseSpecial: true}))
	require.NotContains(t, tok.Encode("<s>", false), 0)
	require.Equal(t, []int{4, 9, 4}, tok.Encode("ab  <tool>  ab", false), "lstrip/rstrip swallow the spaces")
	require.Equal(t, []int{4, 1, 1, 1, 4}, tok.Encode("ab<tool>ab", false), "single_word: not inside a word")
	require.True(t, tok.AddBOS())
	require.Equal(t, 0, tok.BOS())
	require.Equal(t, 1, tok.UNK())
	require.Equal(t, 10, tok.VocabSize())
	require.Equal(t, TypeControl, tok.TokenType(0))
	require.Equal(t, TypeUserDefined, tok.TokenType(9))
	require.Equal(t, TypeUnknown, tok.TokenType(1))
	require.Equal(t, "", tok.Pre())
}

func TestFromTokenizerJSONConfig(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile(testutil.Shared(t, "tokenizer/hf/gpt2/tokenizer.json"))
	require.NoError(t, err)
	tok, err := FromTokenizerJSON(data, nil)
	require.NoError(t, err)
	require.Equal(t, -1, tok.BOS())
	require.Equal(t, 50256, tok.EOS(), "<|endoftext|> is GPT-2's EOS by default")
	require.True(t, tok.IsEOG(50256))
	require.False(t, tok.AddBOS())

	cfg := `{"bos_token": {"__type": "AddedToken", "content": "<|endoftext|>", "lstrip": false},
	         "eos_token": "<|endoftext|>", "add_bos_token": true, "add_eos_token": true}`
	tok, err = FromTokenizerJSON(data, []byte(cfg))
	require.NoError(t, err)
	require.Equal(t, 50256, tok.BOS())
	require.True(t, tok.AddBOS())
	require.Equal(t, []int{50256, 15496, 50256}, tok.Encode("Hello", true))

	// add_bos_token false removes the post-processor's BOS.
	mini := []byte(miniJSON)
	tok, err = FromTokenizerJSON(mini, []byte(`{"add_bos_token": false, "bos_token": "<s>"}`))
	require.NoError(t, err)
	require.False(t, tok.AddBOS())
	require.Equal(t, 0, tok.BOS())
	require.Equal(t, []int{4}, tok.Encode("ab", true))

	for _, tc := range []struct{ cfg, want string }{
		{`{`, "tokenizer_config.json"},
		{`{"bos_token": "<nope>"}`, `bos_token "<nope>" is not in the vocabulary`},
		{`{"eos_token": 7}`, "eos_token is neither a string"},
		{`{"add_eos_token": true}`, "add_eos_token is true but there is no eos_token"},
	} {
		_, err := FromTokenizerJSON(mini, []byte(tc.cfg))
		require.Error(t, err, tc.cfg)
		require.Contains(t, err.Error(), tc.want, tc.cfg)
	}
}

func TestFromTokenizerJSONErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name      string
		key, raw  string
		wantParts []string
	}{
		{"version", "version", `"2.0"`, []string{`unknown version "2.0"`}},
		{"no model", "model", "", []string{"no model"}},
		{"model type", "model.type", `"WordPiece"`, []string{`model type "WordPiece" is not supported`}},
		{"no merges", "model.merges", "", []string{"missing vocab or merges"}},
		{"null merges", "model.merges", "null", []string{"missing vocab or merges"}},
		{"dropout", "model.dropout", `0.1`, []string{"dropout 0.1 is not supported"}},
		{"empty vocab", "model.vocab", `{}`, []string{"empty vocab"}},
		{"negative id", "model.vocab", `{"a": -1}`, []string{`"a" has id -1`}},
		{"huge id", "model.vocab", `{"a": 99999999}`, []string{`"a" has id 99999999`}},
		{"duplicate id", "model.vocab", `{"a": 0, "b": 0}`, []string{`both have id 0`}},
		{"unk missing", "model.unk_token", `"<nope>"`, []string{`unk_token "<nope>" is not in the vocab`}},
		{"merge parts", "model.merges", `["a b c"]`, []string{"merge 0", "two tokens"}},
		{"merge token", "model.merges", `["a z"]`, []string{`merge 0: token "z" is not in the vocab`}},
		{"merge result", "model.merges", `["b a"]`, []string{`merged token "ba" is not in the vocab`}},
		{"merge shape", "model.merges", `[["a"]]`, []string{"merge 0 is neither"}},
		{"normalizer", "normalizer", `{"type": "BertNormalizer"}`, []string{`normalizer type "BertNormalizer" is not supported`}},
		{"precompiled", "normalizer", `{"type": "Sequence", "normalizers": [{"type": "Precompiled"}]}`, []string{`normalizer type "Precompiled"`}},
		{"pre-tokenizer", "pre_tokenizer", `{"type": "BertPreTokenizer"}`, []string{`pre_tokenizer type "BertPreTokenizer" is not supported`}},
		{"split regex", "pre_tokenizer", `{"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated"}`, []string{"pre_tokenizer Split", `regex "(a"`}},
		{"split behavior", "pre_tokenizer", `{"type": "Split", "pattern": {"String": "a"}, "behavior": "Sideways"}`, []string{`unknown behavior "Sideways"`}},
		{"split pattern", "pre_tokenizer", `{"type": "Split", "pattern": {}, "behavior": "Isolated"}`, []string{"pattern is neither"}},
		{"metaspace", "pre_tokenizer", `{"type": "Metaspace", "replacement": "ab"}`, []string{"replacement must be one character"}},
		{"metaspace scheme", "pre_tokenizer", `{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}`, []string{`unknown prepend_scheme "sometimes"`}},
		{"decoder", "decoder", `{"type": "WordPiece"}`, []string{`decoder type "WordPiece" is not supported`}},
		{"strip decoder", "decoder", `{"type": "Strip", "content": " ", "start": -1}`, []string{"out of range"}},
		{"post-processor", "post_processor", `{"type": "Magic"}`, []string{`post_processor type "Magic" is not supported`}},
		{"template token", "post_processor", `{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>"}}, {"Sequence": {"id": "A"}}], "special_tokens": {}}`, []string{`special token "<x>"`}},
		{"template id", "post_processor", `{"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>"}}, {"Sequence": {"id": "A"}}], "special_tokens": {"<x>": {"id": "<x>", "ids": [12345]}}}`, []string{"token id 12345"}},
		{"template no A", "post_processor", `{"type": "TemplateProcessing", "single": [], "special_tokens": {}}`, []string{"no $A"}},
		{"roberta", "post_processor", `{"type": "RobertaProcessing", "sep": ["</s>"], "cls": ["<s>", 0]}`, []string{"RobertaProcessing sep"}},
		{"deep nesting", "normalizer", strings.Repeat(`{"type": "Sequence", "normalizers": [`, 100) + strings.Repeat(`]}`, 100), []string{"nested more than"}},
		{"added token utf8", "added_tokens", `[{"content": "\udc00", "special": true}]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := FromTokenizerJSON(withField(t, tc.key, tc.raw), nil)
			if tc.wantParts == nil {
				// Go's JSON decoder turns a lone surrogate into U+FFFD: valid.
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Nil(t, tok)
			require.Contains(t, err.Error(), "tokenizer.json")
			for _, w := range tc.wantParts {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := FromTokenizerJSON([]byte("not json"), nil)
	require.Error(t, err)
	_, err = FromTokenizerJSON(nil, nil)
	require.Error(t, err)
}
