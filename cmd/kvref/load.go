package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kvref/kvref/internal/hub"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/llama2c"
	"github.com/kvref/kvref/model/synth"
)

// loadModel opens a model with no separate tokenizer file; see loadModelWith.
func loadModel(path string, stderr io.Writer) (*model.Model, error) {
	return loadModelWith(path, "", stderr)
}

// loadModelWith opens the model at path, whatever its format:
//   - hf://OWNER/REPO/PATH and https:// references are downloaded into the cache first;
//   - a directory with config.json is a Hugging Face model (safetensors);
//   - a file starting with "GGUF" is a GGUF model;
//   - any other file is a llama2.c checkpoint, whose tokenizer.bin is tokenizerPath
//     (default: tokenizer.bin beside it);
//   - an empty path is the built-in synthetic model (said on stderr).
func loadModelWith(path, tokenizerPath string, stderr io.Writer) (*model.Model, error) {
	if hub.IsRef(path) {
		var err error
		if path, err = hub.Fetch(context.Background(), path, hub.Options{Progress: stderr}); err != nil {
			return nil, err
		}
	}
	if path == "" {
		fmt.Fprintln(stderr, "kvref: no -m given: using the built-in synthetic model (random weights, so the text is noise).")
		fmt.Fprintln(stderr, "kvref: to run a real model: kvref run -m stories260K.gguf -p \"Once upon a time\"")
		return synth.Default.Model()
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		if !hf.IsDir(path) {
			return nil, fmt.Errorf("%s is a directory without config.json: not a Hugging Face model directory", path)
		}
		return hf.Load(path)
	}
	magic := make([]byte, 4)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	_, err = io.ReadFull(f, magic)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if bytes.Equal(magic, []byte("GGUF")) || filepath.Ext(path) == ".gguf" {
		return model.LoadGGUF(path)
	}
	if tokenizerPath == "" {
		tokenizerPath = filepath.Join(filepath.Dir(path), "tokenizer.bin")
		if _, err := os.Stat(tokenizerPath); err != nil {
			return nil, fmt.Errorf("%s is not a GGUF file (it starts with %q, not \"GGUF\"); if it is a llama2.c checkpoint, pass its tokenizer with --tokenizer FILE", path, magic)
		}
	}
	return llama2c.Load(path, tokenizerPath)
}
