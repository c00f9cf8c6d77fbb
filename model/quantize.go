package model

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/half"
	"github.com/kvref/kvref/quant"
)

// QuantizeGGUF copies a GGUF file's metadata (without general.file_type) and tensors,
// with every matrix (2-D tensor) converted to target: F32, F16, BF16 or one of the weight
// types of package quant, with ggml's reference quantizers, as llama-quantize --pure
// converts them. A matrix whose rows are not a multiple of the target's block (32, or 256
// for the k types) becomes Q8_0 instead, or stays as it is when its rows are not a
// multiple of 32 either, as llama-quantize does for such tensors. Vectors (norms, biases)
// are copied unchanged. A matrix with non-finite values, or whose blocks would decode to
// infinities (an fp16 scale overflows), is an error naming the tensor and the row. It
// returns the writer and how many tensors ended up in each type.
func QuantizeGGUF(in *gguf.File, target gguf.TensorType) (*gguf.Writer, map[gguf.TensorType]int, error) {
	if !convertible(target) {
		return nil, nil, fmt.Errorf("model: cannot convert %s to %s: the targets are F32, F16, BF16 and %s", in.Path, target, quantTypeNames())
	}
	w := gguf.NewWriter()
	for _, kv := range in.Metadata {
		if kv.Key == "general.file_type" {
			continue
		}
		w.Add(kv.Key, kv.Value)
	}
	counts := map[gguf.TensorType]int{}
	for i := range in.Tensors {
		t := &in.Tensors[i]
		data, err := in.TensorData(t)
		if err != nil {
			return nil, nil, err
		}
		typ := t.Type
		if len(t.Dims) == 2 && t.Type != target {
			cols, rows := int(t.Dims[0]), int(t.Dims[1])
			src, err := NewMatrix(t.Name, rows, cols, t.Type, data)
			if err != nil {
				return nil, nil, fmt.Errorf("%w (in %s)", err, in.Path)
			}
			typ = target
			if bs := target.BlockSize(); bs > 1 && cols%bs != 0 {
				typ = gguf.Q8_0 // llama-quantize's fallback for rows the k types cannot hold
				if cols%gguf.Q8_0.BlockSize() != 0 {
					typ = t.Type
				}
			}
			if typ != t.Type {
				if data, err = convertMatrix(src, typ); err != nil {
					return nil, nil, fmt.Errorf("%w (in %s)", err, in.Path)
				}
			}
		}
		if err := w.AddTensor(t.Name, typ, t.Dims, data); err != nil {
			return nil, nil, err
		}
		counts[typ]++
	}
	return w, counts, nil
}

// convertible reports whether QuantizeGGUF can write matrices of type t.
func convertible(t gguf.TensorType) bool {
	if t == gguf.F32 || t == gguf.F16 || t == gguf.BF16 {
		return true
	}
	_, ok := quant.WeightTypeForGGML(uint32(t))
	return ok
}

// convertMatrix stores every row of m as typ (F32, F16, BF16 or a weight type). Like
// llama-quantize, it refuses a quantized row that does not decode to finite values (a
// block whose fp16 scale overflows); it also refuses non-finite weights, which ggml's
// quantizers turn into arbitrary finite values.
func convertMatrix(m *Matrix, typ gguf.TensorType) ([]byte, error) {
	scratch := make([]float32, m.Cols)
	var out []byte
	wt, quantized := quant.WeightTypeForGGML(uint32(typ))
	var buf []byte
	var back []float32
	if quantized {
		rb, _ := wt.RowBytes(m.Cols)
		buf, back = make([]byte, rb), make([]float32, m.Cols)
	}
	for r := 0; r < m.Rows; r++ {
		row := m.Row(r, scratch)
		switch {
		case quantized:
			for i, v := range row {
				if math.IsInf(float64(v), 0) || v != v {
					return nil, fmt.Errorf("model: tensor %q row %d: value %d is %g, which does not fit %s (a block type holds finite weights only)", m.Name, r, i, v, typ)
				}
			}
			wt.QuantizeRow(buf, row)
			wt.DequantizeRow(back, buf)
			for i, v := range back {
				if math.IsInf(float64(v), 0) || v != v {
					return nil, fmt.Errorf("model: tensor %q row %d: value %d (%g) does not fit %s: it decodes to %g (a block's fp16 scale overflows above about %g); keep this tensor in F16 or F32",
						m.Name, r, i, row[i], typ, v, maxBlockValue(wt))
				}
			}
			out = append(out, buf...)
		case typ == gguf.F32:
			for _, v := range row {
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
			}
		case typ == gguf.F16:
			for _, v := range row {
				out = binary.LittleEndian.AppendUint16(out, half.F32ToF16(v))
			}
		default:
			for _, v := range row {
				out = binary.LittleEndian.AppendUint16(out, half.F32ToBF16(v))
			}
		}
	}
	return out, nil
}

// maxBlockValue is roughly the largest magnitude a block of wt holds before its fp16 scale
// overflows: 65504 times the largest code.
func maxBlockValue(wt quant.WeightType) float64 {
	switch wt {
	case quant.WeightQ8_0:
		return 65504 * 127
	case quant.WeightQ4_0:
		return 65504 * 8
	case quant.WeightQ5_0:
		return 65504 * 16
	}
	return 65504 // the k types' and min types' scales combine; this is their floor
}
