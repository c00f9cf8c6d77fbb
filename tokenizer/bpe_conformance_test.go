package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
)

// loadBPEGGUF opens a GGUF vocabulary and builds its byte-level BPE.
func loadBPEGGUF(t testing.TB, path string) *BPE {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tok, err := FromGGUF(f)
	require.NoError(t, err)
	b, ok := tok.(*BPE)
	require.True(t, ok, "FromGGUF(%s) returned %T, want *BPE", path, tok)
	return b
}

// TestLlamaCppVectorsGPT2 checks Encode against every case of llama.cpp's
// test vectors for the GPT-2 vocabulary (no BOS, parse_special=false), and
// that Decode gives each input back.
func TestLlamaCppVectorsGPT2(t *testing.T) {
	t.Parallel()

	path, vs := testutil.VocabVectors(t, "gpt-2")
	tok := loadBPEGGUF(t, path)
	require.Equal(t, "gpt-2", tok.Pre())
	require.False(t, tok.AddBOS(), "GPT-2 has no add_bos_token: llama.cpp's default for BPE is false")
	require.NotEmpty(t, vs)
	pass := 0
	for _, v := range vs {
		ok := t.Run(strconv.Quote(v.Input), func(t *testing.T) {
			got := tok.Encode(v.Input, false)
			require.Equal(t, v.Want, got, "Encode(%q)", v.Input)
			require.Equal(t, v.Input, tok.Decode(got), "Decode(Encode(x))")
		})
		if ok {
			pass++
		}
	}
	t.Logf("gpt-2: %d/%d vectors pass", pass, len(vs))
}

// hfVector is one line of vectors-public.jsonl: what Hugging Face's
// tokenizers library gives for an input.
type hfVector struct {
	Tokenizer      string   `json:"tokenizer"`
	Input          string   `json:"input"`
	IDs            []int    `json:"ids"`
	IDsWithSpecial []int    `json:"ids_with_special"`
	Decoded        string   `json:"decoded"`
	Roundtrip      bool     `json:"roundtrip"`
	Tokens         []string `json:"tokens,omitempty"`
	DecodedSpecial *string  `json:"decoded_special,omitempty"`
}

// readHFVectors reads a JSON-lines vector file.
func readHFVectors(t testing.TB, path string) []hfVector {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var vs []hfVector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v hfVector
		require.NoError(t, json.Unmarshal([]byte(line), &v), "%s: %s", path, line)
		if v.IDs == nil {
			v.IDs = []int{}
		}
		if v.IDsWithSpecial == nil {
			v.IDsWithSpecial = []int{}
		}
		vs = append(vs, v)
	}
	require.NoError(t, sc.Err())
	return vs
}

// loadHFDir loads tokenizer.json (and tokenizer_config.json, if present)
// from a directory.
func loadHFDir(t testing.TB, dir string) *BPE {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	require.NoError(t, err)
	cfg, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		require.True(t, os.IsNotExist(err), "%v", err)
		cfg = nil
	}
	tok, err := FromTokenizerJSON(data, cfg)
	require.NoError(t, err, dir)
	b, ok := tok.(*BPE)
	require.True(t, ok, "FromTokenizerJSON(%s) returned %T, want *BPE", dir, tok)
	return b
}

// checkHFVectors runs vectors against tokenizers loaded by load, one
// subtest per vector, and logs the pass count per tokenizer.
func checkHFVectors(t *testing.T, vs []hfVector, load func(t testing.TB, name string) *BPE) {
	toks := map[string]*BPE{}
	pass, total := map[string]int{}, map[string]int{}
	var order []string
	for i, v := range vs {
		tok, ok := toks[v.Tokenizer]
		if !ok {
			tok = load(t, v.Tokenizer)
			toks[v.Tokenizer] = tok
			order = append(order, v.Tokenizer)
		}
		total[v.Tokenizer]++
		name := v.Tokenizer + "/" + strconv.Itoa(i) + "/" + strconv.Quote(shorten(v.Input, 40))
		ok = t.Run(name, func(t *testing.T) {
			require.Equal(t, v.IDs, orEmpty(tok.Encode(v.Input, false)), "Encode(%q, false)", v.Input)
			require.Equal(t, v.IDsWithSpecial, orEmpty(tok.Encode(v.Input, true)), "Encode(%q, true)", v.Input)
			require.Equal(t, v.Decoded, tok.DecodeSpecial(v.IDs, true), "Decode(ids)")
			if !containsSpecial(tok, v.IDs) {
				require.Equal(t, v.Decoded, tok.Decode(v.IDs), "Decode(ids)")
			}
			if v.DecodedSpecial != nil {
				require.Equal(t, *v.DecodedSpecial, tok.Decode(v.IDsWithSpecial), "Decode(ids_with_special) skipping special tokens")
			}
		})
		if ok {
			pass[v.Tokenizer]++
		}
	}
	for _, n := range order {
		t.Logf("%s: %d/%d vectors pass", n, pass[n], total[n])
	}
}

// containsSpecial reports whether ids has a special (control) token.
func containsSpecial(tok *BPE, ids []int) bool {
	for _, id := range ids {
		if a := tok.addedID[id]; a != nil && a.special {
			return true
		}
	}
	return false
}

// orEmpty turns nil into an empty slice, for comparisons.
func orEmpty(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// TestHFVectorsPublic checks Encode and Decode against Hugging Face's own
// output for the shared tokenizer.json files.
func TestHFVectorsPublic(t *testing.T) {
	t.Parallel()

	path := testutil.Shared(t, "tokenizer/hf/vectors-public.jsonl")
	vs := readHFVectors(t, path)
	require.NotEmpty(t, vs)
	checkHFVectors(t, vs, func(t testing.TB, name string) *BPE {
		return loadHFDir(t, filepath.Join(filepath.Dir(path), name))
	})
}
