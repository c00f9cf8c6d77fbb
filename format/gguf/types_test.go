package gguf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTensorTypeTable(t *testing.T) {
	t.Parallel()

	tests := []struct {
		typ       TensorType
		id        uint32
		name      string
		blockSize int
		typeSize  int
	}{
		{F32, 0, "F32", 1, 4},
		{F16, 1, "F16", 1, 2},
		{Q4_0, 2, "Q4_0", 32, 18},
		{Q4_1, 3, "Q4_1", 32, 20},
		{Q4_2, 4, "Q4_2", 0, 0},
		{Q4_3, 5, "Q4_3", 0, 0},
		{Q5_0, 6, "Q5_0", 32, 22},
		{Q5_1, 7, "Q5_1", 32, 24},
		{Q8_0, 8, "Q8_0", 32, 34},
		{Q8_1, 9, "Q8_1", 32, 40},
		{Q2_K, 10, "Q2_K", 256, 84},
		{Q3_K, 11, "Q3_K", 256, 110},
		{Q4_K, 12, "Q4_K", 256, 144},
		{Q5_K, 13, "Q5_K", 256, 176},
		{Q6_K, 14, "Q6_K", 256, 210},
		{Q8_K, 15, "Q8_K", 256, 292},
		{IQ2_XXS, 16, "IQ2_XXS", 256, 66},
		{IQ2_XS, 17, "IQ2_XS", 256, 74},
		{IQ3_XXS, 18, "IQ3_XXS", 256, 98},
		{IQ1_S, 19, "IQ1_S", 256, 50},
		{IQ4_NL, 20, "IQ4_NL", 32, 18},
		{IQ3_S, 21, "IQ3_S", 256, 110},
		{IQ2_S, 22, "IQ2_S", 256, 82},
		{IQ4_XS, 23, "IQ4_XS", 256, 136},
		{I8, 24, "I8", 1, 1},
		{I16, 25, "I16", 1, 2},
		{I32, 26, "I32", 1, 4},
		{I64, 27, "I64", 1, 8},
		{F64, 28, "F64", 1, 8},
		{IQ1_M, 29, "IQ1_M", 256, 56},
		{BF16, 30, "BF16", 1, 2},
		{Q4_0_4_4, 31, "Q4_0_4_4", 0, 0},
		{Q4_0_4_8, 32, "Q4_0_4_8", 0, 0},
		{Q4_0_8_8, 33, "Q4_0_8_8", 0, 0},
		{TQ1_0, 34, "TQ1_0", 256, 54},
		{TQ2_0, 35, "TQ2_0", 256, 66},
		{IQ4_NL_4_4, 36, "IQ4_NL_4_4", 0, 0},
		{IQ4_NL_4_8, 37, "IQ4_NL_4_8", 0, 0},
		{IQ4_NL_8_8, 38, "IQ4_NL_8_8", 0, 0},
		{MXFP4, 39, "MXFP4", 32, 17},
		{NVFP4, 40, "NVFP4", 64, 36},
		{Q1_0, 41, "Q1_0", 128, 18},
		{TensorType(42), 42, "type(42)", 0, 0},
		{TensorType(99), 99, "type(99)", 0, 0},
		{TensorType(1 << 31), 1 << 31, "type(2147483648)", 0, 0},
	}
	require.Len(t, tensorLayouts, 42, "the table test covers every id in the layout table")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.id, uint32(tt.typ))
			require.Equal(t, tt.name, tt.typ.String())
			require.Equal(t, tt.blockSize, tt.typ.BlockSize())
			require.Equal(t, tt.typeSize, tt.typ.TypeSize())
			require.Equal(t, tt.blockSize > 0, tt.typ.Known())
		})
	}
}

func TestRowBytes(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		typ     TensorType
		n       uint64
		want    uint64
		wantErr string
	}{
		{"f32", F32, 64, 256, ""},
		{"f16 odd count", F16, 3, 6, ""},
		{"bf16", BF16, 10, 20, ""},
		{"q8_0 two blocks", Q8_0, 64, 68, ""},
		{"q4_k one block", Q4_K, 256, 144, ""},
		{"q6_k 4096", Q6_K, 4096, 16 * 210, ""},
		{"zero elements", Q4_0, 0, 0, ""},
		{"q8_0 partial block", Q8_0, 33, 0, "not a multiple of the Q8_0 block size 32"},
		{"q4_k partial block", Q4_K, 128, 0, "not a multiple of the Q4_K block size 256"},
		{"unknown type", TensorType(77), 32, 0, "unknown tensor type type(77)"},
		{"removed type", Q4_0_4_4, 32, 0, "has been removed"},
		{"overflow", F64, 1 << 62, 0, "overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.typ.RowBytes(tt.n)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestValueTypeString(t *testing.T) {
	t.Parallel()

	names := []string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
		"bool", "string", "array", "uint64", "int64", "float64"}
	for id, name := range names {
		require.Equal(t, name, ValueType(id).String())
	}
	require.Equal(t, "type(13)", ValueType(13).String())
}
