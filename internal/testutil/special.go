package testutil

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// SpecialVector is one line of tokenizer/testdata/special/*.jsonl (see its README.md):
// what Hugging Face's tokenizers or llama.cpp's llama-server give for text with special
// tokens.
type SpecialVector struct {
	Tokenizer string `json:"tokenizer"`
	Input     string `json:"input"`
	// IDs and IDsWithSpecial are the ids with special tokens parsed, without and with the
	// tokenizer's BOS/EOS added.
	IDs            []int `json:"ids"`
	IDsWithSpecial []int `json:"ids_with_special"`
	// Keep and Skip (Hugging Face vectors only) decode IDsWithSpecial with
	// skip_special_tokens false and true.
	Keep *string `json:"decode_keep"`
	Skip *string `json:"decode_skip"`
}

// SpecialVectors reads tokenizer/testdata/special/FILE, keeping the vectors of the named
// tokenizers (all when none are named).
func SpecialVectors(t testing.TB, file string, tokenizers ...string) []SpecialVector {
	t.Helper()
	path := filepath.Join(ModuleRoot(t), "tokenizer", "testdata", "special", file)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keep := map[string]bool{}
	for _, name := range tokenizers {
		keep[name] = true
	}
	var vs []SpecialVector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v SpecialVector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Text())
		}
		if len(keep) == 0 || keep[v.Tokenizer] {
			vs = append(vs, v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatalf("%s has no vectors of %v", path, tokenizers)
	}
	return vs
}
