package model

import (
	"fmt"
	"math"
	"sync"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/internal/parallel"
)

// Runner runs forward passes of one model on a persistent pool of worker threads.
type Runner struct {
	m       *Model
	threads *parallel.Pool
	probe   AttentionProbe
}

// NewRunner returns a runner using threads workers (≤ 0: one per core).
func NewRunner(m *Model, threads int) *Runner {
	return &Runner{m: m, threads: parallel.NewPool(threads)}
}

// Model returns the runner's model.
func (r *Runner) Model() *Model { return r.m }

// Threads is the number of worker threads.
func (r *Runner) Threads() int { return r.threads.Threads() }

// Close stops the worker threads.
func (r *Runner) Close() { r.threads.Close() }

// kvStore is where a forward pass keeps keys and values and how it attends over them: the
// paged cache (cached.go) or plain arrays (reference.go). Everything else is shared, so
// the two paths take the same arithmetic steps in the same order.
type kvStore interface {
	// store keeps the rotated key and the value of batch row b in layer l.
	store(l, b int, k, v []float32)
	// attend writes into att the attention output of every batch row in layer l, for the
	// rows' queries q (n rows of Heads·HeadDim values each), on the given threads.
	attend(l int, att, q []float32, threads *parallel.Pool)
}

// forward runs the transformer on a batch of rows: row b is token tokens[b] at position
// positions[b]. It returns the logits of the rows with want[b] set (nil for the others),
// in *logitsBuf when it is not nil (see ForwardInto), else in a fresh array. This is the
// whole model, top to bottom, as in llama2.c's run.c, batched: every weight matrix is read
// once for all rows.
func (r *Runner) forward(tokens, positions []int, want []bool, kv kvStore, logitsBuf *[]float32) ([][]float32, error) {
	c := r.m.Config
	w := r.m.Weights
	n := len(tokens)
	for b, t := range tokens {
		if t < 0 || t >= c.Vocab {
			return nil, fmt.Errorf("model: token id %d at position %d is outside the vocabulary of %d", t, positions[b], c.Vocab)
		}
	}
	dim, qDim, kvDim, hid := c.Dim, c.QDim(), c.KVDim(), c.Hidden
	acts := newActivations(n * (3*dim + 2*qDim + 2*kvDim + 2*hid))
	defer acts.release()
	x := acts.take(n * dim)   // the residual stream, one row per token
	xb := acts.take(n * dim)  // normalised input of a sub-layer
	q := acts.take(n * qDim)  // queries
	k := acts.take(n * kvDim) // keys
	v := acts.take(n * kvDim) // values
	att := acts.take(n * qDim)
	out := acts.take(n * dim) // output of a sub-layer, added to x
	gate := acts.take(n * hid)
	up := acts.take(n * hid)

	// 1. Token embedding (Gemma: times √dim, in float32 as transformers and llama.cpp scale it).
	scratch := make([]float32, dim)
	for b, t := range tokens {
		xr := x[b*dim : (b+1)*dim]
		copy(xr, w.TokenEmbed.Row(t, scratch))
		if c.EmbedScale {
			scale := float32(math.Sqrt(float64(dim)))
			for i := range xr {
				xr[i] *= scale
			}
		}
	}

	// eachRow runs fn for every batch row, the rows shared out among the threads (in a
	// decode step, one row: the caller alone). Every row's work is independent of the
	// others', so this changes nothing in the results.
	eachRow := func(fn func(b int)) {
		r.threads.For(n, 4, func(start, end int) {
			for b := start; b < end; b++ {
				fn(b)
			}
		})
	}

	for l := range w.Layers {
		lw := &w.Layers[l]

		// 2. Attention: RMSNorm, Q/K/V projections for all rows at once.
		eachRow(func(b int) {
			kernels.RMSNorm(xb[b*dim:(b+1)*dim], x[b*dim:(b+1)*dim], lw.AttnNorm, c.NormEps)
		})
		mulShared(r.threads, xb, n, []*Matrix{lw.Wq, lw.Wk, lw.Wv}, [][]float32{q, k, v})
		for b := range n {
			if c.QKVBias { // Qwen2
				kernels.Add(q[b*qDim:(b+1)*qDim], lw.BiasQ)
				kernels.Add(k[b*kvDim:(b+1)*kvDim], lw.BiasK)
				kernels.Add(v[b*kvDim:(b+1)*kvDim], lw.BiasV)
			}
			if c.QKNorm { // Qwen3: every head of Q and K normalised on its own
				for h := range c.Heads {
					qh := q[b*qDim+h*c.HeadDim : b*qDim+(h+1)*c.HeadDim]
					kernels.RMSNorm(qh, qh, lw.QNorm, c.NormEps)
				}
				for h := range c.KVHeads {
					kh := k[b*kvDim+h*c.HeadDim : b*kvDim+(h+1)*c.HeadDim]
					kernels.RMSNorm(kh, kh, lw.KNorm, c.NormEps)
				}
			}
		}

		// 3. Rotate each row's Q and K to its own position with the layer's RoPE (Gemma 3:
		//    local and global bases), then store K and V (the cache quantizes on write).
		rope := r.m.ropes[l]
		eachRow(func(b int) {
			pos := positions[b]
			rope.ApplyQK(q[b*qDim:(b+1)*qDim], c.Heads, k[b*kvDim:(b+1)*kvDim], c.KVHeads, c.HeadDim, pos)
			kv.store(l, b, k[b*kvDim:(b+1)*kvDim], v[b*kvDim:(b+1)*kvDim])
		})

		// 4. Each row attends over its own positions (the layer's window of them; GQA: query
		//    heads share KV heads; the layer's scale and soft-cap, Config.AttentionShape):
		//    through the block tables for the cache (attention.PagedBatch), over the plain
		//    arrays for the reference (attention.ContiguousBatch).
		kv.attend(l, att, q, r.threads)

		// 5. Output projection, its RMSNorm (Gemma's post-attention norm), residual.
		lw.Wo.MulBatch(r.threads, out, att, n)
		eachRow(func(b int) {
			o := out[b*dim : (b+1)*dim]
			if c.PostNorms {
				kernels.RMSNorm(o, o, lw.PostAttnNorm, c.NormEps)
			}
			kernels.Add(x[b*dim:(b+1)*dim], o)
		})

		// 6. Feed-forward: RMSNorm, SwiGLU (silu(gate) · up) or Gemma's GeGLU
		//    (gelu_tanh(gate) · up), down projection, its RMSNorm (Gemma), residual.
		eachRow(func(b int) {
			kernels.RMSNorm(xb[b*dim:(b+1)*dim], x[b*dim:(b+1)*dim], lw.FFNNorm, c.NormEps)
		})
		mulShared(r.threads, xb, n, []*Matrix{lw.Gate, lw.Up}, [][]float32{gate, up})
		eachRow(func(b int) {
			if c.Activation == ActivationGELUTanh {
				kernels.GELUTanhGLU(gate[b*hid:(b+1)*hid], up[b*hid:(b+1)*hid])
			} else {
				kernels.SwiGLU(gate[b*hid:(b+1)*hid], up[b*hid:(b+1)*hid])
			}
		})
		lw.Down.MulBatch(r.threads, out, gate, n)
		eachRow(func(b int) {
			o := out[b*dim : (b+1)*dim]
			if c.PostNorms {
				kernels.RMSNorm(o, o, lw.PostFFNNorm, c.NormEps)
			}
			kernels.Add(x[b*dim:(b+1)*dim], o)
		})
	}

	// 7. Final RMSNorm and the classifier, only for the rows that want logits.
	var rows []int
	for b := range n {
		if want[b] {
			rows = append(rows, b)
		}
	}
	final := make([]float32, len(rows)*dim)
	for i, b := range rows {
		kernels.RMSNorm(final[i*dim:(i+1)*dim], x[b*dim:(b+1)*dim], w.OutputNorm, c.NormEps)
	}
	all := logitsArray(logitsBuf, len(rows)*c.Vocab)
	w.Output.MulBatch(r.threads, all, final, len(rows))
	if c.FinalSoftCap > 0 { // Gemma 2
		kernels.SoftCap(all, float32(c.FinalSoftCap))
	}
	logits := make([][]float32, n)
	for i, b := range rows {
		logits[b] = all[i*c.Vocab : (i+1)*c.Vocab : (i+1)*c.Vocab]
	}
	return logits, nil
}

// logitsArray returns n floats for the classifier to write whole: the start of *buf (grown
// to n first when shorter), or, when buf is nil, a fresh array.
func logitsArray(buf *[]float32, n int) []float32 {
	if buf == nil {
		return make([]float32, n)
	}
	if cap(*buf) < n {
		*buf = pages.Floats(n)
	}
	return (*buf)[:n:n]
}

// activationBuffers recycles forward's per-row buffers from one call to the next: fresh
// ones of tens of megabytes for a prefill chunk were paged in and zeroed by the kernel on
// every first write. Every buffer is written whole before it is read, so what a recycled
// one held does not matter.
var activationBuffers = sync.Pool{New: func() any { return new([]float32) }}

// activations hands out consecutive pieces of one recycled buffer.
type activations struct {
	buf  *[]float32
	free []float32
}

// newActivations returns room for n floats from activationBuffers.
func newActivations(n int) *activations {
	p := activationBuffers.Get().(*[]float32)
	if cap(*p) < n {
		*p = pages.Floats(n)
	}
	return &activations{buf: p, free: (*p)[:n]}
}

// take returns the next m floats.
func (a *activations) take(m int) []float32 {
	s := a.free[:m:m]
	a.free = a.free[m:]
	return s
}

// release gives the buffer back; nothing taken from it may be used afterwards.
func (a *activations) release() { activationBuffers.Put(a.buf) }
