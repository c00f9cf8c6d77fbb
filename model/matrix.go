package model

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/parallel"
	"github.com/kvref/kvref/quant"
)

// Matrix is a row-major weight matrix of Rows × Cols elements stored as F32, F16, BF16 or
// one of ggml's block formats (quant.WeightType: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K to
// Q6_K; GGUF's dims are [Cols, Rows]). The data aliases the memory-mapped file; nothing is
// copied.
type Matrix struct {
	Name       string
	Rows, Cols int
	Type       gguf.TensorType
	f32        []float32        // Type == F32
	raw        []byte           // other types
	rowBytes   int              // stored bytes per row (raw types)
	wt         quant.WeightType // block format when quantized
	quantized  bool
}

// Quantized reports whether m is stored in one of ggml's block formats, whose products
// quantize the input and multiply in integer arithmetic (the rest multiply floats).
func (m *Matrix) Quantized() bool { return m.quantized }

// NewMatrixF32 wraps float32 data as a Rows × Cols matrix.
func NewMatrixF32(name string, rows, cols int, data []float32) (*Matrix, error) {
	if len(data) != rows*cols {
		return nil, fmt.Errorf("model: tensor %q: %d values for %d×%d", name, len(data), rows, cols)
	}
	return &Matrix{Name: name, Rows: rows, Cols: cols, Type: gguf.F32, f32: data, rowBytes: 4 * cols}, nil
}

// NewMatrix wraps raw little-endian tensor bytes of a supported type.
func NewMatrix(name string, rows, cols int, typ gguf.TensorType, data []byte) (*Matrix, error) {
	m := &Matrix{Name: name, Rows: rows, Cols: cols, Type: typ, raw: data}
	switch typ {
	case gguf.F32:
		m.rowBytes = 4 * cols
	case gguf.F16, gguf.BF16:
		m.rowBytes = 2 * cols
	default:
		wt, ok := quant.WeightTypeForGGML(uint32(typ))
		if !ok {
			return nil, fmt.Errorf("model: tensor %q has type %s, which kvref cannot compute with (supported: F32, F16, BF16, %s); convert or requantize the model to one of these", name, typ, quantTypeNames())
		}
		rb, err := wt.RowBytes(cols)
		if err != nil {
			return nil, fmt.Errorf("model: tensor %q: %w", name, err)
		}
		m.wt, m.quantized, m.rowBytes = wt, true, rb
	}
	if len(data) != rows*m.rowBytes {
		return nil, fmt.Errorf("model: tensor %q: %d bytes for %d×%d %s, want %d", name, len(data), rows, cols, typ, rows*m.rowBytes)
	}
	if typ == gguf.F32 {
		return NewMatrixF32(name, rows, cols, bytesAsFloat32(data))
	}
	return m, nil
}

// quantTypeNames lists the ggml block types kvref computes with, in ggml's spelling.
func quantTypeNames() string {
	var names []string
	for _, wt := range quant.WeightTypes() {
		names = append(names, gguf.TensorType(wt.GGMLType()).String())
	}
	return strings.Join(names, ", ")
}

// bytesAsFloat32 views little-endian float32 bytes as []float32 without copying (kvref
// targets little-endian machines). Unaligned data is copied instead.
func bytesAsFloat32(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		out := make([]float32, len(b)/4)
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(b)), b)
		return out
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// Row returns row r as float32: the stored row itself for F32, else decoded into scratch.
func (m *Matrix) Row(r int, scratch []float32) []float32 {
	if m.Type == gguf.F32 {
		return m.f32[r*m.Cols : (r+1)*m.Cols : (r+1)*m.Cols]
	}
	out := scratch[:m.Cols]
	m.decodeRow(out, r)
	return out
}

// RawRow returns the stored bytes of row r (nil for F32 matrices).
func (m *Matrix) RawRow(r int) []byte {
	if m.Type == gguf.F32 {
		return nil
	}
	return m.raw[r*m.rowBytes : (r+1)*m.rowBytes]
}

// Bytes is the size of the stored weights.
func (m *Matrix) Bytes() int64 {
	if m.Type == gguf.F32 {
		return int64(len(m.f32)) * 4
	}
	return int64(len(m.raw))
}

// MulBatch computes out[b·Rows + r] = W_r · x_b for the batch input rows x_b =
// x[b·Cols:(b+1)·Cols]. Threads split the output rows; each weight row is read once for the
// whole batch. For F32, F16 and BF16 matrices every output equals kernels.Dot(x_b, Row(r))
// bit for bit — at batch 1 the rows are dotted in their stored form, several at a time
// (kernels.DotF16Rows, kernels.DotBF16Rows: the same bits). A quantized matrix multiplies
// its input the way ggml does: each x_b is quantized once (quant.Input) and every output is
// quant.WeightType.DotRow's, computed in integers. Either way results do not depend on the
// batch.
func (m *Matrix) MulBatch(threads *parallel.Pool, out, x []float32, batch int) {
	mulShared(threads, x, batch, []*Matrix{m}, [][]float32{out})
}

// mulShared runs MulBatch for several matrices with the same input, and so the same Cols
// (the Q, K and V projections; the gate and up projections), outs[i] receiving ms[i]'s
// products: one pass over the threads for all their rows, and the input quantized once, in
// every form the quantized ones need. The results are MulBatch's, bit for bit: each output
// row is computed the same way whichever piece of rows it falls in.
func mulShared(threads *parallel.Pool, x []float32, batch int, ms []*Matrix, outs [][]float32) {
	total, cols := 0, ms[0].Cols
	var kinds, batched quant.InputKinds // the input forms of the products, of the batched ones
	for _, m := range ms {
		total += m.Rows
		if m.quantized {
			kinds |= m.wt.Input()
			if m.wt.Batched() {
				batched |= m.wt.Input()
			}
		}
	}
	var in []quant.Input
	var bin *quant.BatchInput
	if kinds != 0 {
		ins := quantInputs.Get().(*[]quant.Input)
		defer quantInputs.Put(ins)
		if len(*ins) < batch {
			*ins = make([]quant.Input, batch)
		}
		in = (*ins)[:batch]
		quantizeInputs(threads, in, x, cols, kinds)
		if batch > 1 && batched != 0 {
			bin = batchInputs.Get().(*quant.BatchInput)
			defer batchInputs.Put(bin)
			bin.Set(in, batched)
		}
	}
	// The rows go out in a few large pieces: each piece of a batch re-packs the batch's
	// vectors for the matrix kernels, and at batch 1 each piece is read as four long
	// sequential streams, which short pieces would cut up.
	chunk := 16
	if threads != nil {
		chunk = max(chunk, total/(2*threads.Threads())&^15)
	}
	threads.For(total, chunk, func(start, end int) {
		base := 0
		for i, m := range ms {
			if lo, hi := max(start, base), min(end, base+m.Rows); lo < hi {
				m.mulRows(outs[i], x, batch, lo-base, hi-base, in, bin)
			}
			base += m.Rows
		}
	})
}

// quantizeInputs quantizes the batch's input vectors in the given forms, on the threads
// for a batch.
func quantizeInputs(threads *parallel.Pool, in []quant.Input, x []float32, cols int, kinds quant.InputKinds) {
	if len(in) == 1 {
		in[0].Quantize(x[:cols], kinds)
		return
	}
	threads.For(len(in), 1, func(start, end int) {
		for b := start; b < end; b++ {
			in[b].Quantize(x[b*cols:(b+1)*cols], kinds)
		}
	})
}

// mulRows computes MulBatch's outputs for the rows start..end-1; in holds the quantized
// input vectors when m is quantized, and bin the same vectors as one batch when there are
// several.
func (m *Matrix) mulRows(out, x []float32, batch, start, end int, in []quant.Input, bin *quant.BatchInput) {
	switch {
	case m.Type == gguf.F32:
		kernels.MatMulRows(out, m.f32, x, m.Rows, m.Cols, batch, start, end)
	case m.quantized && bin != nil && m.wt.Batched():
		// The rows against all the vectors at once; out[start:] with stride Rows puts
		// vector b's row r at out[b·Rows + r].
		m.wt.DotRowsBatch(out[start:], m.Rows, bin, m.raw[start*m.rowBytes:end*m.rowBytes], end-start)
	case m.quantized:
		// A batch goes through panels of rows that stay in the core's L2 cache, each
		// dotted with every vector in turn; at batch 1 the piece is one panel, whose
		// quarters are read as four long streams.
		panelRows := end - start
		if batch > 1 {
			panelRows = max(4, (dequantPanelBytes/m.rowBytes)&^3)
		}
		for r0 := start; r0 < end; r0 += panelRows {
			r1 := min(r0+panelRows, end)
			w := m.raw[r0*m.rowBytes : r1*m.rowBytes]
			for b := range in {
				m.wt.DotRowsInput(out[b*m.Rows+r0:b*m.Rows+r1], &in[b], w)
			}
		}
	case m.Type == gguf.F16:
		// Small batches multiply the stored rows directly, larger ones widen blocks of
		// rows that stay in the core's caches while every input vector meets them (the
		// matrix kernels' register blocking); the same bits as Dot with the decoded row.
		kernels.MatMulF16(out, x, m.raw, m.Rows, m.Cols, batch, start, end)
	default:
		kernels.MatMulBF16(out, x, m.raw, m.Rows, m.Cols, batch, start, end)
	}
}

// decodeRow writes row r of a stored (non-F32) matrix to dst as float32: exactly the
// values its products multiply.
func (m *Matrix) decodeRow(dst []float32, r int) {
	raw := m.raw[r*m.rowBytes : (r+1)*m.rowBytes]
	switch {
	case m.quantized:
		m.wt.DequantizeRow(dst, raw)
	case m.Type == gguf.F16:
		kernels.DecodeF16(dst, raw)
	default:
		kernels.DecodeBF16(dst, raw)
	}
}

// quantInputs and batchInputs recycle the quantized input vectors of mulShared.
var (
	quantInputs = sync.Pool{New: func() any { return new([]quant.Input) }}
	batchInputs = sync.Pool{New: func() any { return new(quant.BatchInput) }}
)

// dequantPanelBytes bounds the float32 panel of decoded rows MulBatch multiplies at a
// time, so that it stays in the core's L2 cache.
const dequantPanelBytes = 256 << 10

// PermuteRows returns a copy of m whose row i is m's row perm[i] (same storage type).
func (m *Matrix) PermuteRows(perm []int) *Matrix {
	out := *m
	if m.Type == gguf.F32 {
		out.f32 = make([]float32, len(m.f32))
		for i, p := range perm {
			copy(out.f32[i*m.Cols:(i+1)*m.Cols], m.f32[p*m.Cols:(p+1)*m.Cols])
		}
		return &out
	}
	out.raw = make([]byte, len(m.raw))
	for i, p := range perm {
		copy(out.raw[i*m.rowBytes:(i+1)*m.rowBytes], m.raw[p*m.rowBytes:(p+1)*m.rowBytes])
	}
	return &out
}
