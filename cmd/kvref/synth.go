package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

func init() {
	register(command{"synth", "write a deterministic random model (GGUF, Hugging Face directory or llama2.c)", synthCmd})
}

func synthCmd(args []string, stdout, stderr io.Writer) error {
	d := synth.Default
	fs := newFlags("synth", stderr, "usage: kvref synth -o FILE.gguf [shape flags]")
	out := fs.String("o", "", "output GGUF file (required)")
	name := fs.String("name", "kvref-synthetic", "general.name of the model")
	dim := fs.Int("dim", d.Dim, "embedding width")
	layers := fs.Int("layers", d.Layers, "transformer layers")
	heads := fs.Int("heads", d.Heads, "query heads")
	kvHeads := fs.Int("kv-heads", d.KVHeads, "key/value heads (fewer than --heads: GQA)")
	hidden := fs.Int("hidden", d.Hidden, "feed-forward width")
	var ctx int
	registerContext(fs, &ctx, d.Context, "context length")
	vocab := fs.Int("vocab", 0, "vocabulary size (0: the 259-token byte-level vocabulary, 260 with --format llama2c; larger adds the space piece ▁ and unused tokens)")
	seed := fs.Uint64("seed", d.Seed, "weights seed: the same flags always give the same file")
	ropeBase := fs.Float64("rope-base", d.RopeBase, "RoPE frequency base")
	arch := fs.String("arch", "llama", "architecture: llama, qwen2 (Q/K/V biases, rotate-half RoPE), qwen3 (q/k norm), gemma2, gemma3 (docs/models.md)")
	headDim := fs.Int("head-dim", 0, "head width (0: dim/heads)")
	window := fs.Int("sliding-window", 0, "every layer's attention window, as Mistral's sliding_window (0: attend over every position); gemma: the sliding layers' window (default 4096 for gemma2, 512 for gemma3)")
	globalEvery := fs.Int("global-every", 0, "gemma: one layer in N attends globally (0: the architecture's, 2 for gemma2, 6 for gemma3; others need --format hf)")
	queryScalar := fs.Int("query-scalar", 0, "gemma: query_pre_attn_scalar, the scores scaled by its inverse square root (0: the head dim, as llama.cpp infers; others need --format hf)")
	attnCap := fs.Float64("attn-softcap", 0, "gemma2: attention-score soft-cap (default 50, as the real models)")
	finalCap := fs.Float64("final-softcap", 0, "gemma: logit soft-cap (default 30 for gemma2, none for gemma3)")
	variant := fs.String("variant", "", "a ready-made tiny variant instead of the shape flags: "+strings.Join(synth.VariantNames(), ", "))
	wtype := fs.String("wtype", "f32", "weight type of the matrices (gguf only): f32, f16, bf16, "+model.QuantizedTypeNames())
	format := fs.String("format", "gguf", "output format: gguf, hf (a Hugging Face directory) or llama2c (with tokenizer.bin beside it)")
	special := fs.String("special-tokens", "", "comma-separated control tokens added after the byte tokens (e.g. \"<|im_start|>,<|im_end|>\")")
	chatTemplate := fs.String("chat-template", "", "a Jinja chat template FILE to embed as tokenizer.chat_template (gguf only)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return fmt.Errorf("-o FILE is required")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	s := synth.Shape{Name: *name, Dim: *dim, Layers: *layers, Heads: *heads, KVHeads: *kvHeads, Hidden: *hidden,
		Context: ctx, Vocab: *vocab, Seed: *seed, RopeBase: *ropeBase, Arch: *arch, HeadDim: *headDim,
		QKVBias: *arch == "qwen2", QKNorm: *arch == "qwen3", SlidingWindow: *window,
		GlobalEvery: *globalEvery, QueryScalar: *queryScalar, AttnSoftCap: *attnCap, FinalSoftCap: *finalCap}
	if *arch == "gemma2" || *arch == "gemma3" {
		synth.GemmaDefaults(&s, func(name string) bool { return set[name] || (name == "ctx" && set["c"]) })
	}
	if *variant != "" {
		v, err := synth.VariantByName(*variant)
		if err != nil {
			return err
		}
		s = v
	}
	if *special != "" {
		s.SpecialTokens = strings.Split(*special, ",")
	}
	if *chatTemplate != "" {
		if *format != "gguf" {
			return fmt.Errorf("--chat-template needs --format gguf")
		}
		t, err := chattemplate.ReadFile(*chatTemplate)
		if err != nil {
			return err
		}
		s.ChatTemplate = t.Source
	}
	s = s.ForFormat(*format)
	if err := s.Validate(); err != nil {
		return shapeHint(err)
	}
	if *wtype != "f32" {
		if *format != "gguf" {
			return fmt.Errorf("--wtype %s needs --format gguf", *wtype)
		}
		return writeQuantizedSynth(s, *wtype, *out, stderr)
	}
	if !slices.Contains(loader.SynthFormats, *format) {
		return fmt.Errorf("unknown --format %q (gguf, hf, llama2c)", *format)
	}
	if err := loader.WriteSynth(s, *format, *out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kvref: wrote %s (%s, dim %d, %d layers, %d heads, %d KV heads, hidden %d, seed %d)\n",
		*out, *format, s.Dim, s.Layers, s.Heads, s.KVHeads, s.Hidden, s.Seed)
	return nil
}

// writeQuantizedSynth writes a synthetic model with its matrices converted to wtype.
func writeQuantizedSynth(s synth.Shape, wtype, out string, stderr io.Writer) error {
	target, err := model.ParseQuantizeTarget(wtype)
	if err != nil {
		return fmt.Errorf("--wtype %w", err)
	}
	counts, err := s.WriteQuantizedFile(out, target)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kvref: wrote %s (%d %s matrices, seed %d)\n", out, counts[target], target, s.Seed)
	return nil
}
