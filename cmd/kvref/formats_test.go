package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/synth"
)

// TestLlama2cCheckpointEqualsGGUF: stories260K.bin with tok512.bin gives exactly the ids and
// logits of stories260K.gguf (the same weights in the llama2.c format).
func TestLlama2cCheckpointEqualsGGUF(t *testing.T) {
	gguf := testutil.Shared(t, "models/stories260K.gguf")
	bin := testutil.Shared(t, "models/stories260K.bin")
	tok := testutil.Shared(t, "models/tok512.bin")
	args := []string{"-p", "Once upon a time", "-n", "64", "--temp", "0", "--ignore-eos", "--json", "--check"}
	a, stderr, code := kvref(t, append([]string{"run", "-m", gguf}, args...)...)
	require.Equal(t, 0, code, stderr)
	b, stderr, code := kvref(t, append([]string{"run", "-m", bin, "--tokenizer", tok}, args...)...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, parseJSONRun(t, a).Tokens, parseJSONRun(t, b).Tokens)
}

// TestRunHuggingFaceDirectory: a synthetic model written as a Hugging Face directory runs
// through -m DIR with the same tokens and logits as its GGUF.
func TestRunHuggingFaceDirectory(t *testing.T) {
	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "tiny-hf")
	require.NoError(t, hf.Write(dir, m, hf.WriteOptions{}))
	ggufPath := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, synth.Tiny.WriteFile(ggufPath))
	args := []string{"-p", "Hello there", "-n", "16", "--temp", "0", "--ignore-eos", "--json", "--check"}
	a, stderr, code := kvref(t, append([]string{"run", "-m", ggufPath}, args...)...)
	require.Equal(t, 0, code, stderr)
	b, stderr, code := kvref(t, append([]string{"run", "-m", dir}, args...)...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, parseJSONRun(t, a).Tokens, parseJSONRun(t, b).Tokens)
	out, _, code := kvref(t, "inspect", "--mem", "1GiB", dir)
	require.Equal(t, 0, code)
	require.Contains(t, out, "(safetensors)")
}
