package model

import (
	"fmt"
	"strings"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/quant"
)

// ParseQuantizeTarget maps a weight type name to the GGUF tensor type QuantizeGGUF
// converts to: f32, f16, bf16 (either case) or a quant.WeightType name (q8_0, q4_k, ...).
// The error lists the names.
func ParseQuantizeTarget(name string) (gguf.TensorType, error) {
	switch name {
	case "f32", "F32":
		return gguf.F32, nil
	case "f16", "F16":
		return gguf.F16, nil
	case "bf16", "BF16":
		return gguf.BF16, nil
	}
	wt, err := quant.ParseWeightType(name)
	if err != nil {
		return 0, fmt.Errorf("%q: one of f32, f16, bf16, %s", name, QuantizedTypeNames())
	}
	return gguf.TensorType(wt.GGMLType()), nil
}

// QuantizedTypeNames lists the quantized weight types (quant.WeightTypes), comma-separated.
func QuantizedTypeNames() string {
	var names []string
	for _, wt := range quant.WeightTypes() {
		names = append(names, wt.String())
	}
	return strings.Join(names, ", ")
}
