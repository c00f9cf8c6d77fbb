package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kvref/kvref/internal/hub"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// loadModel opens the model at path (downloading hf:// and https:// references into the
// cache first), or the built-in synthetic model when path is empty (saying so on stderr).
func loadModel(path string, stderr io.Writer) (*model.Model, error) {
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
	return model.LoadGGUF(path)
}
