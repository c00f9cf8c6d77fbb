package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/kvref/kvref/internal/testutil"
)

// ggufFromHF turns a byte-level tokenizer.json into GGUF metadata with the
// given tokenizer.ggml.pre, as llama.cpp's converter would: the vocab in id
// order, then the given control tokens; BOS is the control token bos (or
// none if empty).
func ggufFromHF(t *testing.T, data []byte, pre string, controls []string, bos string) *BPE {
	t.Helper()
	var doc struct {
		Model struct {
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	toks := make([]string, len(doc.Model.Vocab))
	for s, id := range doc.Model.Vocab {
		toks[id] = s
	}
	types := make([]int32, len(toks))
	for i := range types {
		types[i] = TypeNormal
	}
	for _, c := range controls {
		if slices.Contains(toks, c) {
			types[slices.Index(toks, c)] = TypeControl
			continue
		}
		toks = append(toks, c)
		types = append(types, TypeControl)
	}
	kvs := []kv{
		{keyModel, "gpt2"}, {keyPre, pre}, {keyTokens, toks}, {keyTypes, types}, {keyMerges, doc.Model.Merges},
	}
	if bos != "" {
		kvs = append(kvs, kv{keyBOS, uint32(slices.Index(toks, bos))})
	}
	tok, err := FromGGUF(makeGGUF(t, kvs))
	require.NoError(t, err)
	return tok.(*BPE)
}

// TestGGUFPreTypesMatchHF checks llama.cpp-style GGUF vocabularies with the
// "llama-bpe", "qwen2", "smollm" and "gpt-2" pre-tokenizers against Hugging
// Face's output for the tokenizer.json with the same regexes, on every
// extra-vector input whose result has no special tokens.
func TestGGUFPreTypesMatchHF(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile(filepath.Join("testdata", "hf-synth.jsonl"))
	require.NoError(t, err)
	gpt2JSON, err := os.ReadFile(testutil.Shared(t, "tokenizer/hf/gpt2/tokenizer.json"))
	require.NoError(t, err)
	smolJSON, err := os.ReadFile(testutil.Shared(t, "tokenizer/hf/smollm/tokenizer.json"))
	require.NoError(t, err)

	llama3 := []string{"<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>"}
	cases := map[string]struct {
		tok      *BPE
		special  func(id int) bool
		nfcOnly  bool // the tokenizer.json normalizes with NFC, llama.cpp does not
		bosFirst bool
	}{
		"llama3-style": {tok: ggufFromHF(t, gpt2JSON, "llama-bpe", llama3, "<|begin_of_text|>"), special: gpt2Special, bosFirst: true},
		"qwen2-style":  {tok: ggufFromHF(t, gpt2JSON, "qwen2", []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, ""), special: gpt2Special, nfcOnly: true},
		"smollm":       {tok: ggufFromHF(t, smolJSON, "smollm", []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, ""), special: func(id int) bool { return id < 17 }},
		"gpt2":         {tok: loadBPEGGUF(t, testutil.Shared(t, "tokenizer/ggml-vocab-gpt-2.gguf")), special: gpt2Special},
	}
	require.True(t, cases["llama3-style"].tok.AddBOS(), "llama-bpe adds BOS by default")
	require.True(t, cases["llama3-style"].tok.IsEOG(50258), "<|eot_id|> ends generation")
	compared := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v synthLine
		require.NoError(t, json.Unmarshal([]byte(line), &v))
		c, ok := cases[v.Tokenizer]
		if !ok || v.Text != nil {
			continue
		}
		if c.nfcOnly && norm.NFC.String(v.Input) != v.Input {
			continue
		}
		if slices.ContainsFunc(v.IDs, c.special) {
			continue
		}
		compared[v.Tokenizer]++
		require.Equal(t, orEmpty(v.IDs), orEmpty(c.tok.Encode(v.Input, false)), "%s: Encode(%q)", v.Tokenizer, v.Input)
		if c.bosFirst {
			require.Equal(t, orEmpty(v.IDsWithSpecial), c.tok.Encode(v.Input, true), "%s: Encode(%q, true)", v.Tokenizer, v.Input)
		}
		require.Equal(t, v.Input, c.tok.Decode(c.tok.Encode(v.Input, true)), "%s: round trip of %q", v.Tokenizer, v.Input)
	}
	for name := range cases {
		require.Greater(t, compared[name], 40, name)
		t.Logf("%s: %d inputs agree with Hugging Face", name, compared[name])
	}
}

// gpt2Special tells the special tokens of vocabularies built on GPT-2's.
func gpt2Special(id int) bool { return id >= 50256 }
