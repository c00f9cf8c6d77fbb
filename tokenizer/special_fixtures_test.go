package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
)

// The fixtures of the special-token vectors (testdata/special, see its
// README.md). Hugging Face's tokenizers library and llama.cpp's llama-server
// produced the vectors from the tokenizers these helpers build;
// testdata/gen regenerates them.

// specialDir holds the special-token fixtures and vectors.
var specialDir = filepath.Join("testdata", "special")

// flagToken is an added token of the special-token fixtures.
type flagToken struct {
	content                                     string
	special, normalized, lstrip, rstrip, single bool
}

// flagTokens are added tokens with each of Hugging Face's flags, alone and
// combined, special and not: appended to the tokenizers of the vectors.
var flagTokens = []flagToken{
	{content: "<|lstrip|>", special: true, lstrip: true},
	{content: "<|rstrip|>", special: true, rstrip: true},
	{content: "<|both|>", special: true, lstrip: true, rstrip: true},
	{content: "<|word|>", special: true, single: true},
	{content: "<norm>", special: true, normalized: true},
	{content: "<|im", special: true},
	{content: "cat", normalized: true, single: true},
	{content: " dog", normalized: true},
	{content: "<user>", lstrip: true, rstrip: true},
	{content: "<sep>", rstrip: true},
	{content: "[lone]", lstrip: true, single: true},
}

// chatTokens are ChatML's control tokens, added where a vocabulary lacks them.
var chatTokens = []flagToken{
	{content: "<|im_start|>", special: true},
	{content: "<|im_end|>", special: true},
}

// specialHFNames lists the tokenizer.json files of the special-token vectors:
// the genuine SmolLM and GPT-2 files (../shared), the same with chatTokens
// and flagTokens added, and llama2-260k, the project's own Llama 2 layout
// tokenizer.json (testdata/special/llama2-260k).
var specialHFNames = []string{"smollm", "gpt2", "smollm-flags", "gpt2-flags", "llama2-260k"}

// specialHFTokenizer returns the tokenizer.json and tokenizer_config.json
// (nil when there is none) of one of specialHFNames.
func specialHFTokenizer(t testing.TB, name string) (data, config []byte) {
	t.Helper()
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		return b
	}
	switch name {
	case "smollm", "gpt2":
		dir := testutil.Shared(t, filepath.Join("tokenizer", "hf", name))
		return read(filepath.Join(dir, "tokenizer.json")), read(filepath.Join(dir, "tokenizer_config.json"))
	case "smollm-flags", "gpt2-flags":
		base := name[:len(name)-len("-flags")]
		dir := testutil.Shared(t, filepath.Join("tokenizer", "hf", base))
		return withAddedTokens(t, read(filepath.Join(dir, "tokenizer.json")), slices.Concat(chatTokens, flagTokens)),
			read(filepath.Join(dir, "tokenizer_config.json"))
	case "llama2-260k":
		dir := filepath.Join(specialDir, name)
		data := read(filepath.Join(dir, "tokenizer.json"))
		require.NotNil(t, data, "%s/tokenizer.json is missing", dir)
		return data, read(filepath.Join(dir, "tokenizer_config.json"))
	}
	require.FailNowf(t, "no special-token fixture", "%q", name)
	return nil, nil
}

// withAddedTokens appends added tokens to a tokenizer.json, with the ids the
// tokenizers library gives them (the next free ids); a token whose content
// is already an added token is left out.
func withAddedTokens(t testing.TB, data []byte, toks []flagToken) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	next := 0
	for _, id := range doc["model"].(map[string]any)["vocab"].(map[string]any) {
		next = max(next, int(id.(float64))+1)
	}
	added, _ := doc["added_tokens"].([]any)
	have := map[string]bool{}
	for _, a := range added {
		m := a.(map[string]any)
		have[m["content"].(string)] = true
		next = max(next, int(m["id"].(float64))+1)
	}
	for _, f := range toks {
		if have[f.content] {
			continue
		}
		added = append(added, addedTok(next, f.content, f.special, f.normalized, f.lstrip, f.rstrip, f.single))
		next++
	}
	doc["added_tokens"] = added
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// llama2260kJSON builds testdata/special/llama2-260k/tokenizer.json: the
// 512-token SentencePiece vocabulary of stories260K (model/builtin, trained
// by Andrej Karpathy for llama2.c, MIT) in the layout of Llama 2's
// tokenizer.json (spmDoc "llama2-style": BPE with byte_fallback, the ▁
// normalizer, the Replace/ByteFallback/Fuse/Strip decoder, added tokens
// <unk> <s> </s>), plus chatTokens and flagTokens with ids from 512 on.
func llama2260kJSON(t testing.TB) []byte {
	t.Helper()
	v := spmVocabOf(t, filepath.Join(testutil.ModuleRoot(t), "model", "builtin", "stories260K.gguf"))
	out, err := json.Marshal(spmDoc(v, "llama2-style"))
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(withAddedTokens(t, out, slices.Concat(chatTokens, flagTokens)), &doc))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	require.NoError(t, enc.Encode(doc))
	return b.Bytes()
}

// llama2260kConfig is the tokenizer_config.json beside it, in the form of
// Llama 2's (BOS added, no EOS).
const llama2260kConfig = `{
  "add_bos_token": true,
  "add_eos_token": false,
  "bos_token": {"content": "<s>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false},
  "eos_token": {"content": "</s>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false},
  "unk_token": {"content": "<unk>", "lstrip": false, "normalized": false, "rstrip": false, "single_word": false},
  "pad_token": null,
  "clean_up_tokenization_spaces": false,
  "legacy": false,
  "model_max_length": 2048,
  "tokenizer_class": "LlamaTokenizer"
}
`

// TestLlama2260kIsGenerated checks that the committed llama2-260k files are
// what llama2260kJSON makes (KVREF_UPDATE_SPECIAL=1 rewrites them).
func TestLlama2260kIsGenerated(t *testing.T) {
	t.Parallel()

	dir := filepath.Join(specialDir, "llama2-260k")
	want := map[string][]byte{"tokenizer.json": llama2260kJSON(t), "tokenizer_config.json": []byte(llama2260kConfig)}
	for name, data := range want {
		path := filepath.Join(dir, name)
		if os.Getenv("KVREF_UPDATE_SPECIAL") != "" {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, data, 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, slices.Equal(data, got), "%s differs from what llama2260kJSON makes: run with KVREF_UPDATE_SPECIAL=1 and regenerate the vectors (testdata/gen)", path)
	}
}

// specialGGUFNames lists the GGUF vocabularies of the llama-server vectors:
// stories260K's (the embedded model), llama.cpp's test vocabularies, and
// two made from stories260K's with end-of-generation tokens added (eogTokens):
// "eog-text", where llama.cpp must find them by their text, and "eog-keys",
// which also names eot_token_id and eom_token_id.
var specialGGUFNames = []string{"stories260K", "llama-spm", "phi-3", "gpt-2", "eog-text", "eog-keys"}

// eogTokens are the tokens added to stories260K's vocabulary for "eog-text"
// and "eog-keys", as normal tokens: llama.cpp (c392e50) recognises all but
// the last two by their text.
var eogTokens = []string{"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|eom_id|>", "<|endoftext|>", "<EOT>",
	"<|fim_prefix|>", "<|fim_pad|>", "<|fim_repo|>", "<|file_sep|>", "<|im_start|>", "<|start_header_id|>"}

// specialGGUFPath returns a GGUF file holding a vocabulary of
// specialGGUFNames (the synthetic ones are written into a temporary directory).
func specialGGUFPath(t testing.TB, name string) string {
	t.Helper()
	builtin := filepath.Join(testutil.ModuleRoot(t), "model", "builtin", "stories260K.gguf")
	switch name {
	case "stories260K":
		return builtin
	case "eog-text", "eog-keys":
		path := filepath.Join(t.TempDir(), name+".gguf")
		writeVocabModel(t, builtin, path, eogVocab(name))
		return path
	}
	return testutil.Shared(t, "tokenizer/ggml-vocab-"+name+".gguf")
}

// vocabEdit changes the vocabulary writeVocabModel copies.
type vocabEdit struct {
	name     string   // general.name
	extra    []string // tokens appended, as normal tokens
	eot, eom int      // tokenizer.ggml.eot_token_id / eom_token_id, when >= 0
}

// eogVocab is the edit that makes "eog-text" or "eog-keys" from stories260K's
// vocabulary (512 tokens).
func eogVocab(name string) *vocabEdit {
	e := &vocabEdit{name: name, extra: eogTokens, eot: -1, eom: -1}
	if name == "eog-keys" {
		e.eot = 512 + slices.Index(eogTokens, "<|im_start|>")
		e.eom = 512 + slices.Index(eogTokens, "<|start_header_id|>")
	}
	return e
}

// writeVocabModel writes a tiny llama model (one layer, width 16, zero
// weights) carrying the tokenizer metadata of the GGUF file src and its
// general.name (which selects llama.cpp's per-model token attributes), so
// that llama-server, which needs weights, can load the vocabulary. edit, when
// not nil, changes the vocabulary.
func writeVocabModel(t testing.TB, src, dst string, edit *vocabEdit) {
	t.Helper()
	f, err := gguf.Open(src)
	require.NoError(t, err)
	defer f.Close()
	w := gguf.NewWriter()
	w.AddString("general.architecture", "llama")
	var n int
	for _, kv := range f.Metadata {
		if kv.Key != "general.name" && !strings.HasPrefix(kv.Key, "tokenizer.") {
			continue
		}
		v := kv.Value
		switch {
		case kv.Key == keyTokens:
			toks, ok := v.Strings()
			require.True(t, ok, "%s: %s is not a string array", src, kv.Key)
			if edit != nil {
				toks = slices.Concat(toks, edit.extra)
				v = gguf.StringsValue(toks)
			}
			n = len(toks)
		case edit == nil:
		case kv.Key == keyScores:
			scores, ok := v.Float32s()
			require.True(t, ok)
			v = gguf.Float32sValue(append(scores, make([]float32, len(edit.extra))...))
		case kv.Key == keyTypes:
			types, ok := v.Int32s()
			require.True(t, ok)
			for range edit.extra {
				types = append(types, TypeNormal)
			}
			v = gguf.Int32sValue(types)
		case kv.Key == "general.name":
			v = gguf.StringValue(edit.name)
		}
		w.Add(kv.Key, v)
	}
	if edit != nil && edit.eot >= 0 {
		w.AddUint32(keyEOT, uint32(edit.eot))
	}
	if edit != nil && edit.eom >= 0 {
		w.AddUint32(keyEOM, uint32(edit.eom))
	}
	const dim, hidden = 16, 32
	for key, v := range map[string]uint32{"context_length": 256, "embedding_length": dim, "block_count": 1,
		"feed_forward_length": hidden, "attention.head_count": 2, "attention.head_count_kv": 2, "rope.dimension_count": dim / 2} {
		w.AddUint32("llama."+key, v)
	}
	w.AddFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5)
	zeros := func(name string, dims ...uint64) {
		size := uint64(4)
		for _, d := range dims {
			size *= d
		}
		require.NoError(t, w.AddTensor(name, gguf.F32, dims, make([]byte, size)))
	}
	vocab := uint64(n)
	zeros("token_embd.weight", dim, vocab)
	zeros("output_norm.weight", dim)
	zeros("output.weight", dim, vocab)
	for _, m := range []struct {
		name string
		dims []uint64
	}{{"attn_norm", []uint64{dim}}, {"ffn_norm", []uint64{dim}}, {"attn_q", []uint64{dim, dim}}, {"attn_k", []uint64{dim, dim}},
		{"attn_v", []uint64{dim, dim}}, {"attn_output", []uint64{dim, dim}}, {"ffn_gate", []uint64{dim, hidden}},
		{"ffn_up", []uint64{dim, hidden}}, {"ffn_down", []uint64{hidden, dim}}} {
		zeros("blk.0."+m.name+".weight", m.dims...)
	}
	require.NoError(t, w.WriteFile(dst))
}

// TestWriteSpecialFixtures writes what testdata/gen needs into the directory
// named by KVREF_WRITE_SPECIAL: inputs.json (specialInputs), hf/NAME/tokenizer.json
// for each of specialHFNames, and gguf/NAME.gguf, a model llama-server can
// load, for each of specialGGUFNames.
func TestWriteSpecialFixtures(t *testing.T) {
	t.Parallel()

	dir := os.Getenv("KVREF_WRITE_SPECIAL")
	if dir == "" {
		t.Skip("set KVREF_WRITE_SPECIAL=DIR to write the fixtures of the special-token vectors")
	}
	inputs, err := json.Marshal(specialInputs)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gguf"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs.json"), inputs, 0o644))
	for _, name := range specialHFNames {
		data, _ := specialHFTokenizer(t, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "hf", name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "hf", name, "tokenizer.json"), data, 0o644))
	}
	for _, name := range specialGGUFNames {
		writeVocabModel(t, specialGGUFPath(t, name), filepath.Join(dir, "gguf", name+".gguf"), nil)
	}
	fmt.Println("wrote", dir)
}
