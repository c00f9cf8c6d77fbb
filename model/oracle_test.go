package model_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// oracle is a float64 forward pass written independently of the engine's kernels, the way
// one would on paper. With roundF16 it mimics llama.cpp's CPU arithmetic with an f16 KV
// cache (no flash attention): Q, K and V are rounded to f16, and so are the softmax weights
// before they multiply V (ggml converts the right-hand side of a mat-mul to the left's type).
func oracle(m *model.Model, tokens []int, roundF16 bool) [][]float64 {
	c, w := m.Config, m.Weights
	r := func(v float64) float64 {
		if !roundF16 {
			return v
		}
		return float64(quant.F16ToF32(quant.F32ToF16(float32(v))))
	}
	scratch := make([]float32, max(c.Dim, c.Hidden, c.QDim()))
	matmul := func(mat *model.Matrix, x []float64) []float64 {
		out := make([]float64, mat.Rows)
		for i := range out {
			for j, v := range mat.Row(i, scratch) {
				out[i] += float64(v) * x[j]
			}
		}
		return out
	}
	rmsnorm := func(x []float64, weight []float32) []float64 {
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+float64(c.NormEps))
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] * s * float64(weight[i])
		}
		return out
	}
	rope := func(x []float64, pos int) {
		for h := 0; h < len(x)/c.HeadDim; h++ {
			for i := 0; i < c.RopeDims/2; i++ {
				theta := float64(pos) * math.Pow(c.RopeBase, -float64(2*i)/float64(c.RopeDims))
				a, b := &x[h*c.HeadDim+2*i], &x[h*c.HeadDim+2*i+1]
				*a, *b = *a*math.Cos(theta)-*b*math.Sin(theta), *a*math.Sin(theta)+*b*math.Cos(theta)
			}
		}
	}
	n := len(tokens)
	x := make([][]float64, n)
	for p, t := range tokens {
		x[p] = make([]float64, c.Dim)
		for i, v := range w.TokenEmbed.Row(t, scratch) {
			x[p][i] = float64(v)
		}
	}
	hd := c.HeadDim
	for _, lw := range w.Layers {
		q, k, v := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for p := range n {
			xb := rmsnorm(x[p], lw.AttnNorm)
			q[p], k[p], v[p] = matmul(lw.Wq, xb), matmul(lw.Wk, xb), matmul(lw.Wv, xb)
			rope(q[p], p)
			rope(k[p], p)
			for _, row := range [][]float64{q[p], k[p], v[p]} {
				for i := range row {
					row[i] = r(row[i])
				}
			}
		}
		for p := range n {
			att := make([]float64, c.QDim())
			for h := 0; h < c.Heads; h++ {
				kvh := h / (c.Heads / c.KVHeads)
				scores := make([]float64, p+1)
				mx := math.Inf(-1)
				for t := range scores {
					for i := 0; i < hd; i++ {
						scores[t] += q[p][h*hd+i] * k[t][kvh*hd+i]
					}
					scores[t] /= math.Sqrt(float64(hd))
					mx = math.Max(mx, scores[t])
				}
				sum := 0.0
				for t := range scores {
					scores[t] = math.Exp(scores[t] - mx)
					sum += scores[t]
				}
				for t := range scores {
					pt := r(scores[t] / sum)
					for i := 0; i < hd; i++ {
						att[h*hd+i] += pt * v[t][kvh*hd+i]
					}
				}
			}
			for i, o := range matmul(lw.Wo, att) {
				x[p][i] += o
			}
			xb := rmsnorm(x[p], lw.FFNNorm)
			gate, up := matmul(lw.Gate, xb), matmul(lw.Up, xb)
			for i := range gate {
				gate[i] = gate[i] / (1 + math.Exp(-gate[i])) * up[i]
			}
			for i, d := range matmul(lw.Down, gate) {
				x[p][i] += d
			}
		}
	}
	logits := make([][]float64, n)
	for p := range n {
		logits[p] = matmul(w.Output, rmsnorm(x[p], w.OutputNorm))
	}
	return logits
}

// TestReferenceMatchesFloat64Oracle bounds the engine's float32 error: at every position of
// every golden sequence, every logit of the cache-free reference (and so, by the bitwise
// checks, of the cached path) is within 1e-4 of an independent float64 computation.
func TestReferenceMatchesFloat64Oracle(t *testing.T) {
	m, err := model.LoadGGUF(testutil.Shared(t, "models/stories260K.gguf"))
	require.NoError(t, err)
	defer m.Close()
	r := model.NewRunner(m, 2)
	defer r.Close()
	for _, g := range testutil.Goldens(t, "stories260K") {
		tokens := g.Tokens()
		got, err := r.Reference(tokens, quant.F32, quant.F32, 0)
		require.NoError(t, err)
		want := oracle(m, tokens, false)
		worst := 0.0
		for p := range tokens {
			for i, v := range want[p] {
				worst = math.Max(worst, math.Abs(float64(got[p][i])-v))
			}
		}
		t.Logf("%s: %d positions, max |float32 - float64| = %.2g", g.Name, len(tokens), worst)
		require.LessOrEqual(t, worst, 1e-4, g.Name)
	}
}

// TestGoldenWasMadeWithF16Cache documents why kvref's float32 logits differ from the
// golden files by up to ~1.6e-2 although they agree with float64 to 1e-4: the independent
// engine's arithmetic is that of an f16 KV cache (Q, K, V and the softmax weights rounded to
// f16), not an f32 one. Over the first 16 positions of every golden file, emulating that in
// float64 brings the mean error on the golden top-5 logits to about 1e-4, more than ten times
// closer than exact arithmetic. (Single logits still differ by up to ~1e-3 where a value sits
// near an f16 rounding boundary or the prompt was batched, and later positions drift further
// through roundings this emulation does not model.)
func TestGoldenWasMadeWithF16Cache(t *testing.T) {
	m, err := model.LoadGGUF(testutil.Shared(t, "models/stories260K.gguf"))
	require.NoError(t, err)
	defer m.Close()
	const window = 16
	var sumExact, sumF16 float64
	n := 0
	for _, g := range testutil.Goldens(t, "stories260K") {
		tokens := g.Tokens()[:window]
		exact, f16 := oracle(m, tokens, false), oracle(m, tokens, true)
		for i, s := range g.Steps {
			pos := len(g.PromptIDs) - 1 + i
			if pos >= window {
				break
			}
			for _, top := range s.Top {
				id := int(top[0])
				sumExact += math.Abs(exact[pos][id] - top[1])
				sumF16 += math.Abs(f16[pos][id] - top[1])
				n++
			}
		}
	}
	meanExact, meanF16 := sumExact/float64(n), sumF16/float64(n)
	t.Logf("%d golden logits at positions < %d: mean error of exact arithmetic %.2g, of f16-cache arithmetic %.2g", n, window, meanExact, meanF16)
	require.Less(t, meanF16, 2e-4, "f16-cache emulation vs golden")
	require.Greater(t, meanExact, 10*meanF16, "exact arithmetic should be clearly further from the golden")
}
