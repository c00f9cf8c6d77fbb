package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
)

// A vocabulary built to Gemma's conventions: <pad> <eos> <bos> <unk> at 0-3, <mask>
// (user-defined), <start_of_turn> and <end_of_turn> (control), "\n" as a user-defined
// token, the 256 byte tokens for byte fallback, then pieces whose scores make the merges
// Hello and ▁world. No dummy prefix: "Hello" is not "▁Hello".
const (
	gPad, gEOS, gBOS, gUnk, gMask, gSOT, gEOT, gNL = 0, 1, 2, 3, 4, 5, 6, 7
)

func gemmaVocab() Vocab {
	v := Vocab{BOS: gBOS, EOS: gEOS, UNK: gUnk, PAD: gPad, EOT: -1, AddBOS: true}
	add := func(text string, score float32, typ int32) {
		v.Tokens = append(v.Tokens, text)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	for _, p := range []piece{{"<pad>", 0, TypeControl}, {"<eos>", 0, TypeControl}, {"<bos>", 0, TypeControl},
		{"<unk>", 0, TypeUnknown}, {"<mask>", 0, TypeUserDefined}, {"<start_of_turn>", 0, TypeControl},
		{"<end_of_turn>", 0, TypeControl}, {"\n", 0, TypeUserDefined}} {
		add(p.text, p.score, p.typ)
	}
	for b := range 256 {
		add(byteTokenText(byte(b)), 0, TypeByte)
	}
	for _, c := range []string{"▁", "H", "e", "l", "o", "w", "r", "d", "u", "s", "i"} {
		add(c, -60, TypeNormal)
	}
	for _, p := range []piece{{"ll", -3, TypeNormal}, {"llo", -4, TypeNormal}, {"He", -5, TypeNormal}, {"Hello", -1, TypeNormal},
		{"▁w", -6, TypeNormal}, {"or", -7, TypeNormal}, {"ld", -8, TypeNormal}, {"▁wor", -2, TypeNormal}, {"▁world", -1.5, TypeNormal}} {
		add(p.text, p.score, p.typ)
	}
	return v
}

// gemmaGGUF writes the vocabulary with the keys llama.cpp's converter writes for Gemma
// (tokenizer.ggml.model "llama", add_space_prefix false) and reads it back.
func gemmaGGUF(t *testing.T, v Vocab) Tokenizer {
	w := gguf.NewWriter()
	w.AddString("general.architecture", "gemma3")
	w.AddString(keyModel, "llama")
	w.AddString("tokenizer.ggml.pre", "default")
	w.AddStrings(keyTokens, v.Tokens)
	w.AddFloat32s(keyScores, v.Scores)
	w.AddInt32s(keyTypes, v.Types)
	w.AddUint32(keyBOS, gBOS)
	w.AddUint32(keyEOS, gEOS)
	w.AddUint32(keyUNK, gUnk)
	w.AddUint32(keyPAD, gPad)
	w.AddBool(keyAddBOS, true)
	w.AddBool(keyAddEOS, false)
	w.AddBool(keyAddSpacePrefix, false)
	path := filepath.Join(t.TempDir(), "gemma-vocab.gguf")
	require.NoError(t, w.WriteFile(path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tok, err := FromGGUF(f)
	require.NoError(t, err)
	return tok
}

// gemmaHFDir writes the vocabulary as transformers' GemmaConverter writes tokenizer.json
// (BPE with byte fallback and the scores' merges, normalizer Replace " " → "▁",
// pre-tokenizer Split " " merged with the previous piece, decoder Replace, ByteFallback,
// Fuse without a Strip, <bos> prepended, the control and user-defined tokens added) and
// generation_config.json with eos_token_id [<eos>, <end_of_turn>] as Gemma's has.
func gemmaHFDir(t *testing.T, v Vocab) Tokenizer {
	vocab, merges := spmMerges(v)
	var added []any
	for id, typ := range v.Types {
		if typ == TypeControl || typ == TypeUserDefined || typ == TypeUnknown {
			added = append(added, addedTok(id, v.Tokens[id], typ != TypeUserDefined, false, false, false, false))
		}
	}
	doc := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil, "added_tokens": added,
		"normalizer":     map[string]any{"type": "Replace", "pattern": stringPattern(" "), "content": "▁"},
		"pre_tokenizer":  map[string]any{"type": "Split", "pattern": stringPattern(" "), "behavior": "MergedWithPrevious", "invert": false},
		"post_processor": bosTemplate("<bos>", gBOS),
		"decoder": map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": stringPattern("▁"), "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"}}},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": "<unk>", "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false, "vocab": vocab, "merges": merges},
	}
	dir := t.TempDir()
	for name, v := range map[string]any{"tokenizer.json": doc, "generation_config.json": map[string]any{"eos_token_id": []int{gEOS, gEOT}},
		"tokenizer_config.json": map[string]any{"add_bos_token": true, "bos_token": "<bos>", "eos_token": "<eos>"}} {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	tok, err := FromHFDir(dir)
	require.NoError(t, err)
	return tok
}

// TestGemmaVocabulary: Gemma's vocabulary conventions, from GGUF (llama.cpp's SentencePiece
// tokenizer) and from tokenizer.json (Hugging Face's BPE), give the same ids: no dummy
// space prefix, merges by score, byte fallback, the turn tokens parsed as specials only when
// asked, "\n" split out always; <eos> and <end_of_turn> end generation (llama.cpp by the
// token's text, transformers by generation_config.json), <start_of_turn> does not.
func TestGemmaVocabulary(t *testing.T) {
	t.Parallel()

	v := gemmaVocab()
	byText := map[string]int{}
	for id, s := range v.Tokens {
		byText[s] = id
	}
	id := func(s ...string) []int {
		var out []int
		for _, x := range s {
			out = append(out, byText[x])
		}
		return out
	}
	for _, tok := range []Tokenizer{gemmaGGUF(t, v), gemmaHFDir(t, v)} {
		for _, tc := range []struct {
			text    string
			special bool
			want    []int
		}{
			{"Hello world", false, id("<bos>", "Hello", "▁world")},
			{" Hello", false, id("<bos>", "▁", "Hello")},
			{"Hello\nworld", false, append(append(id("<bos>", "Hello"), gNL), id("w", "or", "ld")...)},
			{"é", false, id("<bos>", "<0xC3>", "<0xA9>")},
			{"<start_of_turn>user\nHi<end_of_turn>\n", true, append(id("<bos>", "<start_of_turn>", "u", "s", "e", "r", "\n", "H", "i", "<end_of_turn>"), gNL)},
		} {
			got := tok.EncodeSpecial(tc.text, EncodeOptions{AddSpecial: true, ParseSpecial: tc.special})
			require.Equal(t, tc.want, got, "%T %q", tok, tc.text)
			if !tc.special {
				require.Equal(t, tc.text, tok.Decode(got), "%T decodes %q back", tok, tc.text)
			}
		}
		plain := tok.EncodeSpecial("<end_of_turn>", EncodeOptions{})
		require.NotContains(t, plain, gEOT, "%T: a turn token in text is text unless special tokens are parsed", tok)
		require.Equal(t, "<start_of_turn>model\nHi", tok.DecodeSpecial(append(id("<bos>", "<start_of_turn>", "<0x6D>", "<0x6F>", "d", "e", "l"), append([]int{gNL}, id("H", "i")...)...), true)[len("<bos>"):])
		require.True(t, tok.IsEOG(gEOS), "%T <eos>", tok)
		require.True(t, tok.IsEOG(gEOT), "%T <end_of_turn>", tok)
		require.False(t, tok.IsEOG(gSOT), "%T <start_of_turn>", tok)
		require.Equal(t, gBOS, tok.BOS())
	}
}
