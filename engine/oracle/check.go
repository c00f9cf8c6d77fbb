package oracle

import (
	"fmt"
	"math"

	"github.com/kvref/kvref/attention"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// Report is what Check measured on one sequence. Each ratio is the largest error over its
// bound, over every layer, position, head and element: at most 1 when the check passes.
type Report struct {
	KType, VType      quant.CacheType
	Layers, Positions int
	Storage           float64 // stored element vs exact value, over the format's element bound
	Reading           float64 // engine attention vs float64 attention over the decoded rows, over the rounding tolerance
	Result            float64 // engine attention vs float64 attention over the exact rows, over format bound + rounding
	AttentionError    float64 // the largest |engine − exact| attention output element
	AttentionBound    float64 // the bound that element was held to
}

// String is one line: the types and the three ratios.
func (r Report) String() string {
	return fmt.Sprintf("K %v / V %v, %d positions × %d layers: storage %.3g, reading %.3g, result %.3g of their bounds (largest attention error %.3g against a bound of %.3g)",
		r.KType, r.VType, r.Positions, r.Layers, r.Storage, r.Reading, r.Result, r.AttentionError, r.AttentionBound)
}

// Error is the first violation Check found.
type Error struct {
	Check      string // "storage", "range", "reading" or "result"
	Type       quant.CacheType
	Tensor     string // "key", "value" or "attention"
	Layer, Pos int
	Head, Elem int // the KV head (storage) or query head (attention), and the element in it
	Got, Want  float64
	Bound      float64
}

// Error names the check, the place and the numbers.
func (e *Error) Error() string {
	switch e.Check {
	case "range":
		return fmt.Sprintf("oracle: layer %d position %d %s head %d element %d: the exact value %g is beyond what %v can hold (it stores %g)",
			e.Layer, e.Pos, e.Tensor, e.Head, e.Elem, e.Want, e.Type, e.Got)
	case "storage":
		return fmt.Sprintf("oracle: storage: layer %d position %d %s head %d element %d: the stored %v value decodes to %g, the exact value is %g: %g apart, beyond the format's bound %g",
			e.Layer, e.Pos, e.Tensor, e.Head, e.Elem, e.Type, e.Got, e.Want, math.Abs(e.Got-e.Want), e.Bound)
	case "reading":
		return fmt.Sprintf("oracle: reading: layer %d position %d query head %d element %d: the engine's attention output is %g, float64 attention over the stored rows gives %g: %g apart, beyond the rounding tolerance %g",
			e.Layer, e.Pos, e.Head, e.Elem, e.Got, e.Want, math.Abs(e.Got-e.Want), e.Bound)
	}
	return fmt.Sprintf("oracle: result: layer %d position %d query head %d element %d: the engine's attention output is %g, float64 attention over the exact keys and values gives %g: %g apart, beyond the %v bound %g",
		e.Layer, e.Pos, e.Head, e.Elem, e.Got, e.Want, math.Abs(e.Got-e.Want), e.Type, e.Bound)
}

// holeBefore reports whether any position in [first, last] lies in a released block of
// table.
func holeBefore(table []int, first, last, blockSize int) bool {
	for b := first / blockSize; b <= last/blockSize; b++ {
		if table[b] == kvcache.Hole {
			return true
		}
	}
	return false
}

// HasFormat reports whether the oracle has a reference decoder for cache type t.
func HasFormat(t quant.CacheType) bool { _, ok := formats[t]; return ok }

// Check verifies the cache contents of sequence s — every computed position, every layer —
// against the model's exact keys and values (recomputed by r's cache-free reference), with
// the oracle's own decoders (see the package documentation). It returns the measured ratios,
// and an *Error at the first violation. The pool must hold s's computed positions unchanged
// since they were written (call it between steps).
func Check(r *model.Runner, pool *kvcache.Pool, s *kvcache.Sequence) (Report, error) {
	cfg := pool.Config()
	rep := Report{KType: cfg.KType, VType: cfg.VType, Layers: cfg.Layers, Positions: s.Computed()}
	fk, ok := formats[cfg.KType]
	if !ok {
		return rep, fmt.Errorf("oracle: no reference decoder for cache type %v: add its entry to engine/oracle/formats.go", cfg.KType)
	}
	fv, ok := formats[cfg.VType]
	if !ok {
		return rep, fmt.Errorf("oracle: no reference decoder for cache type %v: add its entry to engine/oracle/formats.go", cfg.VType)
	}
	n := s.Computed()
	if n == 0 {
		return rep, nil
	}
	kvh, hd := cfg.KVHeads, cfg.HeadDim
	kvDim := kvh * hd
	for _, c := range []struct {
		t    quant.CacheType
		f    format
		size int
	}{{cfg.KType, fk, cfg.KRowBytes()}, {cfg.VType, fv, cfg.VRowBytes()}} {
		if want := c.f.rowBytes(kvh, hd); c.size != want {
			return rep, fmt.Errorf("oracle: the pool stores %v rows of %d bytes; %d heads of %d values take %d", c.t, c.size, kvh, hd, want)
		}
	}
	mc := r.Model().Config
	trace, err := r.ReferenceTrace(s.Tokens()[:n], cfg.KType, cfg.VType)
	if err != nil {
		return rep, err
	}
	shape := attention.Shape{Heads: mc.Heads, KVHeads: mc.KVHeads, HeadDim: mc.HeadDim}
	qDim := shape.Heads * hd
	group := shape.Heads / shape.KVHeads
	scale := 1 / math.Sqrt(float64(hd))
	if mc.QueryScalar > 0 { // Gemma's query_pre_attn_scalar
		scale = 1 / math.Sqrt(mc.QueryScalar)
	}
	softCap := mc.AttnSoftCap // Gemma 2's cap·tanh(s/cap) of every score; 0: none
	threads := parallel.NewPool(r.Threads())
	defer threads.Close()

	stored := [2][]float64{make([]float64, n*kvDim), make([]float64, n*kvDim)} // decoded K, V
	exact := [2][]float64{make([]float64, n*kvDim), make([]float64, n*kvDim)}
	bounds := [2][]float64{make([]float64, n*kvDim), make([]float64, n*kvDim)}
	out64, tol, fb := make([]float64, hd), make([]float64, hd), make([]float64, hd)
	exact64 := make([]float64, hd)
	var w, wx []float64
	for l := range cfg.Layers {
		// 1. Storage: every stored element against the exact value (positions a sliding
		// window has released are gone: their blocks are holes).
		for t := range n {
			blk, slot := s.LayerSlot(l, t)
			if blk == kvcache.Hole {
				continue
			}
			for i, tensor := range []struct {
				name string
				f    format
				t    quant.CacheType
				row  []byte
				x    []float32
			}{
				{"key", fk, cfg.KType, pool.KRow(l, blk, slot), trace.K[l][t*kvDim : (t+1)*kvDim]},
				{"value", fv, cfg.VType, pool.VRow(l, blk, slot), trace.V[l][t*kvDim : (t+1)*kvDim]},
			} {
				dec, b := stored[i][t*kvDim:(t+1)*kvDim], bounds[i][t*kvDim:(t+1)*kvDim]
				tensor.f.decode(dec, tensor.row, kvh, hd)
				tensor.f.bound(b, tensor.x, kvh, hd)
				for e, x := range tensor.x {
					exact[i][t*kvDim+e] = float64(x)
					diff := math.Abs(dec[e] - float64(x))
					fail := &Error{Check: "storage", Type: tensor.t, Tensor: tensor.name, Layer: l, Pos: t, Head: e / hd, Elem: e % hd, Got: dec[e], Want: float64(x), Bound: b[e]}
					switch {
					case math.IsInf(b[e], 1):
						fail.Check = "range"
						return rep, fail
					case !(diff <= b[e]): // NaN fails too
						return rep, fail
					case b[e] > 0:
						rep.Storage = math.Max(rep.Storage, diff/b[e])
					}
				}
			}
		}
		// 2 and 3. The engine's attention for every position's query whose window the pool
		// still holds, through the block table: all of them as one run (the batched prefill
		// path), and one by one in reverse order (the decode path), against float64
		// attention over the same positions.
		shape = mc.AttentionShape(l)
		t0 := 0
		for t0 < n && holeBefore(s.LayerTable(l), shape.First(t0), t0, cfg.BlockSize) {
			t0++
		}
		m := n - t0
		rows := make([]attention.Query, m)
		back := make([]attention.Query, m)
		qBack := make([]float32, m*qDim)
		for i := range m {
			t := t0 + i
			rows[i] = attention.Query{Seq: s.ID(), Pos: t, Table: s.LayerTable(l)}
			back[m-1-i] = rows[i]
			copy(qBack[(m-1-i)*qDim:(m-i)*qDim], trace.Q[l][t*qDim:(t+1)*qDim])
		}
		att := make([]float32, m*qDim)
		attBack := make([]float32, m*qDim)
		attention.PagedBatch(att, trace.Q[l][t0*qDim:], pool, l, rows, shape, threads, nil)
		attention.PagedBatch(attBack, qBack, pool, l, back, shape, threads, nil)
		for i := range m {
			t := t0 + i
			first := shape.First(t)
			span := t + 1 - first
			from := first * kvDim
			for h := range shape.Heads {
				q := trace.Q[l][t*qDim+h*hd : t*qDim+(h+1)*hd]
				off := h / group * hd
				w = attention64(out64, q, stored[0][from:], stored[1][from:], span, kvDim, off, scale, softCap, w)
				roundingTolerance(tol, q, stored[0][from:], stored[1][from:], w, span, kvDim, off, scale, softCap)
				wx = attention64(exact64, q, exact[0][from:], exact[1][from:], span, kvDim, off, scale, softCap, wx)
				formatBound(fb, q, bounds[0][from:], bounds[1][from:], exact[1][from:], wx, span, kvDim, off, scale)
				for _, engine := range [][]float32{att[i*qDim+h*hd:], attBack[(m-1-i)*qDim+h*hd:]} {
					for e := range hd {
						got := float64(engine[e])
						if d := math.Abs(got - out64[e]); !(d <= tol[e]) {
							return rep, &Error{Check: "reading", Type: cfg.KType, Tensor: "attention", Layer: l, Pos: t, Head: h, Elem: e, Got: got, Want: out64[e], Bound: tol[e]}
						} else {
							rep.Reading = math.Max(rep.Reading, d/tol[e])
						}
						bound := fb[e] + tol[e]
						d := math.Abs(got - exact64[e])
						if !(d <= bound) {
							return rep, &Error{Check: "result", Type: cfg.VType, Tensor: "attention", Layer: l, Pos: t, Head: h, Elem: e, Got: got, Want: exact64[e], Bound: bound}
						}
						if ratio := d / bound; ratio > rep.Result {
							rep.Result = ratio
						}
						if d > rep.AttentionError {
							rep.AttentionError, rep.AttentionBound = d, bound
						}
					}
				}
			}
		}
	}
	return rep, nil
}
