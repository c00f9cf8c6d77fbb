package model_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/loader"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// A float64 oracle for Gemma 2 and Gemma 3, written from transformers' modelling code
// (modeling_gemma2.py, modeling_gemma3.py) and not from kvref's: it reads the checkpoint
// itself (config.json and safetensors, or the GGUF metadata and tensors with llama.cpp's
// conventions), applies Hugging Face's (1 + w) to the norm weights of a Hugging Face
// directory, and computes the model position by position in float64.

// gemmaRaw is a Gemma checkpoint as the oracle reads it.
type gemmaRaw struct {
	gemma3                                       bool
	dim, layers, heads, kvHeads, headDim, hidden int
	eps, queryScalar, attnCap, finalCap          float64 // caps: 0 for none
	window                                       int
	sliding                                      []bool
	globalBase, localBase, globalLinear          float64 // globalLinear: the linear RoPE factor of the global layers (1: none)
	embed                                        [][]float64
	finalNorm                                    []float64 // the multiplier: 1 + w
	layer                                        []gemmaRawLayer
}

type gemmaRawLayer struct {
	inNorm, postAttnNorm, preFFNNorm, postFFNNorm, qNorm, kNorm []float64
	wq, wk, wv, wo, gate, up, down                              [][]float64
}

// rows splits flat row-major float32 values into rows of cols float64.
func rows(v []float32, cols int) [][]float64 {
	out := make([][]float64, len(v)/cols)
	for r := range out {
		out[r] = make([]float64, cols)
		for c := range cols {
			out[r][c] = float64(v[r*cols+c])
		}
	}
	return out
}

func f32s(data []byte) []float32 {
	v := make([]float32, len(data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return v
}

// rawFromHF reads a Gemma Hugging Face directory written in float32 with every key present.
func rawFromHF(t *testing.T, dir string) *gemmaRaw {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	require.NoError(t, err)
	var c struct {
		Architectures    []string
		HiddenSize       int                       `json:"hidden_size"`
		Layers           int                       `json:"num_hidden_layers"`
		Heads            int                       `json:"num_attention_heads"`
		KVHeads          int                       `json:"num_key_value_heads"`
		HeadDim          int                       `json:"head_dim"`
		Hidden           int                       `json:"intermediate_size"`
		Eps              float64                   `json:"rms_norm_eps"`
		QueryScalar      float64                   `json:"query_pre_attn_scalar"`
		AttnCap          *float64                  `json:"attn_logit_softcapping"`
		FinalCap         *float64                  `json:"final_logit_softcapping"`
		Window           int                       `json:"sliding_window"`
		LayerTypes       []string                  `json:"layer_types"`
		RopeTheta        float64                   `json:"rope_theta"`
		RopeLocal        float64                   `json:"rope_local_base_freq"`
		RopeScaling      *struct{ Factor float64 } `json:"rope_scaling"`
		Tie              bool                      `json:"tie_word_embeddings"`
		HiddenActivation string                    `json:"hidden_activation"`
	}
	require.NoError(t, json.Unmarshal(data, &c))
	require.True(t, c.Tie)
	require.Equal(t, "gelu_pytorch_tanh", c.HiddenActivation)
	r := &gemmaRaw{gemma3: c.Architectures[0] == "Gemma3ForCausalLM", dim: c.HiddenSize, layers: c.Layers, heads: c.Heads,
		kvHeads: c.KVHeads, headDim: c.HeadDim, hidden: c.Hidden, eps: c.Eps, queryScalar: c.QueryScalar,
		window: c.Window, globalBase: c.RopeTheta, localBase: c.RopeTheta, globalLinear: 1}
	if c.AttnCap != nil {
		r.attnCap = *c.AttnCap
	}
	if c.FinalCap != nil {
		r.finalCap = *c.FinalCap
	}
	if r.gemma3 {
		r.localBase = c.RopeLocal
		if c.RopeScaling != nil {
			r.globalLinear = c.RopeScaling.Factor
		}
	}
	for _, lt := range c.LayerTypes {
		r.sliding = append(r.sliding, lt == "sliding_attention")
	}
	set, err := safetensors.OpenDir(dir)
	require.NoError(t, err)
	defer set.Close()
	get := func(name string) []float32 {
		info, _, ok := set.Tensor(name)
		require.True(t, ok, name)
		require.Equal(t, safetensors.F32, info.DType, name)
		b, err := set.TensorData(name)
		require.NoError(t, err)
		return f32s(b)
	}
	// Hugging Face's Gemma RMSNorm multiplies by (1 + w).
	norm := func(name string) []float64 {
		v := get(name)
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = 1 + float64(x)
		}
		return out
	}
	r.embed = rows(get("model.embed_tokens.weight"), r.dim)
	r.finalNorm = norm("model.norm.weight")
	for l := range r.layers {
		p := fmt.Sprintf("model.layers.%d.", l)
		ly := gemmaRawLayer{
			inNorm: norm(p + "input_layernorm.weight"), postAttnNorm: norm(p + "post_attention_layernorm.weight"),
			preFFNNorm: norm(p + "pre_feedforward_layernorm.weight"), postFFNNorm: norm(p + "post_feedforward_layernorm.weight"),
			wq: rows(get(p+"self_attn.q_proj.weight"), r.dim), wk: rows(get(p+"self_attn.k_proj.weight"), r.dim),
			wv: rows(get(p+"self_attn.v_proj.weight"), r.dim), wo: rows(get(p+"self_attn.o_proj.weight"), r.heads*r.headDim),
			gate: rows(get(p+"mlp.gate_proj.weight"), r.dim), up: rows(get(p+"mlp.up_proj.weight"), r.dim),
			down: rows(get(p+"mlp.down_proj.weight"), r.hidden),
		}
		if r.gemma3 {
			ly.qNorm, ly.kNorm = norm(p+"self_attn.q_norm.weight"), norm(p+"self_attn.k_norm.weight")
		}
		r.layer = append(r.layer, ly)
	}
	return r
}

// rawFromGGUF reads a Gemma GGUF file with llama.cpp's conventions: norms stored as
// (1 + w) already, the pattern fixed by the architecture (every 2nd or 6th layer global),
// the sliding layers of gemma3 at base 10000 unscaled, the query scale from the head dim.
func rawFromGGUF(t *testing.T, path string) *gemmaRaw {
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	arch := f.Architecture()
	u := func(k string) int {
		v, err := f.Uint(arch + "." + k)
		require.NoError(t, err, k)
		return int(v)
	}
	fl := func(k string, def float64) float64 {
		if _, ok := f.Lookup(arch + "." + k); !ok {
			return def
		}
		v, err := f.Float(arch + "." + k)
		require.NoError(t, err, k)
		return v
	}
	r := &gemmaRaw{gemma3: arch == "gemma3", dim: u("embedding_length"), layers: u("block_count"), heads: u("attention.head_count"),
		kvHeads: u("attention.head_count_kv"), headDim: u("attention.key_length"), hidden: u("feed_forward_length"),
		eps: fl("attention.layer_norm_rms_epsilon", 0), window: u("attention.sliding_window"),
		globalBase: fl("rope.freq_base", 10000), localBase: fl("rope.freq_base", 10000), globalLinear: fl("rope.scaling.factor", 1)}
	r.queryScalar = float64(r.headDim)
	period := 2
	if r.gemma3 {
		period, r.localBase = 6, 10000
	} else {
		r.attnCap, r.finalCap = fl("attn_logit_softcapping", 50), fl("final_logit_softcapping", 30)
	}
	for l := range r.layers {
		r.sliding = append(r.sliding, l%period < period-1)
	}
	get := func(name string) []float32 {
		info, ok := f.Tensor(name)
		require.True(t, ok, name)
		require.Equal(t, gguf.F32, info.Type, name)
		b, err := f.TensorData(info)
		require.NoError(t, err)
		return f32s(b)
	}
	norm := func(name string) []float64 {
		v := get(name)
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x) // llama.cpp's converter stored 1 + w
		}
		return out
	}
	r.embed = rows(get("token_embd.weight"), r.dim)
	r.finalNorm = norm("output_norm.weight")
	for l := range r.layers {
		p := fmt.Sprintf("blk.%d.", l)
		ly := gemmaRawLayer{
			inNorm: norm(p + "attn_norm.weight"), postAttnNorm: norm(p + "post_attention_norm.weight"),
			preFFNNorm: norm(p + "ffn_norm.weight"), postFFNNorm: norm(p + "post_ffw_norm.weight"),
			wq: rows(get(p+"attn_q.weight"), r.dim), wk: rows(get(p+"attn_k.weight"), r.dim), wv: rows(get(p+"attn_v.weight"), r.dim),
			wo: rows(get(p+"attn_output.weight"), r.heads*r.headDim), gate: rows(get(p+"ffn_gate.weight"), r.dim),
			up: rows(get(p+"ffn_up.weight"), r.dim), down: rows(get(p+"ffn_down.weight"), r.hidden),
		}
		if r.gemma3 {
			ly.qNorm, ly.kNorm = norm(p+"attn_q_norm.weight"), norm(p+"attn_k_norm.weight")
		}
		r.layer = append(r.layer, ly)
	}
	return r
}

// gemmaOracle computes the logits at every position of tokens in float64, as transformers'
// Gemma2ForCausalLM / Gemma3ForCausalLM define them.
func gemmaOracle(r *gemmaRaw, tokens []int) [][]float64 {
	matvec := func(w [][]float64, x []float64) []float64 {
		out := make([]float64, len(w))
		for i, row := range w {
			for j, v := range row {
				out[i] += v * x[j]
			}
		}
		return out
	}
	rmsnorm := func(x, mult []float64) []float64 { // x / sqrt(mean(x²) + eps) · (1 + w)
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+r.eps)
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] * s * mult[i]
		}
		return out
	}
	gelu := func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) }
	softcap := func(x, limit float64) float64 {
		if limit == 0 {
			return x
		}
		return limit * math.Tanh(x/limit)
	}
	hd := r.headDim
	// rotateHalf applies rotary embedding the way apply_rotary_pos_emb does: x·cos + rotate_half(x)·sin.
	rotateHalf := func(x []float64, pos int, base, linear float64) {
		for h := 0; h < len(x)/hd; h++ {
			v := x[h*hd : (h+1)*hd]
			for i := 0; i < hd/2; i++ {
				theta := float64(pos) / linear * math.Pow(base, -float64(2*i)/float64(hd))
				a, b := v[i], v[i+hd/2]
				v[i], v[i+hd/2] = a*math.Cos(theta)-b*math.Sin(theta), b*math.Cos(theta)+a*math.Sin(theta)
			}
		}
	}
	n := len(tokens)
	x := make([][]float64, n)
	for p, tok := range tokens {
		x[p] = make([]float64, r.dim)
		for i, v := range r.embed[tok] {
			x[p][i] = v * math.Sqrt(float64(r.dim)) // Gemma's normalizer
		}
	}
	for l, ly := range r.layer {
		base, linear := r.globalBase, r.globalLinear
		if r.sliding[l] && r.gemma3 {
			base, linear = r.localBase, 1
		}
		q, k, v := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for p := range n {
			h := rmsnorm(x[p], ly.inNorm)
			q[p], k[p], v[p] = matvec(ly.wq, h), matvec(ly.wk, h), matvec(ly.wv, h)
			if r.gemma3 {
				for hh := 0; hh < r.heads; hh++ {
					copy(q[p][hh*hd:], rmsnorm(q[p][hh*hd:(hh+1)*hd], ly.qNorm))
				}
				for hh := 0; hh < r.kvHeads; hh++ {
					copy(k[p][hh*hd:], rmsnorm(k[p][hh*hd:(hh+1)*hd], ly.kNorm))
				}
			}
			rotateHalf(q[p], p, base, linear)
			rotateHalf(k[p], p, base, linear)
		}
		for p := range n {
			first := 0
			if r.sliding[l] && r.window > 0 { // the mask keeps kv_idx > q_idx - sliding_window
				first = max(0, p-r.window+1)
			}
			att := make([]float64, r.heads*hd)
			for hh := 0; hh < r.heads; hh++ {
				kvh := hh / (r.heads / r.kvHeads)
				w := make([]float64, p+1)
				mx := math.Inf(-1)
				for t := first; t <= p; t++ {
					s := 0.0
					for i := range hd {
						s += q[p][hh*hd+i] * k[t][kvh*hd+i]
					}
					w[t] = softcap(s*math.Pow(r.queryScalar, -0.5), r.attnCap)
					mx = math.Max(mx, w[t])
				}
				sum := 0.0
				for t := first; t <= p; t++ {
					w[t] = math.Exp(w[t] - mx)
					sum += w[t]
				}
				for t := first; t <= p; t++ {
					for i := range hd {
						att[hh*hd+i] += w[t] / sum * v[t][kvh*hd+i]
					}
				}
			}
			o := rmsnorm(matvec(ly.wo, att), ly.postAttnNorm)
			for i := range o {
				x[p][i] += o[i]
			}
			h := rmsnorm(x[p], ly.preFFNNorm)
			g, u := matvec(ly.gate, h), matvec(ly.up, h)
			for i := range g {
				g[i] = gelu(g[i]) * u[i]
			}
			d := rmsnorm(matvec(ly.down, g), ly.postFFNNorm)
			for i := range d {
				x[p][i] += d[i]
			}
		}
	}
	logits := make([][]float64, n)
	for p := range n {
		logits[p] = matvec(r.embed, rmsnorm(x[p], r.finalNorm)) // tied: the embedding classifies
		for i := range logits[p] {
			logits[p][i] = softcap(logits[p][i], r.finalCap)
		}
	}
	return logits
}

// worstRelative is the largest |got - want| / max(1, |want|).
func worstRelative(got [][]float32, want [][]float64) float64 {
	worst := 0.0
	for p := range want {
		for i, w := range want[p] {
			worst = math.Max(worst, math.Abs(float64(got[p][i])-w)/math.Max(1, math.Abs(w)))
		}
	}
	return worst
}

// TestGemmaReferenceMatchesFloat64Oracle: on synthetic Gemma 2 and Gemma 3 models, as
// Hugging Face directories and as GGUF files, every logit of kvref's cache-free reference
// (and so, by the bitwise checks, of the cached path) is within 1e-5 · max(1, |logit|) of
// the float64 oracle, over sequences three times longer than the sliding window. The
// Gemma 2 shape has small soft-caps (2 on the scores, 1.5 on the logits) so that the caps
// shape every score and logit; the oracles of the two formats of one model agree too, which
// checks the directory writer's mapping of norms and names against llama.cpp's.
func TestGemmaReferenceMatchesFloat64Oracle(t *testing.T) {
	t.Parallel()

	gemma2 := synth.Variants["gemma2"]
	gemma2.Name, gemma2.AttnSoftCap, gemma2.FinalSoftCap = "oracle-gemma2", 2, 1.5
	for _, s := range []synth.Shape{gemma2, synth.Variants["gemma3"], synth.Variants["gemma3-hf-layout"]} {
		t.Run(s.Name, func(t *testing.T) {
			tokens := make([]int, 3*s.SlidingWindow+2)
			for i := range tokens {
				tokens[i] = (7 + 37*i) % 264
			}
			check := func(format string, m *model.Model, raw *gemmaRaw) []float64 {
				r := model.NewRunner(m, 2)
				defer r.Close()
				got, err := r.Reference(tokens, quant.F32, quant.F32, 0)
				require.NoError(t, err)
				want := gemmaOracle(raw, tokens)
				worst := worstRelative(got, want)
				t.Logf("%s %s: %d positions, worst |float32 - float64| / max(1, |logit|) = %.3g", s.Name, format, len(tokens), worst)
				require.LessOrEqual(t, worst, 1e-5, format)
				return want[len(want)-1]
			}
			dir := filepath.Join(t.TempDir(), "hf")
			require.NoError(t, loader.WriteSynth(s, "hf", dir))
			hm, err := hf.Load(dir)
			require.NoError(t, err)
			defer hm.Close()
			fromHF := check("hf", hm, rawFromHF(t, dir))
			if s.GGUFExpressible() != nil {
				return
			}
			path := filepath.Join(t.TempDir(), "m.gguf")
			require.NoError(t, s.WriteFile(path))
			gm, err := model.LoadGGUF(path)
			require.NoError(t, err)
			defer gm.Close()
			fromGGUF := check("gguf", gm, rawFromGGUF(t, path))
			require.InDeltaSlice(t, fromHF, fromGGUF, 1e-9, "the two formats' oracles")
		})
	}
}
