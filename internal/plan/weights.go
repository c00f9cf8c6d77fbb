package plan

import (
	"fmt"
	"math/big"
	"strings"
)

// WeightType is a storage format for model weights, described by its block: BlockLen
// weights take BlockBytes bytes (scales included), as in llama.cpp's GGML types.
type WeightType struct {
	Name       string
	BlockLen   int64 // weights per block
	BlockBytes int64 // bytes per block
}

// weightTypes are the formats --weights-dtype accepts. Bits per weight = 8·BlockBytes/BlockLen:
// 32, 16, 16, 8.5, 4.5, 4.5 and 6.5625.
var weightTypes = []WeightType{
	{"f32", 1, 4},
	{"f16", 1, 2},
	{"bf16", 1, 2},
	{"q8_0", 32, 34},   // 32 int8 values + an fp16 scale
	{"q4_0", 32, 18},   // 32 4-bit values + an fp16 scale
	{"q4_k", 256, 144}, // super-block of 8×32 4-bit values, 6-bit sub-scales and mins, fp16 d and dmin
	{"q6_k", 256, 210}, // super-block of 16×16 6-bit values, int8 sub-scales, fp16 d
}

// DefaultWeightType is what the planner assumes for weights when nothing says otherwise:
// 16 bits per weight, as published checkpoints are stored (f16 or bf16).
var DefaultWeightType = weightTypes[1]

// WeightTypes returns the formats --weights-dtype accepts.
func WeightTypes() []WeightType { return append([]WeightType(nil), weightTypes...) }

// ParseWeightType returns the weight format called name (case is ignored; "fp32", "fp16"
// are accepted for f32, f16). The error lists the valid names.
func ParseWeightType(name string) (WeightType, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "fp32":
		n = "f32"
	case "fp16":
		n = "f16"
	}
	var names []string
	for _, t := range weightTypes {
		if t.Name == n {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return WeightType{}, fmt.Errorf("plan: unknown weights type %q; valid types are %s", name, strings.Join(names, ", "))
}

// BitsPerWeight is 8·BlockBytes/BlockLen.
func (t WeightType) BitsPerWeight() float64 { return 8 * float64(t.BlockBytes) / float64(t.BlockLen) }

// Bytes returns the bytes params weights take in this format, rounded up to a whole byte.
// It is an estimate of a real file, whose norms stay f32 and whose quantized "mixes"
// (Q4_K_M, …) keep some tensors in wider types.
func (t WeightType) Bytes(params int64) int64 {
	n := new(big.Int).Mul(big.NewInt(params), big.NewInt(t.BlockBytes))
	n.Add(n, big.NewInt(t.BlockLen-1))
	return n.Quo(n, big.NewInt(t.BlockLen)).Int64()
}
