package gguf

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/internal/fileerr"
)

func TestParseSmallFile(t *testing.T) {
	t.Parallel()

	f, err := Parse("small.gguf", smallFile(t))
	require.NoError(t, err)
	require.Equal(t, "small.gguf", f.Path)
	require.Equal(t, uint32(3), f.Version)
	require.Equal(t, "llama", f.Architecture())
	require.Len(t, f.Tensors, 2)

	q, ok := f.Tensor("q")
	require.True(t, ok)
	require.Equal(t, TensorInfo{Name: "q", Dims: []uint64{32}, Type: Q8_0, Offset: 0, Size: 34}, *q)
	w, ok := f.Tensor("blk.0.w")
	require.True(t, ok)
	require.Equal(t, TensorInfo{Name: "blk.0.w", Dims: []uint64{8, 2}, Type: F32, Offset: 64, Size: 64}, *w)
	require.Equal(t, uint64(16), w.Elements())
	_, ok = f.Tensor("missing")
	require.False(t, ok)

	data, err := f.TensorData(w)
	require.NoError(t, err)
	require.Len(t, data, 64)
	require.Equal(t, byte(255), data[0])
	require.Zero(t, f.DataOffset%32)

	bogus := &TensorInfo{Name: "bogus", Offset: 1 << 62, Size: 10}
	_, err = f.TensorData(bogus)
	require.ErrorContains(t, err, `tensor "bogus" needs 10 bytes`)

	require.NoError(t, f.Close(), "closing a parsed (unmapped) file")
	_, err = f.TensorData(w)
	require.ErrorContains(t, err, "file is closed")
}

// TestParseEveryPrefix cuts a valid file at every length: each prefix must
// fail with an error, never panic or succeed.
func TestParseEveryPrefix(t *testing.T) {
	t.Parallel()

	full := smallFile(t)
	_, err := Parse("full.gguf", full)
	require.NoError(t, err)
	for n := 0; n < len(full); n++ {
		f, err := Parse("cut.gguf", full[:n:n])
		require.Errorf(t, err, "prefix of %d bytes parsed", n)
		require.Nil(t, f)
		require.Truef(t, strings.HasPrefix(err.Error(), "gguf: cut.gguf: "), "error %q lacks the file name", err)
		require.Truef(t, errors.Is(err, ErrTruncated), "prefix %d: error %q does not wrap ErrTruncated", n, err)
	}
}

func TestParseMalformed(t *testing.T) {
	t.Parallel()

	f32x8 := make([]byte, 32)
	tests := []struct {
		name      string
		data      raw
		wantErr   string
		truncated bool // the error wraps ErrTruncated
	}{
		{"empty file", raw{}, "file is 0 bytes, too short for a GGUF header", true},
		{"three bytes", raw("GGU"), "file is 3 bytes, too short", true},
		{"wrong magic", raw("GGML").u32(3).u64(0).u64(0), `bad magic "GGML", want "GGUF": not a GGUF file`, false},
		{"legacy ggjt", raw("tjgg").u32(3), "legacy GGML/GGMF/GGJT model", false},
		{"no version", raw("GGUF").bytes(3), "version at offset 4 needs 4 bytes, but only 1 are left", true},
		{"version 1", header(1, 0, 0), "GGUF version 1 is not supported (only versions 2 and 3)", false},
		{"version 99", header(99, 0, 0), "unsupported GGUF version 99, want 2 or 3", false},
		{"version 0", header(0, 0, 0), "unsupported GGUF version 0", false},
		{"big-endian v3", header(0x03000000, 0, 0), "big-endian GGUF files are not supported", false},
		{"absurd kv count", header(3, 0, math.MaxUint64), "metadata count 18446744073709551615 is impossible", true},
		{"kv count one too many", header(3, 0, 2).str("k").u32(uint32(Uint8)).bytes(1), "metadata count 2 is impossible", true},
		{"absurd tensor count", header(3, math.MaxUint64, 0), "tensor count 18446744073709551615 is impossible", true},
		{"absurd key length", header(3, 0, 1).u64(math.MaxUint64).zeros(16),
			"key of metadata pair 0 at offset 24 has length 18446744073709551615, but only 16 bytes are left", true},
		{"absurd string value length", header(3, 0, 1).str("general.name").u32(uint32(String)).u64(1 << 40).zeros(8),
			`metadata key "general.name" at offset 48 has length 1099511627776, but only 8 bytes are left`, true},
		{"absurd array length", header(3, 0, 1).str("tokens").u32(uint32(Array)).u32(uint32(String)).u64(1 << 60).zeros(64),
			`metadata key "tokens" is an array of 1152921504606846976 string values, which needs at least 8 bytes each, but only 64 bytes are left`, true},
		{"absurd nested array length", header(3, 0, 1).str("a").u32(uint32(Array)).u32(uint32(Array)).u64(1).u32(uint32(Uint64)).u64(math.MaxUint64 / 2),
			`metadata key "a" is an array of 9223372036854775807 uint64 values`, true},
		{"unknown value type", header(3, 0, 1).str("k").u32(13).zeros(8),
			`metadata key "k" has unknown value type 13 at offset 33 (GGUF defines 0 to 12)`, false},
		{"unknown array element type", header(3, 0, 1).str("k").u32(uint32(Array)).u32(99).u64(0),
			`metadata key "k" is an array of unknown value type 99`, false},
		{"bool value 2", header(3, 0, 1).str("b").u32(uint32(Bool)).bytes(2),
			`metadata key "b" is a bool with byte value 2`, false},
		{"bool array value 7", header(3, 0, 1).str("b").u32(uint32(Array)).u32(uint32(Bool)).u64(2).bytes(0, 7),
			`metadata key "b" array element 1 is a bool with byte value 7`, false},
		{"arrays nested too deep", func() raw {
			r := header(3, 0, 1).str("deep").u32(uint32(Array))
			for range maxArrayDepth + 1 {
				r = r.u32(uint32(Array)).u64(1)
			}
			return r.zeros(64)
		}(), `metadata key "deep" nests arrays more than 8 deep`, false},
		{"too many nested arrays", header(3, 0, 1).str("a").u32(uint32(Array)).u32(uint32(Array)).u64(maxNestedArrays + 1).
			zeros(12 * (maxNestedArrays + 1)),
			`metadata key "a": the file holds more than 1048576 nested arrays`, false},
		{"duplicate key", header(3, 0, 2).str("k").u32(uint32(Uint8)).bytes(1).str("k").u32(uint32(Uint8)).bytes(2),
			`metadata key "k" appears twice (pairs 0 and 1)`, false},
		{"alignment not a power of two", header(3, 0, 1).str("general.alignment").u32(uint32(Uint32)).u32(48),
			`metadata key "general.alignment" is 48, want a power of two no larger than 1048576`, false},
		{"alignment zero", header(3, 0, 1).str("general.alignment").u32(uint32(Uint32)).u32(0),
			`"general.alignment" is 0, want a power of two`, false},
		{"alignment absurd", header(3, 0, 1).str("general.alignment").u32(uint32(Uint64)).u64(1 << 40),
			`"general.alignment" is 1099511627776, want a power of two`, false},
		{"alignment is a string", header(3, 0, 1).str("general.alignment").u32(uint32(String)).str("32"),
			`metadata key "general.alignment" is string "32", want an unsigned integer`, false},
		{"n_dims 0", header(3, 1, 0).tensorInfo("w", nil, F32, 0).pad(32),
			`tensor "w" has 0 dimensions, want 1 to 4`, false},
		{"n_dims 5", header(3, 1, 0).tensorInfo("w", []uint64{1, 1, 1, 1, 1}, F32, 0).pad(32),
			`tensor "w" has 5 dimensions, want 1 to 4`, false},
		{"dimension 0", header(3, 1, 0).tensorInfo("w", []uint64{4, 0}, F32, 0).pad(32),
			`tensor "w" dimension 1 is 0, want 1 to 9223372036854775807`, false},
		{"dimension above int64", header(3, 1, 0).tensorInfo("w", []uint64{1 << 63}, F32, 0).pad(32),
			`tensor "w" dimension 0 is 9223372036854775808`, false},
		{"dim product overflow", header(3, 1, 0).tensorInfo("w", []uint64{1 << 32, 1 << 32}, F32, 0).pad(32),
			`tensor "w" has dimensions [4294967296 4294967296], whose product overflows`, false},
		{"byte size overflow", header(3, 1, 0).tensorInfo("w", []uint64{1 << 31, 1 << 31}, F64, 0).pad(32),
			`tensor "w": 4611686018427387904 elements of F64 overflow`, false},
		{"unknown tensor type", header(3, 1, 0).tensorInfo("w", []uint64{8}, TensorType(99), 0).pad(32).zeros(32),
			`tensor "w" has unknown tensor type id 99 (known ids are 0 to 41)`, false},
		{"removed tensor type", header(3, 1, 0).tensorInfo("w", []uint64{8}, Q4_0_4_4, 0).pad(32).zeros(32),
			`tensor "w" has type Q4_0_4_4 (id 31), which ggml no longer supports`, false},
		{"row not a multiple of block size", header(3, 1, 0).tensorInfo("w", []uint64{16, 2}, Q8_0, 0).pad(32).zeros(64),
			`tensor "w" has rows of 16 elements, not a multiple of the Q8_0 block size 32`, false},
		{"tensor data past end of file", header(3, 1, 0).tensorInfo("blk.3.attn_q.weight", []uint64{16, 4}, F32, 0).pad(32).zeros(100),
			`tensor "blk.3.attn_q.weight" needs 256 bytes at offset 0 in the data section (which starts at 96), file has 196 bytes`, true},
		{"second tensor past end of file", header(3, 2, 0).tensorInfo("a", []uint64{8}, F32, 0).tensorInfo("b", []uint64{8}, F32, 32).pad(32).bytes(f32x8...),
			`tensor "b" needs 32 bytes at offset 32`, true},
		{"offset far past end of file", header(3, 1, 0).tensorInfo("w", []uint64{8}, F32, math.MaxUint64-63).pad(32).zeros(32),
			`tensor "w" needs 32 bytes at offset 18446744073709551552`, true},
		{"offset plus size overflows", header(3, 1, 0).tensorInfo("w", []uint64{16}, F32, math.MaxUint64-31).pad(32).zeros(64),
			`tensor "w" has data offset 18446744073709551584 and size 64, whose sum overflows`, false},
		{"misaligned offset", header(3, 1, 0).tensorInfo("w", []uint64{8}, F32, 4).pad(32).zeros(64),
			`tensor "w" has data offset 4, which is not a multiple of the alignment 32`, false},
		{"duplicate tensor name", header(3, 2, 0).tensorInfo("w", []uint64{8}, F32, 0).tensorInfo("w", []uint64{8}, F32, 32).pad(32).zeros(64),
			`tensor "w" appears twice (tensors 0 and 1)`, false},
		{"tensor name absurd length", header(3, 1, 0).u64(1 << 50).zeros(40),
			"name of tensor 0 at offset 24 has length 1125899906842624", true},
		{"huge tensor name is shortened in errors", header(3, 1, 0).tensorInfo(strings.Repeat("n", 5000), []uint64{8}, F32, 4).pad(32).zeros(64),
			`"` + strings.Repeat("n", fileerr.MaxQuoted) + `"... (5000 bytes) has data offset 4`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("bad.gguf", tt.data)
			require.Error(t, err)
			require.Nil(t, f)
			require.ErrorContains(t, err, tt.wantErr)
			require.Truef(t, strings.HasPrefix(err.Error(), "gguf: bad.gguf: "), "error %q lacks the file name", err)
			require.Equal(t, tt.truncated, errors.Is(err, ErrTruncated), "wraps ErrTruncated")
			require.Less(t, len(err.Error()), 600, "error messages stay short")
		})
	}
}

func TestParseAcceptsEdgeCases(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		data  raw
		check func(t *testing.T, f *File)
	}{
		{"no tensors and no padding", header(3, 0, 1).str("general.architecture").u32(uint32(String)).str("llama"),
			func(t *testing.T, f *File) { require.Equal(t, "llama", f.Architecture()) }},
		{"version 2", header(2, 1, 0).tensorInfo("w", []uint64{1}, F32, 0).pad(32).zeros(4),
			func(t *testing.T, f *File) { require.Equal(t, uint32(2), f.Version) }},
		{"alignment of 1 as uint8", header(3, 1, 1).str("general.alignment").u32(uint32(Uint8)).bytes(1).tensorInfo("w", []uint64{1}, I8, 0).bytes(9),
			func(t *testing.T, f *File) {
				require.Equal(t, uint64(1), f.Alignment)
				d, err := f.TensorData(&f.Tensors[0])
				require.NoError(t, err)
				require.Equal(t, []byte{9}, d)
			}},
		{"quantized K type listed", header(3, 1, 0).tensorInfo("w", []uint64{256, 2}, Q4_K, 0).pad(32).zeros(288),
			func(t *testing.T, f *File) { require.Equal(t, uint64(288), f.Tensors[0].Size) }},
		{"four dims", header(3, 1, 0).tensorInfo("w", []uint64{2, 3, 4, 5}, F16, 0).pad(32).zeros(240),
			func(t *testing.T, f *File) { require.Equal(t, uint64(120), f.Tensors[0].Elements()) }},
		{"empty string key and tensor name", header(3, 1, 1).str("").u32(uint32(Int8)).bytes(0xff).tensorInfo("", []uint64{1}, F32, 0).pad(32).zeros(4),
			func(t *testing.T, f *File) {
				v, ok := f.Lookup("")
				require.True(t, ok)
				i, _ := v.Int()
				require.Equal(t, int64(-1), i)
				_, ok = f.Tensor("")
				require.True(t, ok)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("edge.gguf", tt.data)
			require.NoError(t, err)
			tt.check(t, f)
		})
	}
}
