package llama2c

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	l2c "github.com/kvref/kvref/format/llama2c"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/tokenizer"
)

// headerBytes encodes seven header values.
func headerBytes(v ...int32) []byte {
	var out []byte
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, uint32(x))
	}
	return out
}

// checkpoint returns a checkpoint with the given header values and weights
// that are a deterministic function of their offset.
func checkpoint(t testing.TB, v ...int32) []byte {
	t.Helper()
	data := headerBytes(v...)
	h, _ := l2c.DecodeHeader(data)
	size := h.FileSize()
	ok := size >= 0
	require.True(t, ok)
	for i := int64(l2c.HeaderSize); i < size; i += 4 {
		x := float32(math.Sin(float64(i))) * 0.5
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
	}
	return data
}

// vocabBin returns a tokenizer.bin with n tokens: <unk>, <s>, </s>, then t3, t4, ...
func vocabBin(t testing.TB, n int) []byte {
	t.Helper()
	v := tokenizer.Vocab{}
	for i := range n {
		text := fmt.Sprintf("t%d", i)
		switch i {
		case 0:
			text = "<unk>"
		case 1:
			text = "<s>"
		case 2:
			text = "</s>"
		}
		v.Tokens = append(v.Tokens, text)
		v.Scores = append(v.Scores, float32(-i))
	}
	var buf bytes.Buffer
	require.NoError(t, tokenizer.WriteLlama2c(&buf, v))
	return buf.Bytes()
}

// vocabTokenizer returns a tokenizer with n tokens.
func vocabTokenizer(t testing.TB, n int) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.FromLlama2c(vocabBin(t, n), n)
	require.NoError(t, err)
	return tok
}

// writeTemp writes data to a file in a temporary directory and returns its path.
func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// reference returns the cache-free f32 logits of every position of tokens.
func reference(t testing.TB, m *model.Model, tokens []int) [][]float32 {
	t.Helper()
	r := model.NewRunner(m, 1)
	defer r.Close()
	logits, err := r.Reference(tokens, quant.F32, quant.F32, 0)
	require.NoError(t, err)
	return logits
}

// requireBitwise fails at the first logit whose bits differ.
func requireBitwise(t testing.TB, want, got [][]float32, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: positions", what)
	for p := range want {
		require.Equal(t, len(want[p]), len(got[p]), "%s: vocabulary at position %d", what, p)
		for i := range want[p] {
			if math.Float32bits(want[p][i]) != math.Float32bits(got[p][i]) { // cheap test first: this runs per logit
				require.Equalf(t, math.Float32bits(want[p][i]), math.Float32bits(got[p][i]),
					"%s: position %d, token %d: logit %v, want %v", what, p, i, got[p][i], want[p][i])
			}
		}
	}
}
