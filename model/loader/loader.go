// Package loader opens a model from whatever a user names: the embedded default, a
// synthetic shape, a GGUF file, a Hugging Face directory, a llama2.c checkpoint, or an
// hf:// / https:// reference that is downloaded into kvref's cache first. Every command that
// takes -m opens its model here, so every command accepts the same references.
package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvref/kvref/internal/hub"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/llama2c"
	"github.com/kvref/kvref/model/synth"
)

// SynthPrefix starts a reference to a synthetic model of a named shape ("synth:default",
// "synth:tinyllama-1.1b"): random weights from a fixed seed, so the text is noise, but the
// shapes, the arithmetic and the memory traffic are real.
const SynthPrefix = "synth:"

// Options are the optional inputs of Open.
type Options struct {
	// Tokenizer is the tokenizer.bin of a llama2.c checkpoint (default: tokenizer.bin
	// beside it). Other formats carry their tokenizer.
	Tokenizer string
	// Progress receives download progress of hf:// and https:// references (nil: none).
	Progress io.Writer
}

// Kind says what a reference names.
type Kind int

// The kinds of reference Open accepts.
const (
	Builtin   Kind = iota // "" or "builtin:stories260K": the embedded stories260K
	Synthetic             // "synth:NAME"
	File                  // a path (or a downloaded reference): GGUF, HF directory or llama2.c
)

// KindOf says what ref names, without opening it.
func KindOf(ref string) Kind {
	switch {
	case ref == "" || ref == builtin.Source:
		return Builtin
	case strings.HasPrefix(ref, SynthPrefix):
		return Synthetic
	}
	return File
}

// Open opens the model that ref names:
//   - "" or "builtin:stories260K": the embedded default model (package builtin);
//   - "synth:NAME": a synthetic model of a shape of synth.Shapes;
//   - hf://OWNER/REPO/PATH and https:// references: downloaded into the cache first
//     (internal/hub), then opened as a path;
//   - a directory with config.json: a Hugging Face model (safetensors);
//   - a file starting with "GGUF" (or named *.gguf): a GGUF model;
//   - any other file: a llama2.c checkpoint with opt.Tokenizer (default tokenizer.bin
//     beside it).
func Open(ref string, opt Options) (*model.Model, error) {
	switch KindOf(ref) {
	case Builtin:
		return builtin.Model()
	case Synthetic:
		shape, err := synth.ShapeByName(strings.TrimPrefix(ref, SynthPrefix))
		if err != nil {
			return nil, err
		}
		m, err := shape.Model()
		if err != nil {
			return nil, err
		}
		m.Source = ref // reopenable: Open(m.Source) gives the same model
		return m, nil
	}
	return openFile(ref, opt, openHF, model.LoadGGUF, openLlama2c(opt))
}

// openFile locates the file or directory ref names and opens it with the opener of its
// kind: dir for a directory, gguf for a GGUF file, other for any other file (given the
// file's first bytes).
func openFile[T any](ref string, opt Options, dir, gguf func(path string) (T, error), other func(path string, magic []byte) (T, error)) (T, error) {
	path, kind, magic, err := locate(ref, opt)
	if err != nil {
		var none T
		return none, err
	}
	switch kind {
	case dirFile:
		return dir(path)
	case ggufFile:
		return gguf(path)
	}
	return other(path, magic)
}

// openHF opens a Hugging Face model directory.
func openHF(path string) (*model.Model, error) {
	if !hf.IsDir(path) {
		return nil, fmt.Errorf("%s is a directory without config.json: not a Hugging Face model directory", path)
	}
	return hf.Load(path)
}

// openLlama2c opens a llama2.c checkpoint with opt.Tokenizer, or tokenizer.bin beside it.
func openLlama2c(opt Options) func(path string, magic []byte) (*model.Model, error) {
	return func(path string, magic []byte) (*model.Model, error) {
		tok := opt.Tokenizer
		if tok == "" {
			tok = filepath.Join(filepath.Dir(path), "tokenizer.bin")
			if _, err := os.Stat(tok); err != nil {
				return nil, &NoTokenizerError{Path: path, Magic: string(magic)}
			}
		}
		return llama2c.Load(path, tok)
	}
}

// InMemoryGGUF returns the GGUF bytes of a model that has no file of its own (the embedded
// default or a synthetic shape), for checksums and for writing it out. Other references
// get an error: their bytes are in their file.
func InMemoryGGUF(ref string) ([]byte, error) {
	switch KindOf(ref) {
	case Builtin:
		return builtin.GGUF(), nil
	case Synthetic:
		shape, err := synth.ShapeByName(strings.TrimPrefix(ref, SynthPrefix))
		if err != nil {
			return nil, err
		}
		return shape.Bytes()
	}
	return nil, fmt.Errorf("loader: %s is a file reference, not an in-memory model", ref)
}

// fileKind says what a path names: a directory, a GGUF file, or another file.
type fileKind int

const (
	otherFile fileKind = iota
	dirFile
	ggufFile
)

// locate resolves a file reference: an hf:// or https:// reference is downloaded into the
// cache first. It returns the path, what it names, and the first bytes of a file.
func locate(ref string, opt Options) (string, fileKind, []byte, error) {
	path := ref
	if hub.IsRef(ref) {
		var err error
		if path, err = hub.Fetch(context.Background(), ref, hub.Options{Progress: opt.Progress}); err != nil {
			return "", 0, nil, err
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", 0, nil, err
	}
	if st.IsDir() {
		return path, dirFile, nil, nil
	}
	magic, err := readMagic(path)
	if err != nil {
		return "", 0, nil, err
	}
	if bytes.Equal(magic, []byte("GGUF")) || filepath.Ext(path) == ".gguf" {
		return path, ggufFile, magic, nil
	}
	return path, otherFile, magic, nil
}

// readMagic returns the first four bytes of the file (fewer if it is shorter).
func readMagic(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	magic := make([]byte, 4)
	n, err := io.ReadFull(f, magic)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return magic[:n], nil
}
