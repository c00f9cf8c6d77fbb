package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRealStories260K(t *testing.T) {
	t.Parallel()

	path := filepath.Join(sharedDir(t), "models", "stories260K.gguf")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is absent", path)
	}
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()

	require.Equal(t, "llama", f.Architecture())
	for key, want := range map[string]uint64{
		"llama.embedding_length":        64,
		"llama.block_count":             5,
		"llama.attention.head_count_kv": 4,
	} {
		got, err := f.Uint(key)
		require.NoError(t, err, key)
		require.Equal(t, want, got, key)
	}
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	require.NoError(t, err)
	require.Len(t, tokens, 512)

	emb, ok := f.Tensor("token_embd.weight")
	require.True(t, ok)
	require.Equal(t, []uint64{64, 512}, emb.Dims)
	require.Equal(t, F32, emb.Type)
	require.Equal(t, uint64(64*512*4), emb.Size)

	for i := range f.Tensors {
		d, err := f.TensorData(&f.Tensors[i])
		require.NoError(t, err)
		require.Len(t, d, int(f.Tensors[i].Size))
	}

	// Open and Parse agree on a real file.
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	parsed, err := Parse(path, raw)
	require.NoError(t, err)
	assertSameFile(t, parsed, f)

	// The writer reproduces this llama.cpp-written file byte for byte from
	// its contents: same layout, alignment and padding.
	w := NewWriter()
	for _, kv := range f.Metadata {
		w.Add(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		d, err := f.TensorData(ti)
		require.NoError(t, err)
		require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, d))
	}
	var out bytes.Buffer
	_, err = w.WriteTo(&out)
	require.NoError(t, err)
	require.True(t, bytes.Equal(raw, out.Bytes()), "rewritten file differs from the original")
	rewritten, err := Parse(path, out.Bytes())
	require.NoError(t, err)
	assertSameFile(t, f, rewritten)
}

// TestRealVocabFiles parses the vocabulary-only GGUF files (metadata, no
// tensors) from llama.cpp's tokenizer tests.
func TestRealVocabFiles(t *testing.T) {
	t.Parallel()

	paths, err := filepath.Glob(filepath.Join(sharedDir(t), "tokenizer", "*.gguf"))
	require.NoError(t, err)
	if len(paths) == 0 {
		t.Skip("no vocabulary GGUF files in the shared tokenizer directory")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Open(path)
			require.NoError(t, err)
			defer f.Close()
			tokens, err := f.Strings("tokenizer.ggml.tokens")
			require.NoError(t, err)
			require.NotEmpty(t, tokens)
			model, err := f.String("tokenizer.ggml.model")
			require.NoError(t, err)
			require.NotEmpty(t, model)
		})
	}
}
