package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model/synth"
)

// asciiVocabModel writes a synthetic model (random weights of the given shape) whose
// vocabulary has no byte tokens: <unk>, <s>, </s>, then pieces "t3 ", "t4 ", ... of plain
// ASCII. llama-server sends a token's log-probabilities only once its text is complete
// UTF-8, so a random model that emits the byte tokens of the synthetic byte vocabulary
// (0x80-0xFF) loses steps there; with whole-character pieces every step comes back. The
// weights are the synth package's, byte for byte.
func asciiVocabModel(t *testing.T, shape synth.Shape) string {
	t.Helper()
	b, err := shape.Bytes()
	require.NoError(t, err)
	f, err := gguf.Parse(shape.Name, b)
	require.NoError(t, err)
	w := gguf.NewWriter()
	vocab := 0
	for _, kv := range f.Metadata {
		switch kv.Key {
		case "tokenizer.ggml.tokens":
			vocab = kv.Value.Len()
			tokens := []string{"<unk>", "<s>", "</s>"}
			for i := 3; i < vocab; i++ {
				tokens = append(tokens, fmt.Sprintf("t%d ", i))
			}
			w.AddStrings(kv.Key, tokens)
		case "tokenizer.ggml.token_type":
			types := []int32{2, 3, 3}
			for i := 3; i < kv.Value.Len(); i++ {
				types = append(types, 1) // normal
			}
			w.AddInt32s(kv.Key, types)
		case "general.alignment":
		default:
			w.Add(kv.Key, kv.Value)
		}
	}
	require.Positive(t, vocab)
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		data, err := f.TensorData(ti)
		require.NoError(t, err)
		require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, data))
	}
	path := filepath.Join(t.TempDir(), shape.Name+".gguf")
	require.NoError(t, w.WriteFile(path))
	return path
}
