package llama2c

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// HeaderSize is the size in bytes of the seven int32 values that start a checkpoint.
const HeaderSize = 7 * 4

// magicV1 is the first uint32 of the later llama2.c formats (versions 1 and 2,
// "ak42"), which have a 256-byte header and are not read by this package.
const magicV1 = 0x616b3432

// Header is the hyper-parameters in a checkpoint's header.
type Header struct {
	Dim     int  // transformer width
	Hidden  int  // feed-forward width
	Layers  int  // transformer blocks
	Heads   int  // query heads
	KVHeads int  // key/value heads
	Vocab   int  // vocabulary size (the absolute value of the stored vocab_size)
	SeqLen  int  // maximum sequence length (the trained context)
	Shared  bool // the classifier is the embedding table (stored vocab_size > 0)
}

// HeadDim is the width of one attention head, dim / n_heads.
func (h Header) HeadDim() int { return h.Dim / h.Heads }

// String describes the header in the words of run.c.
func (h Header) String() string {
	classifier := "shared classifier"
	if !h.Shared {
		classifier = "separate classifier"
	}
	return fmt.Sprintf("dim %d, hidden_dim %d, n_layers %d, n_heads %d, n_kv_heads %d, vocab_size %d (%s), seq_len %d",
		h.Dim, h.Hidden, h.Layers, h.Heads, h.KVHeads, h.Vocab, classifier, h.SeqLen)
}

// Segment is one run of float32 values in the file: Count tensors of Rows × Cols.
type Segment struct {
	Name       string
	Count      int
	Rows, Cols int
}

// Bytes is the segment's size in the file.
func (s Segment) Bytes() int { return s.Count * s.Rows * s.Cols * 4 }

// Segments lists the file's tensors after the header, in run.c's order.
func (h Header) Segments() []Segment {
	hd := h.HeadDim()
	q, kv := h.Heads*hd, h.KVHeads*hd
	s := []Segment{
		{"token_embedding_table", 1, h.Vocab, h.Dim},
		{"rms_att_weight", h.Layers, 1, h.Dim},
		{"wq", h.Layers, q, h.Dim},
		{"wk", h.Layers, kv, h.Dim},
		{"wv", h.Layers, kv, h.Dim},
		{"wo", h.Layers, h.Dim, q},
		{"rms_ffn_weight", h.Layers, 1, h.Dim},
		{"w1", h.Layers, h.Hidden, h.Dim},
		{"w2", h.Layers, h.Dim, h.Hidden},
		{"w3", h.Layers, h.Hidden, h.Dim},
		{"rms_final_weight", 1, 1, h.Dim},
		{"freq_cis_real", 1, h.SeqLen, hd / 2},
		{"freq_cis_imag", 1, h.SeqLen, hd / 2},
	}
	if !h.Shared {
		s = append(s, Segment{"wcls", 1, h.Vocab, h.Dim})
	}
	return s
}

// fileSize is the exact size of a checkpoint with this header, or ok false if
// it does not fit in an int64.
func (h Header) fileSize() (size int64, ok bool) {
	total := uint64(HeaderSize)
	for _, s := range h.Segments() {
		n, ok := mulChecked(uint64(s.Count), uint64(s.Rows), uint64(s.Cols), 4)
		if !ok {
			return 0, false
		}
		var carry uint64
		total, carry = bits.Add64(total, n, 0)
		if carry != 0 {
			return 0, false
		}
	}
	if total > math.MaxInt64 {
		return 0, false
	}
	return int64(total), true
}

// FileSize is the exact size in bytes of a checkpoint with this header, or -1
// if the sizes are so large that it does not fit in an int64.
func (h Header) FileSize() int64 {
	if h.Heads < 1 {
		return -1
	}
	n, ok := h.fileSize()
	if !ok {
		return -1
	}
	return n
}

// mulChecked multiplies its arguments, reporting overflow of uint64.
func mulChecked(xs ...uint64) (uint64, bool) {
	p := uint64(1)
	for _, x := range xs {
		hi, lo := bits.Mul64(p, x)
		if hi != 0 {
			return 0, false
		}
		p = lo
	}
	return p, true
}

// ReadHeader parses and validates the header of the checkpoint data (the whole
// file); name is used in error messages. It checks that every size is
// positive, that heads divide dim and KV heads divide heads, that the head
// width is even (RoPE rotates pairs), and that the file is exactly as long as
// the header says.
func ReadHeader(name string, data []byte) (Header, error) {
	if len(data) >= 4 {
		switch {
		case string(data[:4]) == "GGUF":
			return Header{}, fmt.Errorf("llama2c: %s is a GGUF file, not a llama2.c checkpoint; load it as GGUF", name)
		case binary.LittleEndian.Uint32(data) == magicV1 && len(data) >= 8:
			return Header{}, fmt.Errorf("llama2c: %s is a version-%d llama2.c checkpoint (magic \"ak42\"); kvref reads the legacy version-0 format: re-export with llama2.c's export.py --version 0",
				name, int32(binary.LittleEndian.Uint32(data[4:])))
		}
	}
	if len(data) < HeaderSize {
		return Header{}, fmt.Errorf("llama2c: %s: file is %d bytes, too short for the %d-byte header of a llama2.c checkpoint", name, len(data), HeaderSize)
	}
	h, v := DecodeHeader(data)
	for _, f := range []struct {
		name  string
		value int
	}{
		{"dim", v[0]}, {"hidden_dim", v[1]}, {"n_layers", v[2]}, {"n_heads", v[3]},
		{"n_kv_heads", v[4]}, {"vocab_size", v[5]}, {"seq_len", v[6]},
	} {
		if f.value == 0 || f.value < 0 && f.name != "vocab_size" {
			return Header{}, fmt.Errorf("llama2c: %s: header field %s is %d, want ≥ 1; is this a llama2.c checkpoint?", name, f.name, f.value)
		}
	}
	switch {
	case h.Dim%h.Heads != 0:
		return Header{}, fmt.Errorf("llama2c: %s: dim %d is not a multiple of n_heads %d", name, h.Dim, h.Heads)
	case h.Heads%h.KVHeads != 0:
		return Header{}, fmt.Errorf("llama2c: %s: n_heads %d is not a multiple of n_kv_heads %d", name, h.Heads, h.KVHeads)
	case h.HeadDim()%2 != 0:
		return Header{}, fmt.Errorf("llama2c: %s: head size dim/n_heads = %d/%d = %d is odd, want even (RoPE rotates pairs)", name, h.Dim, h.Heads, h.HeadDim())
	}
	want, ok := h.fileSize()
	if !ok {
		return Header{}, fmt.Errorf("llama2c: %s: header (%v) describes more than 2^63 bytes of weights; the file is corrupt or not a llama2.c checkpoint", name, h)
	}
	if got := int64(len(data)); got != want {
		return Header{}, fmt.Errorf("llama2c: %s: file is %d bytes, but its header (%v) needs exactly %d%s",
			name, got, h, want, sizeHint(h, got))
	}
	return h, nil
}

// DecodeHeader decodes the seven header values of data (at least HeaderSize
// bytes) without checking them (ReadHeader checks); raw holds them as stored.
func DecodeHeader(data []byte) (h Header, raw [7]int) {
	for i := range raw {
		raw[i] = int(int32(binary.LittleEndian.Uint32(data[4*i:])))
	}
	h = Header{Dim: raw[0], Hidden: raw[1], Layers: raw[2], Heads: raw[3], KVHeads: raw[4], Vocab: raw[5], SeqLen: raw[6], Shared: raw[5] > 0}
	if h.Vocab < 0 {
		h.Vocab = -h.Vocab
	}
	return h, raw
}

// sizeHint suggests why a file of got bytes does not match header h.
func sizeHint(h Header, got int64) string {
	other := h
	other.Shared = !h.Shared
	if n, ok := other.fileSize(); ok && n == got {
		if h.Shared {
			return "; the file has one vocab_size × dim classifier more, as if vocab_size were negative"
		}
		return "; the file lacks the vocab_size × dim classifier that a negative vocab_size announces"
	}
	want, _ := h.fileSize()
	if got < want {
		return "; the file is truncated"
	}
	return ""
}
