package hf_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/llama2c"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// logitsOf returns the cache-free logits at every position of tokens.
func logitsOf(t *testing.T, m *model.Model, tokens []int) [][]float32 {
	t.Helper()
	r := model.NewRunner(m, 1)
	defer r.Close()
	out, err := r.Reference(tokens, quant.F32, quant.F32, 0)
	require.NoError(t, err)
	return out
}

// maxDiff returns the largest difference relative to max(1, |a|), and whether a and b are
// bit-identical.
func maxDiff(a, b [][]float32) (float64, bool) {
	worst, bitwise := 0.0, true
	for p := range a {
		for i := range a[p] {
			if math.Float32bits(a[p][i]) != math.Float32bits(b[p][i]) {
				bitwise = false
			}
			scale := math.Max(1, math.Abs(float64(a[p][i])))
			worst = math.Max(worst, math.Abs(float64(a[p][i])-float64(b[p][i]))/scale)
		}
	}
	return worst, bitwise
}

// TestFormatsRoundTrip writes every synthetic architecture variant as a Hugging Face
// directory (and, for the plain Llama ones, as a llama2.c checkpoint), loads it back and
// requires bit-identical logits: the Hugging Face writer permutes Llama's Q/K rows to
// rotate-half order and the loader permutes them back (Qwen keeps halves throughout), and
// llama2.c stores the same floats; no arithmetic intervenes.
func TestFormatsRoundTrip(t *testing.T) {
	t.Parallel()

	tokens := []int{1, 40, 41, 42, 100, 200, 7, 7, 9, 250, 3, 77, 78, 79, 80, 81, 82, 83, 84, 85}
	for name, shape := range synth.Variants {
		t.Run(name, func(t *testing.T) {
			m, err := shape.Model()
			require.NoError(t, err)
			want := logitsOf(t, m, tokens)

			dir := filepath.Join(t.TempDir(), "hf")
			opts := hf.WriteOptions{}
			if shape.RopeScaling.Type == "llama3" {
				opts.RopeScaling = &shape.RopeScaling
			}
			require.NoError(t, hf.Write(dir, m, opts))
			hm, err := hf.Load(dir)
			require.NoError(t, err)
			defer hm.Close()
			require.Equal(t, m.Config.Dim, hm.Config.Dim)
			require.Equal(t, m.Config.SlidingWindow, hm.Config.SlidingWindow)
			require.Equal(t, m.Tokenizer.Encode("héllo", true), hm.Tokenizer.Encode("héllo", true))
			got := logitsOf(t, hm, tokens)
			d, bitwise := maxDiff(want, got)
			require.True(t, bitwise, "HF round trip differs by %g", d)

			if shape.Arch != "" || shape.RopeScaling.Type != "" || shape.QKVBias || shape.QKNorm || shape.SlidingWindow > 0 {
				return // llama2.c checkpoints hold plain Llama only
			}
			var buf bytes.Buffer
			require.NoError(t, llama2c.Write(&buf, m))
			bin := filepath.Join(t.TempDir(), "model.bin")
			require.NoError(t, os.WriteFile(bin, buf.Bytes(), 0o644))
			lm, err := llama2c.Parse(bin, buf.Bytes(), m.Tokenizer)
			require.NoError(t, err)
			got = logitsOf(t, lm, tokens)
			d, bitwise = maxDiff(want, got)
			require.True(t, bitwise, "llama2.c round trip differs by %g", d)
		})
	}
}
