package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/gguf"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

var weightTypes = []string{"f16", "bf16", "q8_0", "q6_k", "q4_k", "q4_0"}

// TestQuantizedWeightsCheckBitwise: a model whose rows suit every block format (dim 256) is
// converted to each weight type; generation with --check stays bitwise, every matrix has the
// requested type, and the file is smaller than f32.
func TestQuantizedWeightsCheckBitwise(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "f32.gguf")
	s := synth.Shape{Name: "q", Dim: 256, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 512, Context: 128, RopeBase: 10000, Seed: 21}
	require.NoError(t, s.WriteFile(src))
	for i, wt := range weightTypes {
		t.Run(wt, func(t *testing.T) {
			out := filepath.Join(dir, wt+".gguf")
			args := []string{"quantize", "--wtype", wt, src, out}
			if i%2 == 1 { // the flag after the files, as in llama-quantize
				args = []string{"quantize", src, out, "--wtype", wt}
			}
			_, stderr, code := kvref(t, args...)
			require.Equal(t, 0, code, stderr)
			f, err := gguf.Open(out)
			require.NoError(t, err)
			target, err := parseWeightTarget(wt)
			require.NoError(t, err)
			for _, ti := range f.Tensors {
				if len(ti.Dims) == 2 {
					require.Equal(t, target, ti.Type, ti.Name)
				}
			}
			f.Close()
			_, stderr, code = kvref(t, "run", "-m", out, "-p", "weights", "-n", "24", "--temp", "0", "--ignore-eos", "--check", "--json")
			require.Equal(t, 0, code, stderr)
		})
	}
	_, stderr, code := kvref(t, "quantize", "--wtype", "q3_k", src, filepath.Join(dir, "x.gguf"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "q4_k")
	_, stderr, code = kvref(t, "quantize", src, filepath.Join(dir, "x.gguf"), filepath.Join(dir, "y.gguf"))
	require.NotEqual(t, 0, code, "three files")
	require.Contains(t, stderr, "usage: kvref quantize")
}

// TestQuantizedWeightsAccuracyOnGolden measures, teacher-forced on the golden sequences of
// stories260K, each weight type's top-1 agreement and mean KL divergence against the f32
// weights. (Rows of 64 and 172 values: the K types fall back to Q8_0 where rows are not a
// multiple of 256, and the 172-wide down projections stay F32, as llama-quantize does.)
func TestQuantizedWeightsAccuracyOnGolden(t *testing.T) {
	path := testutil.Shared(t, "models/stories260K.gguf")
	base, err := model.LoadGGUF(path)
	require.NoError(t, err)
	defer base.Close()
	goldens := testutil.Goldens(t, "stories260K")
	ref := model.NewRunner(base, 2)
	defer ref.Close()
	want := map[string][][]float32{}
	for _, g := range goldens {
		want[g.Name], err = ref.Reference(g.Tokens(), quant.F32, quant.F32, len(g.PromptIDs)-1)
		require.NoError(t, err)
	}
	floor := map[string]float64{"f16": 0.99, "bf16": 0.97, "q8_0": 0.97, "q6_k": 0.97, "q4_k": 0.97, "q4_0": 0.80}
	in, err := gguf.Open(path)
	require.NoError(t, err)
	defer in.Close()
	for _, wt := range weightTypes {
		target, err := parseWeightTarget(wt)
		require.NoError(t, err)
		w, _, err := quantizeGGUF(in, target)
		require.NoError(t, err)
		out := filepath.Join(t.TempDir(), wt+".gguf")
		require.NoError(t, w.WriteFile(out))
		m, err := model.LoadGGUF(out)
		require.NoError(t, err)
		r := model.NewRunner(m, 2)
		agree, n, kl := 0, 0, 0.0
		for _, g := range goldens {
			got, err := r.Reference(g.Tokens(), quant.F32, quant.F32, len(g.PromptIDs)-1)
			require.NoError(t, err)
			for i := range got {
				if argmax(got[i]) == argmax(want[g.Name][i]) {
					agree++
				}
				p, q := golden.LogSoftmax(want[g.Name][i]), golden.LogSoftmax(got[i])
				for j := range p {
					kl += math.Exp(p[j]) * (p[j] - q[j])
				}
				n++
			}
		}
		r.Close()
		m.Close()
		frac := float64(agree) / float64(n)
		t.Logf("%-5s weights: top-1 agreement with f32 weights %d/%d (%.1f%%), mean KL %.2e", wt, agree, n, 100*frac, kl/float64(n))
		require.GreaterOrEqual(t, frac, floor[wt], wt)
	}
}
