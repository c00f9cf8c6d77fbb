package main

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// loadModel opens the model at path, or the built-in synthetic model when path is empty
// (saying so on stderr).
func loadModel(path string, stderr io.Writer) (*model.Model, error) {
	if path == "" {
		fmt.Fprintln(stderr, "kvref: no -m given: using the built-in synthetic model (random weights, so the text is noise).")
		fmt.Fprintln(stderr, "kvref: to run a real model: kvref run -m stories260K.gguf -p \"Once upon a time\"")
		return synth.Default.Model()
	}
	return model.LoadGGUF(path)
}
