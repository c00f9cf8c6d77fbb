package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
)

func init() {
	register(command{"plan", "size the KV cache: bytes per token, and how many sequences fit in memory", planCmd})
}

// planFlags are the flags of `kvref plan`.
type planFlags struct {
	modelFlags
	preset                          string
	list, tied, asJSON              bool
	layers, kvHeads, headDim, heads int
	dim, hidden, vocab              int
	cacheDtype, cacheK, cacheV      string
	ctx, blockSize, sharedPrefix    int
	mem, weights                    sizeFlag
	weightsDtype                    string
	set                             map[string]bool // flags given on the command line
}

// shapeFlagNames are the flags that describe a model without a file or preset.
var shapeFlagNames = []string{"layers", "kv-heads", "head-dim", "heads", "dim", "hidden", "vocab", "tied"}

func planCmd(args []string, stdout, stderr io.Writer) error {
	var f planFlags
	fs := newFlags("plan", stderr)
	f.modelFlags.register(fs, "model (GGUF file, Hugging Face directory, llama2.c checkpoint, hf:// reference): its shape and its real weight bytes")
	fs.StringVar(&f.preset, "preset", "", "a published model's shape (--preset list, or --list, shows them)")
	fs.BoolVar(&f.list, "list", false, "list the presets and where their shapes come from")
	fs.IntVar(&f.layers, "layers", 0, "shape: transformer layers")
	fs.IntVar(&f.kvHeads, "kv-heads", 0, "shape: key/value heads per layer")
	fs.IntVar(&f.headDim, "head-dim", 0, "shape: width of one head")
	fs.IntVar(&f.heads, "heads", 0, "shape: query heads (for the comparison without GQA and the parameter count)")
	fs.IntVar(&f.dim, "dim", 0, "shape: embedding width (default heads·head-dim; for the parameter count)")
	fs.IntVar(&f.hidden, "hidden", 0, "shape: feed-forward width (for the parameter count)")
	fs.IntVar(&f.vocab, "vocab", 0, "shape: vocabulary size (for the parameter count)")
	fs.BoolVar(&f.tied, "tied", false, "shape: the output projection shares the embedding (for the parameter count)")
	registerCacheTypes(fs, &f.cacheDtype, &f.cacheK, &f.cacheV, "f16")
	registerContext(fs, &f.ctx, 0, fmt.Sprintf("tokens per full sequence (0: the model's context; %d for shape flags)", plan.DefaultContext))
	fs.Var(&f.mem, "mem", "`SIZE` of the memory for weights and cache together, e.g. 80GB or 24GiB (default: this machine's available memory: MemAvailable, or less under a memory cgroup's limit)")
	fs.Var(&f.weights, "weights", "`SIZE` of the weights, e.g. 14GB (default: the file's tensors with -m, else an f16 estimate)")
	fs.StringVar(&f.weightsDtype, "weights-dtype", "", "estimate the weights as parameters × this type: "+weightTypeNames())
	fs.IntVar(&f.blockSize, "block-size", kvcache.DefaultBlockSize, "token slots per KV cache block")
	fs.IntVar(&f.sharedPrefix, "shared-prefix", 0, "tokens of prompt every sequence shares (default: compare ¼, ½ and ¾ of the context)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.Usage = func() { planUsage(fs, stderr) }
	if err := parseFlagsOnly(fs, args, "kvref plan takes flags only"); err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.list || strings.EqualFold(f.preset, "list") {
		return plan.WritePresets(stdout)
	}

	m, err := resolvePlanModel(&f)
	if err != nil {
		return err
	}
	kType, vType, err := cacheTypes(f.cacheDtype, f.cacheK, f.cacheV)
	if err != nil {
		return err
	}
	in := plan.Input{Shape: m.Shape, KType: kType, VType: vType, Context: f.ctx, BlockSize: f.blockSize}
	var notes []string
	var note string
	in.Context, note = plan.ChooseContext(m.Shape.Context, f.ctx, f.set["c"] || f.set["ctx"])
	if note != "" {
		notes = append(notes, note)
	}
	if m.Note != "" {
		notes = append(notes, m.Note)
	}

	w, err := planWeights(&f, m)
	if err != nil {
		return err
	}
	in.Weights = w.Bytes
	if w.From == "" {
		w.From = "not counted"
		notes = append(notes, "the weights are not counted (the shape gives no parameter count): give --weights SIZE, or --heads, --hidden and --vocab")
	}
	var memFrom string
	if in.Memory, memFrom, err = plan.ChooseMemory(f.mem.set(), f.mem.bytes, f.mem.text); err != nil {
		return err
	}

	in.SharedPrefixes = plan.ChooseSharedPrefixes(in.Context, f.sharedPrefix, f.set["shared-prefix"])

	r, err := plan.Compute(in)
	if err != nil {
		return plan.Explain(in, r, err, w.From, memFrom)
	}
	if note := r.NoFitNote(in.Context); note != "" {
		notes = append(notes, note)
	}
	if f.asJSON {
		return printIndentedJSON(stdout, r.JSON(plan.ModelInfo{Name: m.Name, From: m.From, Params: w.Params}, memFrom, w.From))
	}
	name := m.Name
	if m.From != "flags" {
		name += " (" + m.From + ")"
	}
	plan.WriteText(stdout, r, plan.TextInfo{Model: name, Params: w.Params, MemoryFrom: memFrom, WeightsFrom: w.From, Notes: notes})
	return nil
}

func planUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `usage: kvref plan [-m MODEL | --preset NAME | --layers L --kv-heads H --head-dim D [--heads Q]]
                  [--cache-dtype T | -ctk T -ctv T] [--ctx N] [--mem SIZE] [--weights SIZE | --weights-dtype T]
                  [--block-size B] [--shared-prefix N] [--json]

How many full-context sequences fit in memory, from the formula the cache is built on:

    bytes per token = 2 · layers · kv_heads · head_dim · bytes_per_element

(int8, fp8-e4m3 and the block types q8_0, q4_0, q4_1, iq4_nl, q5_0 and q5_1 add their
scales and minimums: layers × (K row + V row bytes), exactly as the cache stores them). A sequence of N tokens holds ceil(N / B) blocks; the memory left after
the weights holds floor(left / block bytes) blocks. Then the same plan without GQA, with
every cache type, and with a shared prompt prefix whose full blocks are stored once.

Sizes (--mem, --weights) are read as numfmt and Kubernetes read them:
80GB = 80G = 80·10^9 bytes, 80GiB = 80Gi = 80·2^30 bytes; also k, M, T, P and Ki, Mi,
Ti, Pi (case is ignored; B is bytes); fractions such as 1.5TB; a plain number is bytes.

kvref plan --list shows the presets.
`)
	printFlags(fs, w)
}

// resolvePlanModel finds the shape from exactly one of -m, --preset and the shape flags.
func resolvePlanModel(f *planFlags) (plan.Source, error) {
	shapeGiven := false
	for _, n := range shapeFlagNames {
		shapeGiven = shapeGiven || f.set[n]
	}
	if err := plan.CheckOneSource(f.ref, f.preset, shapeGiven); err != nil {
		return plan.Source{}, err
	}
	switch {
	case f.ref != "":
		mdl, err := f.modelFlags.open(io.Discard)
		if err != nil {
			return plan.Source{}, err
		}
		defer mdl.Close()
		return plan.Source{Name: f.ref, From: mdl.Format + " model", Shape: mdl.Config.PlanShape(), FileWeights: mdl.Weights.Bytes()}, nil
	case f.preset != "":
		src, err := plan.PresetSource(f.preset)
		return src, presetHint(err)
	}
	return plan.ShapeSource(plan.Shape{Layers: f.layers, Heads: f.heads, KVHeads: f.kvHeads, HeadDim: f.headDim,
		Dim: f.dim, Hidden: f.hidden, Vocab: f.vocab, Tied: f.tied})
}

// planWeights decides the weights' bytes (plan.ChooseWeights): --weights, --weights-dtype ×
// parameters, the file's tensors, or an f16 estimate from the parameter count.
func planWeights(f *planFlags, m plan.Source) (plan.Weights, error) {
	w, err := plan.ChooseWeights(m.Shape, plan.WeightsChoice{Given: f.weights.set(), Bytes: f.weights.bytes,
		GivenFrom: fmt.Sprintf("--weights %s = %d B", f.weights.text, f.weights.bytes),
		Dtype:     f.weightsDtype, Model: m.FileWeights, ModelFrom: "the file's tensors"})
	switch {
	case errors.Is(err, plan.ErrWeightsTwice):
		return w, fmt.Errorf("give --weights SIZE or --weights-dtype T, not both")
	case errors.Is(err, plan.ErrWeightsNeedParams):
		return w, fmt.Errorf("--weights-dtype needs the parameter count, so the shape needs --heads, --hidden and --vocab too (or give --weights SIZE)")
	}
	return w, err
}

// weightTypeNames lists the --weights-dtype names.
func weightTypeNames() string {
	var s []string
	for _, t := range plan.WeightTypes() {
		s = append(s, fmt.Sprintf("%s (%g bits)", t.Name, t.BitsPerWeight()))
	}
	return strings.Join(s, ", ")
}

// printIndentedJSON writes v as indented JSON.
func printIndentedJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
