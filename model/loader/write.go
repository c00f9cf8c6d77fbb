package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/llama2c"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer"
)

// SynthFormats are the formats WriteSynth writes, each one Open reads back.
var SynthFormats = []string{"gguf", "hf", "llama2c"}

// WriteSynth writes the synthetic model of shape s at path in one of SynthFormats: "gguf"
// (one file), "hf" (a Hugging Face directory: config.json, safetensors, tokenizer.json) or
// "llama2c" (a checkpoint, with its tokenizer.bin beside it).
func WriteSynth(s synth.Shape, format, path string) error {
	switch format {
	case "gguf":
		return s.WriteFile(path)
	case "hf", "llama2c":
	default:
		return fmt.Errorf("loader: unknown synthetic model format %q (%v)", format, SynthFormats)
	}
	m, err := s.Model()
	if err != nil {
		return err
	}
	if format == "hf" {
		opts := hf.WriteOptions{}
		if s.RopeScaling.Type == "llama3" {
			opts.RopeScaling = &s.RopeScaling
		}
		return hf.Write(path, m, opts)
	}
	var buf bytes.Buffer
	if err := llama2c.Write(&buf, m); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	spm, ok := m.Tokenizer.(*tokenizer.SPM)
	if !ok {
		return fmt.Errorf("llama2c: the model's tokenizer cannot be written as tokenizer.bin")
	}
	var tb bytes.Buffer
	if err := tokenizer.WriteLlama2c(&tb, spm.Vocab()); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(filepath.Dir(path), "tokenizer.bin"), tb.Bytes(), 0o644)
}
