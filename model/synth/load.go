package synth

import (
	"bytes"
	"fmt"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/digest"
	"github.com/kvref/kvref/model"
)

// Bytes returns the model as the bytes of a GGUF file.
func (s Shape) Bytes() ([]byte, error) {
	w, err := s.Writer()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteFile writes the model to a GGUF file.
func (s Shape) WriteFile(path string) error {
	w, err := s.Writer()
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

// Model generates the model in memory and loads it through the ordinary GGUF loader. A
// Gemma shape that only a Hugging Face directory can hold (GGUFExpressible) is loaded from
// its GGUF twin with those settings applied to the configuration.
func (s Shape) Model() (*model.Model, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	twin := s
	twin.GlobalEvery, twin.QueryScalar = 0, 0
	data, err := twin.Bytes()
	if err != nil {
		return nil, err
	}
	source := fmt.Sprintf("synth:%s:seed%d", s.Name, s.Seed)
	f, err := gguf.Parse(source, data)
	if err != nil {
		return nil, err
	}
	m, err := model.FromGGUF(f, source)
	if err != nil {
		return nil, err
	}
	m.Digest = digest.Bytes(data) // the bytes `kvref synth` writes for the shape: the same model
	return s.applyHFOnly(m)
}
