package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// Model is a loaded transformer with its tokenizer.
type Model struct {
	Config    Config
	Weights   *Weights
	Tokenizer tokenizer.Tokenizer
	Source    string          // where it came from: a path, or "builtin:..."
	Format    string          // "gguf", "safetensors" or "llama2c"
	Digest    string          // hex SHA-256 of the bytes the weights came from ("": built in memory; see Identity)
	Tensors   []TensorSummary // every tensor of the file, in file order
	// ChatTemplates are the file's chat templates by name (GGUF tokenizer.chat_template and
	// tokenizer.chat_template.NAME; tokenizer_config.json's chat_template or
	// chat_template.jinja); empty when it has none.
	ChatTemplates chattemplate.Set
	ropes         []*kernels.RoPE // per layer (Config.LayerSpec)
	closer        io.Closer
}

// TensorSummary describes one stored tensor for display.
type TensorSummary struct {
	Name  string   `json:"name"`
	Type  string   `json:"type"`  // F32, F16, BF16, Q8_0, ...
	Shape []uint64 `json:"shape"` // outermost dimension first (rows, then columns)
	Bytes uint64   `json:"bytes"`
}

// Params is the number of parameters in the model's tensors.
func (m *Model) Params() uint64 {
	var n uint64
	for _, t := range m.Tensors {
		e := uint64(1)
		for _, d := range t.Shape {
			e *= d
		}
		n += e
	}
	return n
}

// New assembles a model from its parts and validates the configuration.
func New(cfg Config, w *Weights, tok tokenizer.Tokenizer, source string, closer io.Closer) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkNorms(cfg, w); err != nil {
		return nil, err
	}
	return &Model{
		Config:    cfg,
		Weights:   w,
		Tokenizer: tok,
		Source:    source,
		ropes:     newRoPEs(cfg, w.RopeFreqs),
		closer:    closer,
	}, nil
}

// checkNorms requires the per-layer norm weights the configuration computes with (the
// loaders find them; a model assembled in memory might not have).
func checkNorms(c Config, w *Weights) error {
	if len(w.Layers) != c.Layers {
		return fmt.Errorf("model: %d layers of weights for a configuration of %d", len(w.Layers), c.Layers)
	}
	for l, lw := range w.Layers {
		for _, v := range []struct {
			name string
			need bool
			got  []float32
			n    int
		}{
			{"attention norm", true, lw.AttnNorm, c.Dim}, {"feed-forward norm", true, lw.FFNNorm, c.Dim},
			{"post-attention norm", c.PostNorms, lw.PostAttnNorm, c.Dim}, {"post-feed-forward norm", c.PostNorms, lw.PostFFNNorm, c.Dim},
			{"q norm", c.QKNorm, lw.QNorm, c.HeadDim}, {"k norm", c.QKNorm, lw.KNorm, c.HeadDim},
		} {
			if v.need && len(v.got) != v.n {
				return fmt.Errorf("model: layer %d: the %s has %d weights, want %d", l, v.name, len(v.got), v.n)
			}
		}
	}
	return nil
}

// Close releases the model's mapped file, if any. The model must not be used afterwards.
func (m *Model) Close() error {
	if m.closer == nil {
		return nil
	}
	err := m.closer.Close()
	m.closer = nil
	return err
}

// Identity is a short hash of the model's weights and configuration. It salts the KV
// cache's block hashes so that blocks computed by one model are never shared with another.
// It names the weights by Digest, the SHA-256 of the bytes they were loaded from, so the
// same file opened under two paths (or embedded, or downloaded) is one model and two files
// that differ anywhere are two; a model built in memory without a digest is named by its
// Source instead.
func (m *Model) Identity() string {
	cfg, _ := json.Marshal(m.Config)
	name := "source " + m.Source
	if m.Digest != "" {
		name = "sha256 " + m.Digest
	}
	h := sha256.Sum256(append([]byte(name+"\x00"), cfg...))
	return hex.EncodeToString(h[:8])
}
