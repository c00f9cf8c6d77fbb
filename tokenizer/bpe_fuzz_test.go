package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
)

// sharedFile reads a file under ../shared, or returns nil when it is
// absent (fuzz seeds are optional).
func sharedFile(t testing.TB, rel string) []byte {
	data, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(t), "..", "shared", rel))
	if err != nil {
		return nil
	}
	return data
}

// fuzzTexts are short inputs each fuzzed tokenizer encodes.
var fuzzTexts = []string{"", "Hello, world! 123", " \t\n<s>ab<tool> x ", "é中🙂\u00a0'S", "<|endoftext|>a"}

// FuzzFromTokenizerJSON feeds arbitrary bytes to FromTokenizerJSON as
// tokenizer.json and tokenizer_config.json: it must return a tokenizer or an
// error, never panic, and a tokenizer it returns must encode and decode.
func FuzzFromTokenizerJSON(f *testing.F) {
	for _, rel := range []string{"tokenizer/hf/gpt2/tokenizer.json", "tokenizer/hf/smollm/tokenizer.json"} {
		if data := sharedFile(f, rel); data != nil {
			cfg := sharedFile(f, strings.Replace(rel, "tokenizer.json", "tokenizer_config.json", 1))
			f.Add(data, cfg)
		}
	}
	f.Add([]byte(miniJSON), []byte(nil))
	f.Add([]byte(miniJSON), []byte(`{"bos_token": "<s>", "eos_token": {"content": "<s>"}, "add_bos_token": true}`))
	for _, field := range []string{
		`"decoder": {"type": "ByteLevel"}`,
		`"decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}`,
		`"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}, "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"}`,
		`"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?i:'s|'t)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "MergedWithNext", "invert": true}, {"type": "ByteLevel", "add_prefix_space": true, "use_regex": false}, {"type": "WhitespaceSplit"}]}`,
	} {
		f.Add([]byte(tinyJSONDoc(field)), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, data, config []byte) {
		tok, err := FromTokenizerJSON(data, config)
		if err != nil {
			require.Falsef(t, tok != nil, "error %v with a non-nil tokenizer", err)
			return
		}
		b := tok.(*BPE)
		n := tok.VocabSize()
		for _, s := range fuzzTexts {
			for _, special := range []bool{false, true} {
				ids := b.EncodeSpecial(s, EncodeOptions{AddSpecial: special, ParseSpecial: special})
				for _, id := range ids {
					require.Falsef(t, id < 0 || id >= n, "Encode(%q) gave id %d outside [0, %d)", s, id, n)
				}
				_ = b.Decode(ids)
				_ = b.DecodeSpecial(ids, true)
			}
		}
		_ = b.Decode([]int{-1, 0, n - 1, n, 1 << 40})
		for id := range min(n, 300) {
			_ = tok.Piece(id)
			_ = tok.TokenText(id)
			_ = tok.IsEOG(id)
		}
	})
}

// tinyJSONDoc is tinyJSON's document: the byte alphabet and the <0xNN>
// tokens, a few merges, and the given extra fields.
func tinyJSONDoc(fields string) string {
	var vocab strings.Builder
	for b := range 256 {
		vocab.WriteString(strconv.Quote(byteCharStr[b]) + ": " + strconv.Itoa(b) + ", ")
	}
	for b := range 256 {
		vocab.WriteString(strconv.Quote(byteTokenText(byte(b))) + ": " + strconv.Itoa(256+b) + ", ")
	}
	vocab.WriteString(`"▁a": 512, "▁": 513, "Ġa": 514`)
	return `{"version": "1.0", ` + fields + `, "model": {"type": "BPE", "byte_fallback": true, "vocab": {` +
		vocab.String() + `}, "merges": ["▁ a", "Ġ a"]}}`
}

// FuzzBPERoundTrip checks that decoding gives the encoded text back, for a
// hand-built vocabulary and, when ../shared is present, for GPT-2's GGUF
// vocabulary and a SentencePiece-style tokenizer.json.
func FuzzBPERoundTrip(f *testing.F) {
	for _, s := range fuzzTexts {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xe2\x82")
	f.Add("I'M here, YOU'RE there;   1234567 \r\n\t\u3000x")
	type roundTripper struct {
		tok  *BPE
		want func(string) string // the text Decode should give back
	}
	valid := func(s string) string { return validUTF8(s) }
	toks := []roundTripper{}
	tiny, err := NewBPE(tinyVocab([]string{"Ġ a", "a b", "Ġa b"}, "Ġa", "ab", "Ġab"))
	require.NoError(f, err)
	toks = append(toks, roundTripper{tiny, valid})
	if data := sharedFile(f, "tokenizer/ggml-vocab-gpt-2.gguf"); data != nil {
		g, err := gguf.Parse("gpt-2.gguf", data)
		require.NoError(f, err)
		tok, err := FromGGUF(g)
		require.NoError(f, err)
		toks = append(toks, roundTripper{tok.(*BPE), valid})
	}
	if sharedFile(f, "tokenizer/ggml-vocab-llama-spm.gguf") != nil {
		tok, err := FromTokenizerJSON(synthTokenizer(f, "llama2-style"), nil)
		require.NoError(f, err)
		toks = append(toks, roundTripper{tok.(*BPE), func(s string) string {
			return strings.ReplaceAll(validUTF8(s), "▁", " ")
		}})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, rt := range toks {
			ids := rt.tok.Encode(s, false)
			require.Equalf(t, rt.want(s), rt.tok.Decode(ids), "tokenizer %d: Decode(Encode(%q)) (ids %v)", i, s, ids)
			if !rt.tok.hf {
				var b []byte
				for _, id := range ids {
					b = append(b, rt.tok.Piece(id)...)
				}
				require.Falsef(t, string(b) != validUTF8(s), "tokenizer %d: pieces of %q concatenate to %q", i, s, b)
			}
			if utf8.ValidString(s) && !strings.Contains(s, "▁") {
				withSpecial := rt.tok.Encode(s, true)
				require.Falsef(t, rt.tok.Decode(withSpecial) != rt.want(s), "tokenizer %d: Decode(Encode(%q, true)) = %q", i, s, rt.tok.Decode(withSpecial))
			}
		}
	})
}
