package testutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// VocabVector is one case of llama.cpp's tokenizer test vectors: an input and the ids
// llama.cpp gives for it (no BOS, special tokens not parsed).
type VocabVector struct {
	Input string
	Want  []int
}

// VocabVectors reads ../shared/tokenizer/ggml-vocab-NAME.gguf.inp and .out (inputs
// separated by "\n__ggml_vocab_test__\n", the file ending with one; one line of ids per
// input) and returns the path of the vocabulary with its cases, skipping the test when
// the files are absent.
func VocabVectors(t testing.TB, name string) (string, []VocabVector) {
	t.Helper()
	base := Shared(t, filepath.Join("tokenizer", "ggml-vocab-"+name+".gguf"))
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	if !strings.HasSuffix(string(inp), sep) {
		t.Fatalf("%s.inp must end with the separator %q", base, sep)
	}
	inputs := strings.Split(strings.TrimSuffix(string(inp), sep), sep)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%s: %d inputs in .inp but %d lines in .out", base, len(inputs), len(lines))
	}
	vs := make([]VocabVector, len(inputs))
	for i, in := range inputs {
		vs[i] = VocabVector{Input: in, Want: []int{}}
		for _, f := range strings.Fields(lines[i]) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", base, i+1, err)
			}
			vs[i].Want = append(vs[i].Want, id)
		}
	}
	return base, vs
}

// VocabNames lists the vocabularies of ../shared/tokenizer that have test vectors
// (ggml-vocab-NAME.gguf with .inp and .out), skipping the test when there are none.
func VocabNames(t testing.TB) []string {
	t.Helper()
	dir := Shared(t, "tokenizer")
	files, err := filepath.Glob(filepath.Join(dir, "ggml-vocab-*.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		_, errIn := os.Stat(f + ".inp")
		_, errOut := os.Stat(f + ".out")
		if errIn == nil && errOut == nil {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "ggml-vocab-"), ".gguf"))
		}
	}
	if len(names) == 0 {
		t.Skipf("no ggml-vocab-*.gguf with .inp and .out in %s", dir)
	}
	return names
}
