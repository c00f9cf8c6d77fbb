package main

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

var weightTypes = []string{"f16", "bf16", "q8_0", "q6_k", "q5_k", "q4_k", "q3_k", "q2_k", "q5_1", "q5_0", "q4_1", "q4_0"}

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
			target, err := model.ParseQuantizeTarget(wt)
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
	_, stderr, code := kvref(t, "quantize", "--wtype", "iq4_nl", src, filepath.Join(dir, "x.gguf"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "q4_k, q6_k, q4_1, q5_0, q5_1, q2_k, q3_k, q5_k")
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
	var seqs [][]int
	var from []int
	for _, g := range testutil.Goldens(t, "stories260K") {
		seqs, from = append(seqs, g.Tokens()), append(from, len(g.PromptIDs)-1)
	}
	floor := map[string]float64{"f16": 0.99, "bf16": 0.97, "q8_0": 0.97, "q6_k": 0.97, "q5_k": 0.97, "q4_k": 0.97, "q3_k": 0.97,
		"q2_k": 0.97, "q5_1": 0.93, "q5_0": 0.92, "q4_1": 0.87, "q4_0": 0.80}
	for _, a := range quantizedAccuracy(t, path, seqs, from) {
		t.Logf("%-5s weights: top-1 agreement with f32 weights %d/%d (%.1f%%), mean KL %.2e", a.wt, a.agree, a.n, 100*a.frac(), a.kl)
		require.GreaterOrEqual(t, a.frac(), floor[a.wt], a.wt)
	}
}

// TestQuantizedWeightsAccuracyWideRows measures the same on a synthetic model whose rows
// are all multiples of 256 values, so that the K types are used everywhere (stories260K's
// rows make them fall back to Q8_0), on random token sequences: the error must grow as the
// bits shrink in mean KL, q8_0 < q6_k < q5_k < q4_k < q3_k < q2_k and q8_0 < q5_1 < q5_0 <
// q4_1 < q4_0, as llama.cpp's perplexity tables have it.
func TestQuantizedWeightsAccuracyWideRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wide.gguf")
	s := synth.Shape{Name: "wide", Dim: 256, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 768, Context: 128, RopeBase: 10000, Seed: 31}
	require.NoError(t, s.WriteFile(path))
	r := rng.New(7)
	var seqs [][]int
	var from []int
	for range 4 {
		seq := make([]int, 48)
		for i := range seq {
			seq[i] = 3 + int(r.Uint64()%256)
		}
		seqs, from = append(seqs, seq), append(from, 0)
	}
	kl := map[string]float64{}
	for _, a := range quantizedAccuracy(t, path, seqs, from) {
		t.Logf("%-5s weights (rows of 256 and 768): top-1 agreement with f32 weights %d/%d (%.1f%%), mean KL %.2e", a.wt, a.agree, a.n, 100*a.frac(), a.kl)
		kl[a.wt] = a.kl
	}
	for _, chain := range [][]string{{"f16", "q8_0", "q6_k", "q5_k", "q4_k", "q3_k", "q2_k"}, {"q8_0", "q5_1", "q5_0", "q4_1", "q4_0"}} {
		for i := 1; i < len(chain); i++ {
			require.Less(t, kl[chain[i-1]], kl[chain[i]], "%s before %s", chain[i-1], chain[i])
		}
	}
}

// accuracy is one weight type's agreement with the f32 weights.
type accuracy struct {
	wt       string
	agree, n int
	kl       float64 // mean KL(f32 ‖ quantized) per position
}

func (a accuracy) frac() float64 { return float64(a.agree) / float64(a.n) }

// quantizedAccuracy converts the model at path to every weight type and compares, teacher-
// forced on each sequence from position from[i] on, its next-token distributions with the
// f32 model's: top-1 agreement and mean KL divergence.
func quantizedAccuracy(t *testing.T, path string, seqs [][]int, from []int) []accuracy {
	t.Helper()
	base, err := model.LoadGGUF(path)
	require.NoError(t, err)
	defer base.Close()
	ref := model.NewRunner(base, 2)
	defer ref.Close()
	want := make([][][]float32, len(seqs))
	for i, seq := range seqs {
		want[i], err = ref.Reference(seq, quant.F32, quant.F32, from[i])
		require.NoError(t, err)
	}
	in, err := gguf.Open(path)
	require.NoError(t, err)
	defer in.Close()
	var out []accuracy
	for _, wt := range weightTypes {
		target, err := model.ParseQuantizeTarget(wt)
		require.NoError(t, err)
		w, _, err := model.QuantizeGGUF(in, target)
		require.NoError(t, err)
		file := filepath.Join(t.TempDir(), wt+".gguf")
		require.NoError(t, w.WriteFile(file))
		m, err := model.LoadGGUF(file)
		require.NoError(t, err)
		r := model.NewRunner(m, 2)
		a := accuracy{wt: wt}
		for s, seq := range seqs {
			got, err := r.Reference(seq, quant.F32, quant.F32, from[s])
			require.NoError(t, err)
			for i := range got {
				if logit.Argmax(got[i]) == logit.Argmax(want[s][i]) {
					a.agree++
				}
				p, q := golden.LogSoftmax(want[s][i]), golden.LogSoftmax(got[i])
				for j := range p {
					a.kl += math.Exp(p[j]) * (p[j] - q[j])
				}
				a.n++
			}
		}
		a.kl /= float64(a.n)
		r.Close()
		m.Close()
		out = append(out, a)
	}
	return out
}
