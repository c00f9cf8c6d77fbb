package gguf

import (
	"fmt"
	"math/bits"
)

// TensorType is a ggml tensor element type id, as stored in a GGUF tensor
// info. The ids and block layouts follow ggml's enum ggml_type.
type TensorType uint32

// The ggml tensor types. Ids 4, 5, 31-33 and 36-38 belonged to types that
// ggml has since removed; they are named so that errors can say so, but
// they have no block layout and files using them are refused.
const (
	F32        TensorType = 0
	F16        TensorType = 1
	Q4_0       TensorType = 2
	Q4_1       TensorType = 3
	Q4_2       TensorType = 4 // removed from ggml
	Q4_3       TensorType = 5 // removed from ggml
	Q5_0       TensorType = 6
	Q5_1       TensorType = 7
	Q8_0       TensorType = 8
	Q8_1       TensorType = 9
	Q2_K       TensorType = 10
	Q3_K       TensorType = 11
	Q4_K       TensorType = 12
	Q5_K       TensorType = 13
	Q6_K       TensorType = 14
	Q8_K       TensorType = 15
	IQ2_XXS    TensorType = 16
	IQ2_XS     TensorType = 17
	IQ3_XXS    TensorType = 18
	IQ1_S      TensorType = 19
	IQ4_NL     TensorType = 20
	IQ3_S      TensorType = 21
	IQ2_S      TensorType = 22
	IQ4_XS     TensorType = 23
	I8         TensorType = 24
	I16        TensorType = 25
	I32        TensorType = 26
	I64        TensorType = 27
	F64        TensorType = 28
	IQ1_M      TensorType = 29
	BF16       TensorType = 30
	Q4_0_4_4   TensorType = 31 // removed from GGUF files; ggml repacks Q4_0 at load time
	Q4_0_4_8   TensorType = 32 // removed from GGUF files
	Q4_0_8_8   TensorType = 33 // removed from GGUF files
	TQ1_0      TensorType = 34
	TQ2_0      TensorType = 35
	IQ4_NL_4_4 TensorType = 36 // removed from GGUF files
	IQ4_NL_4_8 TensorType = 37 // removed from GGUF files
	IQ4_NL_8_8 TensorType = 38 // removed from GGUF files
	MXFP4      TensorType = 39
	NVFP4      TensorType = 40
	Q1_0       TensorType = 41
)

// qkK is the number of elements in a K-quant super-block.
const qkK = 256

// tensorLayout describes how a tensor type packs elements into blocks.
type tensorLayout struct {
	name      string
	blockSize int // elements per block; 0 if the type was removed
	typeSize  int // bytes per block; 0 if the type was removed
}

// tensorLayouts is indexed by TensorType. Block sizes and byte sizes are
// those of ggml's type_traits (the block_* structs in ggml-common.h).
var tensorLayouts = [...]tensorLayout{
	F32:        {"F32", 1, 4},
	F16:        {"F16", 1, 2},
	Q4_0:       {"Q4_0", 32, 2 + 16},
	Q4_1:       {"Q4_1", 32, 2 + 2 + 16},
	Q4_2:       {"Q4_2", 0, 0},
	Q4_3:       {"Q4_3", 0, 0},
	Q5_0:       {"Q5_0", 32, 2 + 4 + 16},
	Q5_1:       {"Q5_1", 32, 2 + 2 + 4 + 16},
	Q8_0:       {"Q8_0", 32, 2 + 32},
	Q8_1:       {"Q8_1", 32, 4 + 4 + 32},
	Q2_K:       {"Q2_K", qkK, 2 + 2 + qkK/16 + qkK/4},
	Q3_K:       {"Q3_K", qkK, 2 + qkK/4 + qkK/8 + 12},
	Q4_K:       {"Q4_K", qkK, 2 + 2 + qkK/2 + 12},
	Q5_K:       {"Q5_K", qkK, 2 + 2 + qkK/2 + qkK/8 + 12},
	Q6_K:       {"Q6_K", qkK, 2 + qkK/2 + qkK/4 + qkK/16},
	Q8_K:       {"Q8_K", qkK, 4 + qkK + qkK/8},
	IQ2_XXS:    {"IQ2_XXS", qkK, 2 + qkK/4},
	IQ2_XS:     {"IQ2_XS", qkK, 2 + qkK/4 + qkK/32},
	IQ3_XXS:    {"IQ3_XXS", qkK, 2 + qkK/4 + qkK/8},
	IQ1_S:      {"IQ1_S", qkK, 2 + qkK/8 + qkK/16},
	IQ4_NL:     {"IQ4_NL", 32, 2 + 16},
	IQ3_S:      {"IQ3_S", qkK, 2 + qkK/4 + qkK/8 + qkK/32 + 4},
	IQ2_S:      {"IQ2_S", qkK, 2 + qkK/4 + qkK/16},
	IQ4_XS:     {"IQ4_XS", qkK, 2 + 2 + qkK/2 + qkK/64},
	I8:         {"I8", 1, 1},
	I16:        {"I16", 1, 2},
	I32:        {"I32", 1, 4},
	I64:        {"I64", 1, 8},
	F64:        {"F64", 1, 8},
	IQ1_M:      {"IQ1_M", qkK, qkK/8 + qkK/16 + qkK/32},
	BF16:       {"BF16", 1, 2},
	Q4_0_4_4:   {"Q4_0_4_4", 0, 0},
	Q4_0_4_8:   {"Q4_0_4_8", 0, 0},
	Q4_0_8_8:   {"Q4_0_8_8", 0, 0},
	TQ1_0:      {"TQ1_0", qkK, 2 + 4*13},
	TQ2_0:      {"TQ2_0", qkK, 2 + qkK/4},
	IQ4_NL_4_4: {"IQ4_NL_4_4", 0, 0},
	IQ4_NL_4_8: {"IQ4_NL_4_8", 0, 0},
	IQ4_NL_8_8: {"IQ4_NL_8_8", 0, 0},
	MXFP4:      {"MXFP4", 32, 1 + 16},
	NVFP4:      {"NVFP4", 64, 4 + 32},
	Q1_0:       {"Q1_0", 128, 2 + 16},
}

func (t TensorType) layout() (tensorLayout, bool) {
	if uint64(t) >= uint64(len(tensorLayouts)) {
		return tensorLayout{}, false
	}
	return tensorLayouts[t], true
}

// String returns ggml's name for the type ("F32", "Q4_K", ...), or
// "type(N)" for an id ggml never defined.
func (t TensorType) String() string {
	if l, ok := t.layout(); ok {
		return l.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether t is a type ggml currently defines, with a block
// layout; removed and undefined ids are not known.
func (t TensorType) Known() bool {
	return t.BlockSize() > 0
}

// BlockSize returns the number of elements in one block of t: 1 for plain
// types such as F32, F16 and BF16, 32 for Q8_0, 256 for the K-quants. It
// returns 0 for unknown or removed types.
func (t TensorType) BlockSize() int {
	l, _ := t.layout()
	return l.blockSize
}

// TypeSize returns the number of bytes in one block of t, or 0 for unknown
// or removed types.
func (t TensorType) TypeSize() int {
	l, _ := t.layout()
	return l.typeSize
}

// RowBytes returns the number of bytes that n elements of type t occupy. It
// fails if t is unknown, if n is not a multiple of the block size, or if the
// size does not fit in a uint64.
func (t TensorType) RowBytes(n uint64) (uint64, error) {
	l, ok := t.layout()
	if !ok || l.blockSize == 0 {
		if ok {
			return 0, fmt.Errorf("tensor type %s (id %d) has been removed from ggml", t, uint32(t))
		}
		return 0, fmt.Errorf("unknown tensor type %s", t)
	}
	bs := uint64(l.blockSize)
	if n%bs != 0 {
		return 0, fmt.Errorf("%d elements is not a multiple of the %s block size %d", n, t, bs)
	}
	hi, size := bits.Mul64(n/bs, uint64(l.typeSize))
	if hi != 0 {
		return 0, fmt.Errorf("%d elements of %s overflow a 64-bit byte count", n, t)
	}
	return size, nil
}
