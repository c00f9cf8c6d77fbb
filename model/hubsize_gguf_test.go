package model_test

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// hubGGUF is a Gemma checkpoint's GGUF conversion as llama.cpp's convert_hf_to_gguf.py
// writes it (--outtype bf16): the metadata keys it writes, Gemma's vocabulary layout, and
// every tensor under its name and shape, matrices in BF16 and norms in F32, as holes.
type hubGGUF struct {
	arch                                                     string
	ctx, dim, layers, heads, kvHeads, headDim, hidden, vocab int
	window                                                   int
	ropeBase                                                 float32
	startOfTurn                                              int // <start_of_turn>'s id (<end_of_turn> follows)
}

func writeHubGGUF(t *testing.T, h hubGGUF) string {
	w := gguf.NewWriter()
	a := h.arch + "."
	w.AddString("general.architecture", h.arch)
	w.AddString("general.type", "model")
	w.AddString("general.name", "hub-shaped "+h.arch)
	w.AddUint32(a+"context_length", uint32(h.ctx))
	w.AddUint32(a+"embedding_length", uint32(h.dim))
	w.AddUint32(a+"block_count", uint32(h.layers))
	w.AddUint32(a+"feed_forward_length", uint32(h.hidden))
	w.AddUint32(a+"attention.head_count", uint32(h.heads))
	w.AddUint32(a+"attention.head_count_kv", uint32(h.kvHeads))
	w.AddFloat32(a+"attention.layer_norm_rms_epsilon", 1e-6)
	w.AddUint32(a+"attention.key_length", uint32(h.headDim))
	w.AddUint32(a+"attention.value_length", uint32(h.headDim))
	w.AddUint32("general.file_type", 32) // MOSTLY_BF16
	if h.arch == "gemma3" {
		w.AddFloat32(a+"rope.freq_base", h.ropeBase)
	} else {
		w.AddFloat32(a+"attn_logit_softcapping", 50)
		w.AddFloat32(a+"final_logit_softcapping", 30)
	}
	w.AddUint32(a+"attention.sliding_window", uint32(h.window))
	tokens := make([]string, h.vocab)
	types := make([]int32, h.vocab)
	for i := range tokens {
		tokens[i], types[i] = fmt.Sprintf("▁piece%d", i), 1
	}
	for i, s := range []string{"<pad>", "<eos>", "<bos>", "<unk>", "<mask>"} {
		tokens[i], types[i] = s, 3
	}
	types[3], types[4] = 2, 4
	tokens[h.startOfTurn], tokens[h.startOfTurn+1] = "<start_of_turn>", "<end_of_turn>"
	types[h.startOfTurn], types[h.startOfTurn+1] = 3, 3
	for b := range 256 {
		tokens[238+b], types[238+b] = fmt.Sprintf("<0x%02X>", b), 6
	}
	w.AddString("tokenizer.ggml.model", "llama")
	w.AddString("tokenizer.ggml.pre", "default")
	w.AddStrings("tokenizer.ggml.tokens", tokens)
	w.AddFloat32s("tokenizer.ggml.scores", make([]float32, h.vocab))
	w.AddInt32s("tokenizer.ggml.token_type", types)
	w.AddUint32("tokenizer.ggml.bos_token_id", 2)
	w.AddUint32("tokenizer.ggml.eos_token_id", 1)
	w.AddUint32("tokenizer.ggml.unknown_token_id", 3)
	w.AddUint32("tokenizer.ggml.padding_token_id", 0)
	w.AddBool("tokenizer.ggml.add_bos_token", true)
	w.AddBool("tokenizer.ggml.add_eos_token", false)
	w.AddBool("tokenizer.ggml.add_space_prefix", false)

	path := filepath.Join(t.TempDir(), h.arch+".gguf")
	out := testutil.NewSparseFile(t, path, 2*h.vocab*h.dim)
	add := func(name string, typ gguf.TensorType, dims ...int) {
		n := 4
		if typ == gguf.BF16 {
			n = 2
		}
		d := make([]uint64, len(dims))
		for i, x := range dims {
			d[i], n = uint64(x), n*x
		}
		require.NoError(t, w.AddTensor(name, typ, d, out.Zeros(n)))
	}
	q, kv := h.heads*h.headDim, h.kvHeads*h.headDim
	add("token_embd.weight", gguf.BF16, h.dim, h.vocab)
	for l := range h.layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", gguf.F32, h.dim)
		add(p+"attn_q.weight", gguf.BF16, h.dim, q)
		add(p+"attn_k.weight", gguf.BF16, h.dim, kv)
		add(p+"attn_v.weight", gguf.BF16, h.dim, kv)
		if h.arch == "gemma3" {
			add(p+"attn_q_norm.weight", gguf.F32, h.headDim)
			add(p+"attn_k_norm.weight", gguf.F32, h.headDim)
		}
		add(p+"attn_output.weight", gguf.BF16, q, h.dim)
		add(p+"post_attention_norm.weight", gguf.F32, h.dim)
		add(p+"ffn_norm.weight", gguf.F32, h.dim)
		add(p+"ffn_gate.weight", gguf.BF16, h.dim, h.hidden)
		add(p+"ffn_up.weight", gguf.BF16, h.dim, h.hidden)
		add(p+"ffn_down.weight", gguf.BF16, h.hidden, h.dim)
		add(p+"post_ffw_norm.weight", gguf.F32, h.dim)
	}
	add("output_norm.weight", gguf.F32, h.dim)
	_, err := w.WriteTo(out)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	return path
}

// TestHubGemmaGGUFLoad: the GGUF conversions of Gemma 3 270M, Gemma 3 1B and Gemma 2 2B, with
// the keys, the vocabulary size and every tensor's name, type and shape of llama.cpp's
// converter, load and mean what llama.cpp makes of them; the 270M decodes a token through
// its 262144-row tied classifier.
func TestHubGemmaGGUFLoad(t *testing.T) {
	t.Parallel()

	for _, h := range []hubGGUF{
		{"gemma3", 32768, 640, 18, 4, 1, 256, 2048, 262144, 512, 1e6, 105},
		{"gemma3", 32768, 1152, 26, 4, 1, 256, 6912, 262144, 512, 1e6, 105},
		{"gemma2", 8192, 2304, 26, 8, 4, 256, 9216, 256000, 4096, 0, 106},
	} {
		t.Run(fmt.Sprintf("%s-%d", h.arch, h.dim), func(t *testing.T) {
			f, err := gguf.Open(writeHubGGUF(t, h))
			require.NoError(t, err)
			defer f.Close()
			m, err := model.FromGGUF(f, f.Path)
			require.NoError(t, err)
			c := m.Config
			require.Equal(t, h.vocab, c.Vocab)
			require.True(t, c.Tied)
			require.Equal(t, 256.0, c.QueryScalar)
			require.Equal(t, h.window, c.Window(0))
			period := map[string]int{"gemma2": 2, "gemma3": 6}[h.arch]
			require.Zero(t, c.Window(period-1), "layer %d is global", period-1)
			require.True(t, m.Tokenizer.IsEOG(h.startOfTurn+1), "<end_of_turn> ends generation")
			require.True(t, m.Tokenizer.IsEOG(1), "<eos> ends generation")
			require.False(t, m.Tokenizer.IsEOG(h.startOfTurn), "<start_of_turn> does not, in llama.cpp as in transformers")
			if h.arch == "gemma3" {
				require.Equal(t, model.Rope{Base: 10000}, c.LayerSpec(0).Rope)
				require.Equal(t, model.Rope{Base: 1e6}, c.LayerSpec(5).Rope)
			} else {
				require.Equal(t, 50.0, c.AttnSoftCap)
				require.Equal(t, 30.0, c.FinalSoftCap)
			}
			if h.dim != 640 {
				return
			}
			r := model.NewRunner(m, 2)
			defer r.Close()
			logits, err := r.Reference([]int{2, 105}, quant.F32, quant.F32, 1)
			require.NoError(t, err)
			require.Len(t, logits[0], h.vocab)
			for _, v := range logits[0] {
				require.False(t, math.IsNaN(float64(v)))
			}
		})
	}
}
