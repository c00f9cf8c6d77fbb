package tokenizer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
)

// Synthetic tokenizer.json files. The shared fixtures hold only two genuine
// tokenizer.json files (GPT-2 and SmolLM), both byte-level BPE without
// normalizers. To test the other components the way Llama 2, Mistral,
// Llama 3 and Qwen2 use them, these helpers derive tokenizer.json files
// deterministically from the shared vocabularies, with the components and
// added tokens of those models. testdata/hf-synth.jsonl holds what Hugging
// Face's tokenizers library (npm tokenizers@0.23.2) gives for them;
// testdata/gen/gen_vectors.js regenerates it from the files that
// TestWriteSynthTokenizers writes.

// synthNames lists the synthetic tokenizers.
var synthNames = []string{"llama3-style", "qwen2-style", "gpt2-added", "gpt2-splits", "llama2-style", "metaspace-style"}

// addedTok builds an added_tokens entry.
func addedTok(id int, content string, special, normalized, lstrip, rstrip, singleWord bool) map[string]any {
	return map[string]any{"id": id, "content": content, "special": special, "normalized": normalized,
		"lstrip": lstrip, "rstrip": rstrip, "single_word": singleWord}
}

// regexPattern and stringPattern build Split / Replace patterns.
func regexPattern(re string) map[string]any { return map[string]any{"Regex": re} }
func stringPattern(s string) map[string]any { return map[string]any{"String": s} }
func byteLevel(prefix, regex bool) map[string]any {
	return map[string]any{"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": true, "use_regex": regex}
}

// bosTemplate is a TemplateProcessing that puts tok (id) first.
func bosTemplate(tok string, id int) map[string]any {
	return map[string]any{"type": "TemplateProcessing",
		"single": []any{map[string]any{"SpecialToken": map[string]any{"id": tok, "type_id": 0}},
			map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
		"pair":           []any{map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
		"special_tokens": map[string]any{tok: map[string]any{"id": tok, "ids": []int{id}, "tokens": []string{tok}}}}
}

// synthCache holds the synthetic tokenizer.json files built so far.
var synthCache sync.Map

// synthTokenizer returns the tokenizer.json of a synthetic tokenizer.
func synthTokenizer(t testing.TB, name string) []byte {
	t.Helper()
	if data, ok := synthCache.Load(name); ok {
		return data.([]byte)
	}
	data := buildSynthTokenizer(t, name)
	synthCache.Store(name, data)
	return data
}

// buildSynthTokenizer builds the tokenizer.json of a synthetic tokenizer.
func buildSynthTokenizer(t testing.TB, name string) []byte {
	t.Helper()
	var doc map[string]any
	switch name {
	case "llama3-style", "qwen2-style", "gpt2-added", "gpt2-splits":
		data, err := os.ReadFile(testutil.Shared(t, "tokenizer/hf/gpt2/tokenizer.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &doc))
		model := doc["model"].(map[string]any)
		model["type"] = "BPE"
		model["byte_fallback"] = false
		eot := addedTok(50256, "<|endoftext|>", true, false, false, false, false)
		switch name {
		case "llama3-style":
			model["ignore_merges"] = true
			doc["added_tokens"] = []any{eot,
				addedTok(50257, "<|begin_of_text|>", true, false, false, false, false),
				addedTok(50258, "<|eot_id|>", true, false, false, false, false),
				addedTok(50259, "<|start_header_id|>", true, false, false, false, false)}
			doc["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "behavior": "Isolated", "invert": false,
					"pattern": regexPattern(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`)},
				byteLevel(false, false)}}
			doc["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{
				map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
				bosTemplate("<|begin_of_text|>", 50257)}}
			doc["decoder"] = byteLevel(true, true)
		case "qwen2-style":
			doc["added_tokens"] = []any{eot,
				addedTok(50257, "<|im_start|>", true, false, false, false, false),
				addedTok(50258, "<|im_end|>", true, false, false, false, false)}
			doc["normalizer"] = map[string]any{"type": "NFC"}
			doc["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "behavior": "Isolated", "invert": false,
					"pattern": regexPattern(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`)},
				byteLevel(false, false)}}
			doc["post_processor"] = byteLevel(false, false)
			doc["decoder"] = byteLevel(false, false)
		case "gpt2-added":
			doc["added_tokens"] = []any{eot,
				addedTok(50257, "<mask>", true, false, true, false, false),
				addedTok(50258, "<sep>", true, false, false, true, false),
				addedTok(50259, "cat", false, true, false, false, true),
				addedTok(50260, " dog", false, true, false, false, false),
				addedTok(50261, "<user>", false, false, true, true, false),
				addedTok(50262, "<|end", true, false, false, false, false)}
			doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "Replace", "pattern": regexPattern(`\t+`), "content": "  "},
				map[string]any{"type": "NFKC"}}}
			doc["post_processor"] = map[string]any{"type": "RobertaProcessing", "sep": []any{"<sep>", 50258},
				"cls": []any{"<mask>", 50257}, "trim_offsets": true, "add_prefix_space": false}
		case "gpt2-splits":
			doc["added_tokens"] = []any{eot}
			doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
				map[string]any{"type": "Strip", "strip_left": false, "strip_right": true},
				map[string]any{"type": "Lowercase"},
				map[string]any{"type": "NFD"},
				map[string]any{"type": "StripAccents"}}}
			doc["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
				map[string]any{"type": "Split", "behavior": "MergedWithPrevious", "invert": false, "pattern": stringPattern(",")},
				map[string]any{"type": "Split", "behavior": "MergedWithNext", "invert": false, "pattern": regexPattern(`[\[(]`)},
				map[string]any{"type": "Split", "behavior": "Contiguous", "invert": false, "pattern": regexPattern(`[!?]`)},
				map[string]any{"type": "Split", "behavior": "Removed", "invert": false, "pattern": regexPattern(`_+`)},
				map[string]any{"type": "Split", "behavior": "Isolated", "invert": true, "pattern": regexPattern(`\p{Lu}`)},
				map[string]any{"type": "Digits", "individual_digits": false},
				byteLevel(true, true)}}
			doc["post_processor"] = nil
			doc["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{byteLevel(true, true),
				map[string]any{"type": "Replace", "pattern": regexPattern(`o+`), "content": "0"}}}
		}
	case "llama2-style", "metaspace-style":
		doc = spmTokenizerJSON(t, name)
	default:
		require.FailNowf(t, "no synthetic tokenizer", "%q", name)
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// spmTokenizerJSON builds a SentencePiece-style BPE tokenizer.json (model
// BPE with byte_fallback) from the Llama 2 GGUF vocabulary; see spmDoc.
func spmTokenizerJSON(t testing.TB, name string) map[string]any {
	return spmDoc(spmVocabOf(t, testutil.Shared(t, "tokenizer/ggml-vocab-llama-spm.gguf")), name)
}

// spmVocabOf reads the tokens, scores and types of a GGUF SentencePiece vocabulary.
func spmVocabOf(t testing.TB, path string) Vocab {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var v Vocab
	v.Tokens, err = f.Strings(keyTokens)
	require.NoError(t, err)
	v.Scores, err = f.Float32s(keyScores)
	require.NoError(t, err)
	v.Types, err = f.Int32s(keyTypes)
	require.NoError(t, err)
	return v
}

// spmMerges derives a SentencePiece vocabulary's BPE vocab and merges from its scores,
// as transformers' SentencePieceExtractor does.
func spmMerges(v Vocab) (map[string]int, [][2]string) {
	toks, scores, types := v.Tokens, v.Scores, v.Types
	vocab := make(map[string]int, len(toks))
	for id, s := range toks {
		vocab[s] = id
	}
	type mg struct {
		l, r  string
		score float32
		id    int
	}
	var merges []mg
	for id, s := range toks {
		if types[id] != TypeNormal {
			continue
		}
		var local []mg
		for i := range s {
			if i == 0 {
				continue
			}
			l, r := s[:i], s[i:]
			if _, ok := vocab[l]; !ok {
				continue
			}
			if _, ok := vocab[r]; !ok {
				continue
			}
			local = append(local, mg{l, r, scores[id], id})
		}
		slices.SortStableFunc(local, func(a, b mg) int {
			if c := cmp.Compare(vocab[a.l], vocab[b.l]); c != 0 {
				return c
			}
			return cmp.Compare(vocab[a.r], vocab[b.r])
		})
		merges = append(merges, local...)
	}
	slices.SortStableFunc(merges, func(a, b mg) int { return cmp.Compare(b.score, a.score) })
	ms := make([][2]string, len(merges))
	for i, m := range merges {
		ms[i] = [2]string{m.l, m.r}
	}
	return vocab, ms
}

// spmDoc builds the tokenizer.json document of a SentencePiece vocabulary
// whose ids 0, 1, 2 are <unk>, <s>, </s>: model BPE with byte_fallback, with
// merges derived from the scores as transformers' SentencePieceExtractor
// does, and the components of layout "llama2-style" (Llama 2's Prepend +
// Replace normalizer and its decoder) or "metaspace-style" (the Metaspace
// pre-tokenizer and decoder of newer conversions).
func spmDoc(v Vocab, layout string) map[string]any {
	vocab, ms := spmMerges(v)
	doc := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil,
		"added_tokens": []any{
			addedTok(0, "<unk>", true, false, false, false, false),
			addedTok(1, "<s>", true, false, false, false, false),
			addedTok(2, "</s>", true, false, false, false, false)},
		"post_processor": bosTemplate("<s>", 1),
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": "<unk>",
			"continuing_subword_prefix": nil, "end_of_word_suffix": nil, "fuse_unk": true,
			"byte_fallback": true, "ignore_merges": false, "vocab": vocab, "merges": ms},
	}
	switch layout {
	case "llama2-style":
		doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": stringPattern(" "), "content": "▁"}}}
		doc["pre_tokenizer"] = nil
		doc["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": stringPattern("▁"), "content": " "},
			map[string]any{"type": "ByteFallback"},
			map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0}}}
	case "metaspace-style":
		doc["normalizer"] = nil
		doc["pre_tokenizer"] = map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}
		doc["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "ByteFallback"},
			map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}}}
	}
	return doc
}

// TestWriteSynthTokenizers writes the synthetic tokenizer.json files to the
// directory named by KVREF_WRITE_SYNTH, for testdata/gen/gen_vectors.js.
func TestWriteSynthTokenizers(t *testing.T) {
	t.Parallel()

	dir := os.Getenv("KVREF_WRITE_SYNTH")
	if dir == "" {
		t.Skip("set KVREF_WRITE_SYNTH=DIR to write the synthetic tokenizer.json files")
	}
	for _, name := range synthNames {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, "tokenizer.json"), synthTokenizer(t, name), 0o644))
	}
}

// vectorInputs are the inputs of the extra vectors: llama.cpp's test inputs
// plus cases that exercise Unicode classes, contractions, digits, added
// tokens and whitespace handling.
func vectorInputs(t testing.TB) []string {
	t.Helper()
	inp, err := os.ReadFile(testutil.Shared(t, "tokenizer/ggml-vocab-gpt-2.gguf.inp"))
	require.NoError(t, err)
	const sep = "\n__ggml_vocab_test__\n"
	ins := strings.Split(strings.TrimSuffix(string(inp), sep), sep)
	ins = append(ins,
		"I'M HERE, YOU'RE THERE, WE'LL SEE. DON'T! IT'S", "'s'S'Ve 'LL",
		"1234567 89 0.5 ١٢٣٤ 𝟙𝟚𝟛 ½ Ⅻ",
		"tab\tand\ttabs\t\t\tend", "crlf\r\nline\r\n\r\n  \r\n", " \n \n\n",
		"x\u3000 y\u00a0z\u0085w  \u2028q\u2029\u200b\ufeff",
		"e\u0301 vs \u00e9, ﬁnance Ａｂｃ ℌ", "İstanbul ΣΑΣ straße",
		"👩‍👩‍👧 🏳️‍🌈 🇫🇷", "中文字符，测试。日本語テキスト 한국어",
		"\u0378\ue000\U000F0000 \ufffd",
		"a<|endoftext|>b <|endoftext|> c<|endoftext|>",
		"<|begin_of_text|>Hello<|eot_id|><|start_header_id|>", "<|im_start|>user\nhi<|im_end|>\n",
		"<s>Hi</s> <unk>", "mask <mask> sep<sep>  x <user>  y", "cat concat cat, a dog  dog,dog",
		"<|end <|end|> <|endoftext",
		"foo,bar,,baz (a[b] HeLLo WORLD!!?? __x__y 12,345", "   leading and trailing   ",
		"▁already▁escaped ▁", strings.Repeat("aaaa", 40), strings.Repeat("ab ", 30),
		"\x00\x01\x1f\x7f", "", " ", "\t",
	)
	for _, s := range ins {
		require.True(t, utf8.ValidString(s))
	}
	return ins
}

// TestWriteVectorInputs writes the inputs of the extra vectors as JSON to
// the file named by KVREF_WRITE_INPUTS, for testdata/gen/gen_vectors.js.
func TestWriteVectorInputs(t *testing.T) {
	t.Parallel()

	path := os.Getenv("KVREF_WRITE_INPUTS")
	if path == "" {
		t.Skip("set KVREF_WRITE_INPUTS=FILE to write the vector inputs")
	}
	data, err := json.Marshal(vectorInputs(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// synthLine is one line of testdata/hf-synth.jsonl: an encode vector or a
// decode vector.
type synthLine struct {
	hfVector
	DecodeIDs []int   `json:"decode_ids"`
	Text      *string `json:"text"`
	TextSkip  *string `json:"text_skip"`
}

// TestHFVectorsSynth checks encoding and decoding against Hugging Face's
// output for the synthetic tokenizers and for extra inputs to the genuine
// ones. Hugging Face parses special tokens in the input by default, so
// these compare EncodeSpecial(x, {AddSpecial: add, ParseSpecial: true}).
func TestHFVectorsSynth(t *testing.T) {
	t.Parallel()

	data, err := os.ReadFile(filepath.Join("testdata", "hf-synth.jsonl"))
	require.NoError(t, err)
	hfDir := testutil.Shared(t, "tokenizer/hf")
	toks := map[string]*BPE{}
	load := func(name string) *BPE {
		if tok, ok := toks[name]; ok {
			return tok
		}
		var tok *BPE
		if slices.Contains(synthNames, name) {
			b, err := FromTokenizerJSON(synthTokenizer(t, name), nil)
			require.NoError(t, err, name)
			tok = b.(*BPE)
		} else {
			tok = loadHFDir(t, filepath.Join(hfDir, name))
		}
		toks[name] = tok
		return tok
	}
	pass, total := map[string]int{}, map[string]int{}
	var order []string
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v synthLine
		require.NoError(t, json.Unmarshal([]byte(line), &v))
		tok := load(v.Tokenizer)
		if total[v.Tokenizer] == 0 {
			order = append(order, v.Tokenizer)
		}
		total[v.Tokenizer]++
		var ok bool
		if v.Text != nil {
			ok = t.Run(fmt.Sprintf("%s/%d/decode", v.Tokenizer, i), func(t *testing.T) {
				require.Equal(t, *v.Text, tok.DecodeSpecial(v.DecodeIDs, true), "DecodeSpecial(%v, true)", v.DecodeIDs)
				require.Equal(t, *v.TextSkip, tok.Decode(v.DecodeIDs), "Decode(%v)", v.DecodeIDs)
			})
		} else {
			ok = t.Run(fmt.Sprintf("%s/%d/%q", v.Tokenizer, i, shorten(v.Input, 30)), func(t *testing.T) {
				require.Equal(t, orEmpty(v.IDs), orEmpty(tok.EncodeSpecial(v.Input, EncodeOptions{ParseSpecial: true})), "EncodeSpecial(%q, {ParseSpecial})", v.Input)
				require.Equal(t, orEmpty(v.IDsWithSpecial), orEmpty(tok.EncodeSpecial(v.Input, Prompt)), "EncodeSpecial(%q, Prompt)", v.Input)
				require.Equal(t, v.Decoded, tok.DecodeSpecial(v.IDs, true), "DecodeSpecial(ids, true)")
				require.Equal(t, *v.DecodedSpecial, tok.Decode(v.IDsWithSpecial), "Decode(ids_with_special)")
			})
		}
		if ok {
			pass[v.Tokenizer]++
		}
	}
	for _, n := range order {
		t.Logf("%s: %d/%d vectors pass", n, pass[n], total[n])
	}
}
