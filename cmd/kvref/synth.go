package main

import (
	"fmt"
	"io"

	"github.com/kvref/kvref/model/synth"
)

func init() {
	register(command{"synth", "write a deterministic random model as a GGUF file", synthCmd})
}

func synthCmd(args []string, stdout, stderr io.Writer) error {
	d := synth.Default
	fs := newFlags("synth", stderr)
	out := fs.String("o", "", "output GGUF file (required)")
	name := fs.String("name", "kvref-synthetic", "general.name of the model")
	dim := fs.Int("dim", d.Dim, "embedding width")
	layers := fs.Int("layers", d.Layers, "transformer layers")
	heads := fs.Int("heads", d.Heads, "query heads")
	kvHeads := fs.Int("kv-heads", d.KVHeads, "key/value heads (fewer than --heads: GQA)")
	hidden := fs.Int("hidden", d.Hidden, "feed-forward width")
	ctx := fs.Int("ctx", d.Context, "context length")
	vocab := fs.Int("vocab", 0, "vocabulary size (0: the 259-token byte-level vocabulary; larger pads with unused tokens)")
	seed := fs.Uint64("seed", d.Seed, "weights seed: the same flags always give the same file")
	ropeBase := fs.Float64("rope-base", d.RopeBase, "RoPE frequency base")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref synth -o FILE.gguf [shape flags]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return fmt.Errorf("-o FILE is required")
	}
	s := synth.Shape{Name: *name, Dim: *dim, Layers: *layers, Heads: *heads, KVHeads: *kvHeads, Hidden: *hidden,
		Context: *ctx, Vocab: *vocab, Seed: *seed, RopeBase: *ropeBase}
	if err := s.WriteFile(*out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kvref: wrote %s (dim %d, %d layers, %d heads, %d KV heads, hidden %d, seed %d)\n",
		*out, s.Dim, s.Layers, s.Heads, s.KVHeads, s.Hidden, s.Seed)
	return nil
}
