package llama2c

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// headerBytes encodes the seven header values as a llama2.c checkpoint stores them.
func headerBytes(vals ...int32) []byte {
	b := make([]byte, 0, HeaderSize)
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// checkpoint returns a header followed by zeros up to size bytes.
func checkpoint(size int64, vals ...int32) []byte {
	b := headerBytes(vals...)
	return append(b, make([]byte, size-int64(len(b)))...)
}

// TestReadHeaderAcceptsExactSize: a header whose file is exactly as long as its segments
// reads back with the values stored, and vocab_size's sign chooses the classifier.
func TestReadHeaderAcceptsExactSize(t *testing.T) {
	t.Parallel()
	shared := Header{Dim: 8, Hidden: 16, Layers: 2, Heads: 2, KVHeads: 1, Vocab: 10, SeqLen: 4, Shared: true}
	// 7 header ints, then: embed 10×8, rms 2×8, wq 2×8×8, wk 2×4×8, wv 2×4×8, wo 2×8×8,
	// rms 2×8, w1 2×16×8, w2 2×8×16, w3 2×16×8, final 8, freq 2×(4×2).
	floats := 80 + 16 + 128 + 64 + 64 + 128 + 16 + 256 + 256 + 256 + 8 + 16
	require.Equal(t, int64(HeaderSize+4*floats), shared.FileSize())
	h, err := ReadHeader("m.bin", checkpoint(shared.FileSize(), 8, 16, 2, 2, 1, 10, 4))
	require.NoError(t, err)
	require.Equal(t, shared, h)
	require.Equal(t, 4, h.HeadDim())
	require.Equal(t, "dim 8, hidden_dim 16, n_layers 2, n_heads 2, n_kv_heads 1, vocab_size 10 (shared classifier), seq_len 4", h.String())

	separate := shared
	separate.Shared = false
	require.Equal(t, shared.FileSize()+10*8*4, separate.FileSize(), "a separate classifier adds vocab × dim floats")
	segs := separate.Segments()
	require.Equal(t, Segment{"wcls", 1, 10, 8}, segs[len(segs)-1])
	h, err = ReadHeader("m.bin", checkpoint(separate.FileSize(), 8, 16, 2, 2, 1, -10, 4))
	require.NoError(t, err)
	require.Equal(t, separate, h)

	sum := int64(HeaderSize)
	for _, s := range segs {
		sum += int64(s.Bytes())
	}
	require.Equal(t, separate.FileSize(), sum, "FileSize is the header plus every segment")
}

// TestReadHeaderErrors: every refusal names the file and says what is wrong.
func TestReadHeaderErrors(t *testing.T) {
	t.Parallel()
	good := Header{Dim: 8, Hidden: 16, Layers: 2, Heads: 2, KVHeads: 1, Vocab: 10, SeqLen: 4, Shared: true}
	size := good.FileSize()
	ak42 := headerBytes(magicV1, 2)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"gguf", []byte("GGUF\x03\x00\x00\x00"), "llama2c: x.bin is a GGUF file, not a llama2.c checkpoint"},
		{"ak42", ak42, "llama2c: x.bin is a version-2 llama2.c checkpoint (magic \"ak42\")"},
		{"short", []byte{1, 2, 3, 4, 5}, "llama2c: x.bin: file is 5 bytes, too short for the 28-byte header"},
		{"zero", checkpoint(size, 8, 16, 0, 2, 1, 10, 4), "header field n_layers is 0, want ≥ 1"},
		{"negative", checkpoint(size, 8, -16, 2, 2, 1, 10, 4), "header field hidden_dim is -16, want ≥ 1"},
		{"heads", checkpoint(size, 9, 16, 2, 2, 1, 10, 4), "dim 9 is not a multiple of n_heads 2"},
		{"kv heads", checkpoint(size, 8, 16, 2, 2, 3, 10, 4), "n_heads 2 is not a multiple of n_kv_heads 3"},
		{"odd head", checkpoint(size, 6, 16, 2, 2, 1, 10, 4), "head size dim/n_heads = 6/2 = 3 is odd"},
		{"huge", checkpoint(size, 1<<30, 1<<30, 1<<30, 2, 1, 10, 4), "describes more than 2^63 bytes"},
		{"truncated", checkpoint(size-4, 8, 16, 2, 2, 1, 10, 4), "the file is truncated"},
		{"extra classifier", checkpoint(size+10*8*4, 8, 16, 2, 2, 1, 10, 4), "one vocab_size × dim classifier more"},
		{"missing classifier", checkpoint(size, 8, 16, 2, 2, 1, -10, 4), "lacks the vocab_size × dim classifier"},
	} {
		_, err := ReadHeader("x.bin", c.data)
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
		require.True(t, strings.HasPrefix(err.Error(), "llama2c: x.bin"), "%s: %v", c.name, err)
	}
}

// TestFileSizeOverflow: a header whose sizes do not fit in an int64, or with no heads, has
// no file size.
func TestFileSizeOverflow(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(-1), Header{Dim: 1 << 40, Hidden: 1 << 40, Layers: 1 << 20, Heads: 2, KVHeads: 1, Vocab: 1, SeqLen: 1}.FileSize())
	require.Equal(t, int64(-1), Header{Dim: 8, Hidden: 8, Layers: 1, KVHeads: 1, Vocab: 1, SeqLen: 1}.FileSize())
}
