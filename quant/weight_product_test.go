package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/half"
)

// ggmlInput is x quantized as ggml's CPU backend quantizes a matrix product's input,
// written out here independently of internal/kernels: per block of 32 (Q8_0 and Q8_1,
// quantize_row_q8_0/q8_1 as their x86 builds run) or per super-block of 256 (Q8_K,
// quantize_row_q8_K_ref), the codes q and the scale, and for Q8_1 the sum term s.
type ggmlInput struct {
	q     []int32
	scale []float64 // per block (32 or 256 values)
	s     []float64 // Q8_1's fp16(d·Σq), per block of 32
	block int
}

func quantizeLikeGGML(x []float32, wt WeightType) ggmlInput {
	if wt.BlockSize() == qkK {
		in := ggmlInput{q: make([]int32, len(x)), block: qkK}
		for b := 0; b < len(x)/qkK; b++ {
			var amax, extreme float32
			for _, v := range x[b*qkK : (b+1)*qkK] {
				if absf(v) > amax {
					amax, extreme = absf(v), v
				}
			}
			if amax == 0 {
				in.scale = append(in.scale, 0)
				continue
			}
			iscale := -127 / extreme
			for j := b * qkK; j < (b+1)*qkK; j++ {
				in.q[j] = int32(int8(min(127, nearestInt(iscale*x[j]))))
			}
			in.scale = append(in.scale, float64(1/iscale))
		}
		return in
	}
	in := ggmlInput{q: make([]int32, len(x)), block: 32}
	for b := 0; b < len(x)/32; b++ {
		var amax float32
		for _, v := range x[b*32 : (b+1)*32] {
			amax = max(amax, absf(v))
		}
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		var sum int32
		for j := b * 32; j < (b+1)*32; j++ {
			in.q[j] = int32(math.RoundToEven(float64(float32(x[j] * id))))
			sum += in.q[j]
		}
		in.scale = append(in.scale, float64(half.F16ToF32(half.F32ToF16(d))))
		in.s = append(in.s, float64(half.F16ToF32(half.F32ToF16(d*float32(sum)))))
	}
	return in
}

// minTerm returns |dmin·m| of the sub-block holding value e of a row of a type with mins
// (the part of each value that the product takes from the input's block sums), else 0.
func minTerm(wt WeightType, row []byte, e int) float64 {
	switch wt {
	case WeightQ4_K, WeightQ5_K:
		blk := row[e/qkK*wt.BlockBytes():]
		_, m1 := q4KSubScales(blk, e%qkK/q4KSubLen)
		return math.Abs(float64(m1))
	case WeightQ2_K:
		blk := row[e/qkK*q2KBlockBytes:]
		return math.Abs(float64(loadF16(blk[q2KDOffset+2:]) * float32(blk[e%qkK/q2KSubLen]>>4)))
	case WeightQ4_1, WeightQ5_1:
		return math.Abs(float64(loadF16(row[e/32*wt.BlockBytes()+2:])))
	}
	return 0
}

// TestDotRowIsTheQuantizedProduct: for every type, DotRow is the product of the
// dequantized row with the input as ggml quantizes it, Σ v_e·q_e·scale (for Q8_1, the min
// term uses s in place of scale·Σq, as ggml does), up to float32 rounding: 1e-5 of the
// magnitude of the terms, whose mins (which the integer product keeps apart from the rest)
// count in full. Rows are quantized weights and random blocks; lengths of one to four
// blocks and model-sized rows.
func TestDotRowIsTheQuantizedProduct(t *testing.T) {
	t.Parallel()

	rng := rand.New(rand.NewPCG(1, 4))
	for _, wt := range WeightTypes() {
		bs := wt.BlockSize()
		for _, n := range []int{bs, 2 * bs, 3 * bs, 4 * bs, 4096, 11008} {
			for rep := range 4 {
				x := weightTestRow(rng, []string{"normal", "outliers", "uniform", "heavy"}[rep], n, []float64{1, 0.01, 30, 1}[rep])
				var row []byte
				if rep%2 == 0 {
					row, _ = quantizeWeights(t, wt, weightTestRow(rng, "heavy", n, 0.3))
				} else {
					row = randomWeightBlocks(wt, n/bs, func() byte { return byte(rng.Uint32()) })
				}
				v := make([]float32, n)
				wt.DequantizeRow(v, row)
				in := quantizeLikeGGML(x, wt)
				q8_1 := wt == WeightQ4_1 || wt == WeightQ5_1 // v = q·d + m, and m multiplies s
				var want, mag float64
				for e := range x {
					xv := float64(in.q[e]) * in.scale[e/in.block]
					mt := minTerm(wt, row, e)
					if q8_1 {
						want += (float64(v[e]) - float64(loadF16(row[e/32*wt.BlockBytes()+2:]))) * xv
					} else {
						want += float64(v[e]) * xv
					}
					mag += (math.Abs(float64(v[e])) + 2*mt) * math.Abs(xv)
				}
				for b := range in.s {
					if q8_1 {
						m := float64(loadF16(row[b*wt.BlockBytes()+2:]))
						want += m * in.s[b]
						mag += math.Abs(m * in.s[b])
					}
				}
				got := wt.DotRow(x, row)
				what := fmt.Sprintf("%v n=%d rep=%d", wt, n, rep)
				require.False(t, math.IsNaN(float64(got)) || math.IsInf(float64(got), 0), "%s: %v", what, got)
				require.InDelta(t, want, float64(got), 1e-5*mag+1e-30, what)
			}
		}
	}
}
