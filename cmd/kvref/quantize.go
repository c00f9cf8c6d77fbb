package main

import (
	"encoding/binary"
	"fmt"
	"github.com/kvref/kvref/internal/half"
	"io"
	"math"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"quantize", "convert a GGUF model's weight matrices to Q8_0, Q4_0, Q4_K or Q6_K (or F16, BF16)", quantizeCmd})
}

func quantizeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quantize", stderr)
	wtype := fs.String("wtype", "q8_0", "weight type: q8_0, q4_0, q4_k, q6_k, f16, bf16, f32")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref quantize IN.gguf OUT.gguf --wtype T   (flags may come before or after the files)")
		fmt.Fprintln(stderr, "\nEvery matrix (2-D tensor) is converted; vectors (norms, biases) stay F32. A matrix whose rows")
		fmt.Fprintln(stderr, "are not a multiple of the type's block (32, or 256 for the K types) falls back to Q8_0, or")
		fmt.Fprintln(stderr, "stays as it is, as llama-quantize does.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	// Flags may also follow the files (kvref quantize IN.gguf OUT.gguf --wtype q4_k), as
	// llama-quantize users write them.
	var files []string
	for rest := fs.Args(); len(rest) > 0; rest = fs.Args() {
		files = append(files, rest[0])
		if err := parse(fs, rest[1:]); err != nil {
			return err
		}
	}
	if len(files) != 2 {
		fs.Usage()
		return errUsage
	}
	target, err := parseWeightTarget(*wtype)
	if err != nil {
		return err
	}
	in, err := gguf.Open(files[0])
	if err != nil {
		return err
	}
	defer in.Close()
	w, counts, err := quantizeGGUF(in, target)
	if err != nil {
		return err
	}
	if err := w.WriteFile(files[1]); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kvref quantize: wrote %s:", files[1])
	for _, t := range []gguf.TensorType{gguf.F32, gguf.F16, gguf.BF16, gguf.Q8_0, gguf.Q4_0, gguf.Q4_K, gguf.Q6_K} {
		if counts[t] > 0 {
			fmt.Fprintf(stderr, " %d %s", counts[t], t)
		}
	}
	fmt.Fprintln(stderr, " tensors")
	return nil
}

// parseWeightTarget maps a --wtype name to a GGUF tensor type.
func parseWeightTarget(s string) (gguf.TensorType, error) {
	switch s {
	case "f32", "F32":
		return gguf.F32, nil
	case "f16", "F16":
		return gguf.F16, nil
	case "bf16", "BF16":
		return gguf.BF16, nil
	}
	wt, err := quant.ParseWeightType(s)
	if err != nil {
		return 0, fmt.Errorf("--wtype %q: one of f32, f16, bf16, q8_0, q4_0, q4_k, q6_k", s)
	}
	return gguf.TensorType(wt.GGMLType()), nil
}

// quantizeGGUF copies a GGUF file's metadata and converts its matrices to target. It
// returns the writer and how many tensors ended up in each type.
func quantizeGGUF(in *gguf.File, target gguf.TensorType) (*gguf.Writer, map[gguf.TensorType]int, error) {
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
			src, err := model.NewMatrix(t.Name, rows, cols, t.Type, data)
			if err != nil {
				return nil, nil, err
			}
			typ = target
			if bs := target.BlockSize(); bs > 1 && cols%bs != 0 {
				typ = gguf.Q8_0 // llama-quantize's fallback for rows the K types cannot hold
				if cols%32 != 0 {
					typ = t.Type
				}
			}
			if typ != t.Type {
				data = convertMatrix(src, typ)
			}
		}
		if err := w.AddTensor(t.Name, typ, t.Dims, data); err != nil {
			return nil, nil, err
		}
		counts[typ]++
	}
	return w, counts, nil
}

// convertMatrix stores every row of m as typ.
func convertMatrix(m *model.Matrix, typ gguf.TensorType) []byte {
	scratch := make([]float32, m.Cols)
	var out []byte
	for r := 0; r < m.Rows; r++ {
		row := m.Row(r, scratch)
		switch typ {
		case gguf.F32:
			for _, v := range row {
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
			}
		case gguf.F16:
			for _, v := range row {
				out = binary.LittleEndian.AppendUint16(out, half.F32ToF16(v))
			}
		case gguf.BF16:
			for _, v := range row {
				out = binary.LittleEndian.AppendUint16(out, half.F32ToBF16(v))
			}
		default:
			wt, _ := quant.WeightTypeForGGML(uint32(typ))
			rb, _ := wt.RowBytes(m.Cols)
			buf := make([]byte, rb)
			wt.QuantizeRow(buf, row)
			out = append(out, buf...)
		}
	}
	return out
}
