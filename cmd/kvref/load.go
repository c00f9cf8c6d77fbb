package main

import (
	"fmt"
	"io"

	door "github.com/kvref/kvref"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
	"github.com/kvref/kvref/tokenizer"
)

// loadModel opens the model ref names (the kvref package's OpenModel: the embedded default
// for "", synth:NAME, a file, a directory or an hf:// reference), with a progress bar on
// stderr for a download.
func loadModel(ref, tokenizerPath string, stderr io.Writer) (*model.Model, error) {
	m, err := door.OpenModel(ref, door.Options{Tokenizer: tokenizerPath, Progress: stderr})
	return m, openHint(err)
}

// loadTokenizer opens only the tokenizer of what ref names (loader.OpenTokenizer: also
// vocabulary-only GGUF files of any architecture and directories holding only
// tokenizer.json), as loadModel.
func loadTokenizer(ref, tokenizerPath string, stderr io.Writer) (tokenizer.Tokenizer, error) {
	tok, err := loader.OpenTokenizer(ref, loader.Options{Tokenizer: tokenizerPath, Progress: stderr})
	return tok, openHint(err)
}

// announce says on stderr when ref is not a file the user named: the commands that
// generate text (run, chat, serve, step) call it, so that text from the built-in model or
// a synthetic one is not taken for a model's own.
func announce(ref string, stderr io.Writer) {
	switch loader.KindOf(ref) {
	case loader.Builtin:
		fmt.Fprintln(stderr, "kvref: no -m given: using the built-in stories260K (a 260K-parameter TinyStories model embedded in kvref; -m MODEL for another)")
	case loader.Synthetic:
		fmt.Fprintf(stderr, "kvref: %s is a synthetic model (random weights, so the text is noise)\n", ref)
	}
}
