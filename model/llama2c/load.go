package llama2c

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/kvref/kvref/format/gguf"
	l2c "github.com/kvref/kvref/format/llama2c"
	"github.com/kvref/kvref/internal/digest"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/mmapfile"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/tokenizer"
)

// The constants run.c hardcodes, which a checkpoint cannot override.
const (
	// RopeBase is the rotary frequency base.
	RopeBase = 10000
	// NormEps is the RMSNorm epsilon.
	NormEps float32 = 1e-5
)

// Load opens a llama2.c checkpoint (memory-mapped) and its tokenizer.bin and
// returns the model. The weight matrices alias the mapping, which the model's
// Close releases.
func Load(path, tokenizerPath string) (*model.Model, error) {
	if tokenizerPath == "" {
		return nil, fmt.Errorf("llama2c: %s: a llama2.c checkpoint holds no vocabulary; give its tokenizer.bin as well", path)
	}
	mapping, err := mmapfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("llama2c: %w", err)
	}
	m, err := load(path, mapping.Data, tokenizerPath, mapping)
	if err != nil {
		mapping.Close()
		return nil, err
	}
	if m.Digest, err = digest.File(path); err != nil {
		m.Close()
		return nil, fmt.Errorf("llama2c: %s: %w", path, err)
	}
	return m, nil
}

// load reads the header, the tokenizer and the weights.
func load(path string, data []byte, tokenizerPath string, closer io.Closer) (*model.Model, error) {
	h, err := l2c.ReadHeader(path, data)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromLlama2cFile(tokenizerPath, h.Vocab)
	if err != nil {
		return nil, err
	}
	return build(path, data, h, tok, closer)
}

// Parse builds a model from the bytes of a llama2.c checkpoint and a tokenizer
// with the checkpoint's vocabulary size; name is the model's Source and is used
// in error messages. The weight matrices alias data, which must not change
// while the model is used.
func Parse(name string, data []byte, tok tokenizer.Tokenizer) (*model.Model, error) {
	h, err := l2c.ReadHeader(name, data)
	if err != nil {
		return nil, err
	}
	m, err := build(name, data, h, tok, nil)
	if err != nil {
		return nil, err
	}
	m.Digest = digest.Bytes(data)
	return m, nil
}

// Config returns the model configuration a checkpoint with header h describes:
// the header's sizes and run.c's fixed RoPE and RMSNorm constants.
func Config(h l2c.Header) model.Config {
	return model.Config{
		Arch:      "llama",
		Dim:       h.Dim,
		Layers:    h.Layers,
		Heads:     h.Heads,
		KVHeads:   h.KVHeads,
		HeadDim:   h.HeadDim(),
		Hidden:    h.Hidden,
		Vocab:     h.Vocab,
		Context:   h.SeqLen,
		RopeBase:  RopeBase,
		RopeDims:  h.HeadDim(),
		RopeStyle: kernels.RoPEAdjacent,
		NormEps:   NormEps,
		Tied:      h.Shared,
	}
}

// build wraps the tensors of data, whose header h has been validated.
func build(name string, data []byte, h l2c.Header, tok tokenizer.Tokenizer, closer io.Closer) (*model.Model, error) {
	if tok == nil {
		return nil, fmt.Errorf("llama2c: %s: no tokenizer given", name)
	}
	if n := tok.VocabSize(); n != h.Vocab {
		return nil, fmt.Errorf("llama2c: %s: the tokenizer has %d tokens but the header's vocab_size is %d", name, n, h.Vocab)
	}
	cfg := Config(h)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}

	// Each segment holds count tensors of rows × cols float32 values.
	off := l2c.HeaderSize
	var errs []error
	next := func(s l2c.Segment) [][]byte {
		size := s.Rows * s.Cols * 4
		out := make([][]byte, s.Count)
		for i := range out {
			out[i] = data[off : off+size : off+size]
			off += size
		}
		return out
	}
	matrices := func(s l2c.Segment) []*model.Matrix {
		out := make([]*model.Matrix, s.Count)
		for i, b := range next(s) {
			label := s.Name
			if s.Count > 1 || s.Name != "token_embedding_table" && s.Name != "wcls" {
				label = fmt.Sprintf("%s[%d]", s.Name, i)
			}
			m, err := model.NewMatrix(label, s.Rows, s.Cols, gguf.F32, b)
			if err != nil {
				errs = append(errs, err)
			}
			out[i] = m
		}
		return out
	}
	vectors := func(s l2c.Segment) [][]float32 {
		out := make([][]float32, s.Count)
		for i, b := range next(s) {
			out[i] = make([]float32, len(b)/4)
			for j := range out[i] {
				out[i][j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
			}
		}
		return out
	}

	segs := h.Segments()
	w := &model.Weights{Layers: make([]model.Layer, h.Layers)}
	w.TokenEmbed = matrices(segs[0])[0]
	attnNorm := vectors(segs[1])
	wq, wk, wv, wo := matrices(segs[2]), matrices(segs[3]), matrices(segs[4]), matrices(segs[5])
	ffnNorm := vectors(segs[6])
	w1, w2, w3 := matrices(segs[7]), matrices(segs[8]), matrices(segs[9])
	w.OutputNorm = vectors(segs[10])[0]
	next(segs[11]) // freq_cis_real: run.c computes RoPE itself
	next(segs[12]) // freq_cis_imag
	w.Output = w.TokenEmbed
	if !h.Shared {
		w.Output = matrices(segs[13])[0]
	}
	if off != len(data) {
		return nil, fmt.Errorf("llama2c: %s: read %d of %d bytes; the header check and the tensor layout disagree", name, off, len(data))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	for l := range w.Layers {
		w.Layers[l] = model.Layer{
			AttnNorm: attnNorm[l], Wq: wq[l], Wk: wk[l], Wv: wv[l], Wo: wo[l],
			FFNNorm: ffnNorm[l], Gate: w1[l], Down: w2[l], Up: w3[l],
		}
	}
	return model.New(cfg, w, tok, name, closer)
}
