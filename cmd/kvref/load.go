package main

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
)

// loadModel opens a model with no separate tokenizer file; see loadModelWith.
func loadModel(ref string, stderr io.Writer) (*model.Model, error) {
	return loadModelWith(ref, "", stderr)
}

// loadModelWith opens the model ref names (loader.Open: the embedded default for "",
// synth:NAME, a file, a directory or an hf:// reference) and says on stderr when it is not
// a file the user named.
func loadModelWith(ref, tokenizerPath string, stderr io.Writer) (*model.Model, error) {
	switch loader.KindOf(ref) {
	case loader.Builtin:
		fmt.Fprintln(stderr, "kvref: no -m given: using the built-in stories260K (a 260K-parameter TinyStories model embedded in kvref; -m MODEL for another)")
	case loader.Synthetic:
		fmt.Fprintf(stderr, "kvref: %s is a synthetic model (random weights, so the text is noise)\n", ref)
	}
	return loader.Open(ref, loader.Options{Tokenizer: tokenizerPath, Progress: stderr})
}
