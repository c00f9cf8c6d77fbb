package llama2c

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	l2c "github.com/kvref/kvref/format/llama2c"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer"
)

// writeModel writes m as a checkpoint and its vocabulary as a tokenizer.bin
// (zero scores) and returns both paths.
func writeModel(t *testing.T, m *model.Model) (string, string) {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, m))
	path := filepath.Join(dir, "model.bin")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))

	v := tokenizer.Vocab{Scores: make([]float32, m.Tokenizer.VocabSize())}
	for id := range v.Scores {
		v.Tokens = append(v.Tokens, m.Tokenizer.TokenText(id))
	}
	buf.Reset()
	require.NoError(t, tokenizer.WriteLlama2c(&buf, v))
	tokPath := filepath.Join(dir, "tokenizer.bin")
	require.NoError(t, os.WriteFile(tokPath, buf.Bytes(), 0o644))
	return path, tokPath
}

// testTokens is a sequence of every kind of id for the model's vocabulary.
func testTokens(m *model.Model) []int {
	tokens := m.Tokenizer.Encode("Once upon a time, a synthetic model was written as llama2.c.", true)
	for i := range 40 {
		tokens = append(tokens, (i*97+13)%m.Config.Vocab)
	}
	return tokens
}

// TestWriteRoundTripSynth: the synthetic model written as a llama2.c checkpoint
// and read back has the same configuration and bit-identical logits.
func TestWriteRoundTripSynth(t *testing.T) {
	t.Parallel()

	orig, err := synth.Tiny.Model()
	require.NoError(t, err)
	require.False(t, orig.Config.Tied)

	path, tokPath := writeModel(t, orig)
	h, err := l2c.ReadHeader(path, mustRead(t, path))
	require.NoError(t, err)
	require.False(t, h.Shared, "an untied model is written with a negative vocab_size")

	back, err := Load(path, tokPath)
	require.NoError(t, err)
	defer back.Close()
	require.Equal(t, orig.Config, back.Config)
	require.Equal(t, orig.Weights.Bytes(), back.Weights.Bytes())
	for id := range orig.Config.Vocab {
		require.Equal(t, orig.Tokenizer.TokenText(id), back.Tokenizer.TokenText(id))
	}
	tokens := testTokens(orig)
	requireBitwise(t, reference(t, orig, tokens), reference(t, back, tokens), "synth.Tiny round trip")
}

// TestWriteRoundTripTied: a model whose classifier is its embedding is written
// with a positive vocab_size and no classifier, and reads back tied.
func TestWriteRoundTripTied(t *testing.T) {
	t.Parallel()

	orig, err := synth.Tiny.Model()
	require.NoError(t, err)
	w := *orig.Weights
	w.Output = w.TokenEmbed
	cfg := orig.Config
	cfg.Tied = true
	tied, err := model.New(cfg, &w, orig.Tokenizer, "tied", nil)
	require.NoError(t, err)

	path, tokPath := writeModel(t, tied)
	back, err := Load(path, tokPath)
	require.NoError(t, err)
	defer back.Close()
	require.True(t, back.Config.Tied)
	require.Same(t, back.Weights.TokenEmbed, back.Weights.Output)
	require.Equal(t, tied.Weights.Bytes(), back.Weights.Bytes())
	h, err := l2c.ReadHeader(path, mustRead(t, path))
	require.NoError(t, err)
	require.True(t, h.Shared)
	tokens := testTokens(tied)
	requireBitwise(t, reference(t, tied, tokens), reference(t, back, tokens), "tied round trip")
}

// TestWriteReproducesStories260K: writing the loaded stories260K.bin gives the
// file back, every byte of the header and the weights. The unused freq_cis
// tables are zeros in that file; Write fills them with cos and sin of the RoPE
// angles, as export.py does, so that old versions of run.c that read them work.
func TestWriteReproducesStories260K(t *testing.T) {
	t.Parallel()

	path := testutil.Shared(t, "models/stories260K.bin")
	m, err := Load(path, testutil.Shared(t, "models/tok512.bin"))
	require.NoError(t, err)
	defer m.Close()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, m))
	orig := mustRead(t, path)
	got := buf.Bytes()
	require.Equal(t, len(orig), len(got))

	h, err := l2c.ReadHeader(path, orig)
	require.NoError(t, err)
	half := h.HeadDim() / 2
	freqStart := len(orig) - 2*h.SeqLen*half*4 // the tables end the file: the classifier is shared
	require.True(t, bytes.Equal(orig[:freqStart], got[:freqStart]), "header and weights differ")

	at := func(table, pos, i int) float64 {
		off := freqStart + 4*(table*h.SeqLen*half+pos*half+i)
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(got[off:])))
	}
	for _, pos := range []int{0, 1, 7, h.SeqLen - 1} {
		for i := range half {
			theta := float64(pos) * math.Pow(RopeBase, -float64(2*i)/float64(h.HeadDim()))
			require.InDelta(t, math.Cos(theta), at(0, pos, i), 1e-4, "freq_cis_real[%d][%d]", pos, i)
			require.InDelta(t, math.Sin(theta), at(1, pos, i), 1e-4, "freq_cis_imag[%d][%d]", pos, i)
		}
	}
}

// TestWriteGGUFModel: stories260K.gguf written as a llama2.c checkpoint runs
// bit-identically; its separate classifier equals the embedding, so it is
// written shared, as export.py would.
func TestWriteGGUFModel(t *testing.T) {
	t.Parallel()

	gg, err := model.LoadGGUF(testutil.Shared(t, "models/stories260K.gguf"))
	require.NoError(t, err)
	defer gg.Close()
	path, tokPath := writeModel(t, gg)
	back, err := Load(path, tokPath)
	require.NoError(t, err)
	defer back.Close()
	require.True(t, back.Config.Tied)
	require.Equal(t, 2048, back.Config.Context)
	tokens := testTokens(gg)
	requireBitwise(t, reference(t, gg, tokens), reference(t, back, tokens), "stories260K.gguf as llama2.c")
}

func TestWriteRefusesOtherConventions(t *testing.T) {
	t.Parallel()

	cases := []struct {
		name string
		edit func(m *model.Model)
		want string
	}{
		{"architecture", func(m *model.Model) { m.Config.Arch = "qwen2" }, `architecture "qwen2"`},
		{"rope halves", func(m *model.Model) { m.Config.RopeStyle = kernels.RoPEHalves }, "RoPE rotates halves"},
		{"rope base", func(m *model.Model) { m.Config.RopeBase = 500000 }, "RoPE base 500000; run.c uses 10000"},
		{"partial rope", func(m *model.Model) { m.Config.RopeDims = 4 }, "RoPE rotates 4 of 8 head dimensions"},
		{"norm eps", func(m *model.Model) { m.Config.NormEps = 1e-6 }, "RMSNorm epsilon 1e-06; run.c uses 1e-05"},
		{"head width", func(m *model.Model) { m.Config.HeadDim = 16 }, "head width 16 × 4 heads ≠ dim 32"},
		{"rope scaling", func(m *model.Model) { m.Config.RopeScaling = model.RopeScaling{Type: "linear", Factor: 2} }, "RoPE frequencies are rescaled"},
		{"rope freqs", func(m *model.Model) { m.Weights.RopeFreqs = []float32{1, 1, 1, 1} }, "RoPE frequencies are rescaled"},
		{"qkv bias", func(m *model.Model) { m.Config.QKVBias = true }, "biases"},
		{"qk norm", func(m *model.Model) { m.Config.QKNorm = true }, "normalised per head"},
		{"sliding window", func(m *model.Model) { m.Config.SlidingWindow = 64 }, "64-token window"},
		{"context", func(m *model.Model) { m.Config.Context = math.MaxInt32 + 1 }, "context 2147483648 does not fit"},
		{"layers", func(m *model.Model) { m.Weights.Layers = m.Weights.Layers[:1] }, "do not hold 2 layers"},
		{"matrix shape", func(m *model.Model) { m.Weights.Layers[1].Wk = m.Weights.Layers[1].Wq }, "layer 1 wk matrix is missing or not 16 × 32"},
		{"norm length", func(m *model.Model) { m.Weights.Layers[0].FFNNorm = nil }, "layer 0 feed-forward norm has 0 values, want dim 32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := synth.Tiny.Model()
			require.NoError(t, err)
			c.edit(m)
			var buf bytes.Buffer
			err = Write(&buf, m)
			require.Error(t, err)
			require.Contains(t, err.Error(), "cannot write synth:kvref-synthetic-tiny:seed7 as a llama2.c checkpoint")
			require.Contains(t, err.Error(), c.want)
			require.Zero(t, buf.Len(), "nothing is written")
		})
	}
}

// TestWriteReportsWriterErrors: an error of the destination is returned.
func TestWriteReportsWriterErrors(t *testing.T) {
	t.Parallel()

	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	err = Write(failingWriter{}, m)
	require.ErrorContains(t, err, "disk full")
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
