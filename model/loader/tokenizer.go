package loader

import (
	"fmt"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/tokenizer"
)

// OpenTokenizer opens only the tokenizer of what ref names, for commands that need no
// weights (kvref tokenize). It accepts everything Open accepts, and also what holds a
// vocabulary but no model kvref runs:
//   - a GGUF file of any architecture whose tokenizer kvref supports (tokenizer.ggml.model
//     "llama" or "gpt2"), such as llama.cpp's vocabulary-only ggml-vocab-*.gguf files;
//   - a directory holding tokenizer.json (with tokenizer_config.json, config.json and
//     generation_config.json when present), with or without weights.
//
// The embedded and synthetic models give their tokenizers, and a llama2.c checkpoint its
// tokenizer.bin (opt.Tokenizer, default tokenizer.bin beside it).
func OpenTokenizer(ref string, opt Options) (tokenizer.Tokenizer, error) {
	if KindOf(ref) != File {
		return modelTokenizer(ref, opt)
	}
	return openFile(ref, opt, hfTokenizer, ggufTokenizer, func(path string, _ []byte) (tokenizer.Tokenizer, error) {
		return modelTokenizer(path, opt)
	})
}

// hfTokenizer reads the tokenizer of a Hugging Face directory.
func hfTokenizer(path string) (tokenizer.Tokenizer, error) {
	if !tokenizer.IsHFDir(path) {
		return nil, fmt.Errorf("%s is a directory without tokenizer.json: kvref reads a Hugging Face tokenizer from tokenizer.json", path)
	}
	return tokenizer.FromHFDir(path)
}

// ggufTokenizer reads the vocabulary of a GGUF file of any architecture.
func ggufTokenizer(path string) (tokenizer.Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return tokenizer.FromGGUF(f)
}

// modelTokenizer opens the model ref names and keeps only its tokenizer.
func modelTokenizer(ref string, opt Options) (tokenizer.Tokenizer, error) {
	m, err := Open(ref, opt)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return m.Tokenizer, nil
}
