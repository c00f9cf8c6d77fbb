package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

// The flags every command that opens a model or builds an engine shares, spelled the same
// everywhere (and, where llama.cpp has a spelling, also as llama.cpp spells it: -c/--ctx,
// -ctk/--cache-type-k, -ctv/--cache-type-v).

// modelHelp is the help text of -m.
const modelHelp = "model: GGUF file, Hugging Face directory, llama2.c checkpoint, hf:// reference, or synth:SHAPE; empty: the built-in stories260K"

// modelFlags are -m and --tokenizer.
type modelFlags struct{ ref, tokenizer string }

// register adds -m and --tokenizer to fs; help, when not empty, is the command's help text
// of -m (what the model is for, what no -m means), else modelHelp.
func (f *modelFlags) register(fs *flag.FlagSet, help string) {
	if help == "" {
		help = modelHelp
	}
	group(fs, "model flags", func() {
		fs.StringVar(&f.ref, "m", "", help)
		fs.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer.bin of a llama2.c checkpoint (default: tokenizer.bin beside it)")
	})
}

// open opens the model the flags name (see loadModel).
func (f *modelFlags) open(stderr io.Writer) (*model.Model, error) {
	return loadModel(f.ref, f.tokenizer, stderr)
}

// contextHelp is the help text of -c for a command that builds an engine.
const contextHelp = "context length (0: the model's, at most 4096)"

// registerContext adds -c and its long spelling --ctx, one flag, to fs.
func registerContext(fs *flag.FlagSet, p *int, def int, help string) {
	fs.IntVar(p, "c", def, help)
	alias(fs, "ctx", "c")
}

// registerThreads adds -t to fs; what, when not empty, says what the threads run.
func registerThreads(fs *flag.FlagSet, p *int, what string) {
	if what != "" {
		what = " " + what
	}
	fs.IntVar(p, "t", 0, "threads"+what+" (0: one per core)")
}

// flagSet reports whether the flag of that name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// engineFlags size an engine: context, threads, block size, pool size, cache types.
type engineFlags struct {
	ctx, threads, blockSize, cacheBlocks int
	dtype, k, v                          string
}

// register adds the engine flags to fs; poolHelp says what --cache-blocks 0 means for the
// command.
func (f *engineFlags) register(fs *flag.FlagSet, poolHelp string) {
	f.registerWith(fs, contextHelp, "blocks in the KV cache pool (0: "+poolHelp+")")
}

// registerWith adds the engine flags to fs with the command's help texts of -c and
// --cache-blocks.
func (f *engineFlags) registerWith(fs *flag.FlagSet, ctxHelp, poolHelp string) {
	group(fs, "engine and KV cache flags", func() {
		registerContext(fs, &f.ctx, 0, ctxHelp)
		registerThreads(fs, &f.threads, "")
		fs.IntVar(&f.blockSize, "block-size", kvcache.DefaultBlockSize, "token slots per KV cache block")
		fs.IntVar(&f.cacheBlocks, "cache-blocks", 0, poolHelp)
		registerCacheTypes(fs, &f.dtype, &f.k, &f.v, "f32")
	})
}

// openEngine checks the engine flags, opens the model the model flags name (announcing
// the built-in or a synthetic one: every caller generates text) and builds its
// engine for the given number of sequences at once (which sizes the default pool). done
// stops the engine and closes the model.
func openEngine(mf *modelFlags, ef *engineFlags, sequences int, stderr io.Writer) (eng *engine.Engine, done func(), err error) {
	cfg, err := ef.config(sequences)
	if err != nil {
		return nil, nil, err
	}
	announce(mf.ref, stderr)
	m, err := mf.open(stderr)
	if err != nil {
		return nil, nil, err
	}
	if eng, err = engine.New(m, cfg); err != nil {
		m.Close()
		if tooLarge := (*kvcache.PoolTooLargeError)(nil); errors.As(err, &tooLarge) {
			err = fmt.Errorf("%w (%s against %s): lower --cache-blocks (0 sizes it for full-context sequences of -c tokens) or pick a narrower --cache-dtype such as q8_0",
				err, plan.FormatSize(int64(tooLarge.Blocks)*tooLarge.BlockBytes), plan.FormatSize(tooLarge.Available))
		}
		return nil, nil, err
	}
	return eng, func() { eng.Close(); m.Close() }, nil
}

// openChatEngine is openEngine with the chat formatter of the model's template, or of the
// one topt names (kvref chat and serve).
func openChatEngine(mf *modelFlags, ef *engineFlags, topt *chat.TemplateOptions, sequences int, stderr io.Writer) (*engine.Engine, *chat.Formatter, func(), error) {
	eng, closeEngine, err := openEngine(mf, ef, sequences, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	format, err := chat.NewFormatter(eng.Model(), *topt)
	if err != nil {
		closeEngine()
		return nil, nil, nil, err
	}
	return eng, format, closeEngine, nil
}

// registerCacheTypes adds --cache-dtype (keys and values), --cache-type-k/-ctk and
// --cache-type-v/-ctv to fs.
func registerCacheTypes(fs *flag.FlagSet, both, k, v *string, def string) {
	fs.StringVar(both, "cache-dtype", def, "KV cache storage for keys and values: "+typeNames())
	registerKVPair(fs, k, v, "key storage (overrides --cache-dtype)", "value storage (overrides --cache-dtype)")
}

// registerSampling adds --temp, --top-k, --top-p, --min-p and --seed to fs, with
// llama.cpp's defaults; seedHelp says how the command's sequences use the seed.
func registerSampling(fs *flag.FlagSet, s *engine.Sampling, seedHelp string) {
	group(fs, "sampling flags", func() {
		fs.Float64Var(&s.Temperature, "temp", 0.8, "sampling temperature (0: greedy)")
		fs.IntVar(&s.TopK, "top-k", 40, "top-k sampling: the K most likely tokens only (0: off)")
		fs.Float64Var(&s.TopP, "top-p", 0.95, "top-p (nucleus) sampling (1: off)")
		fs.Float64Var(&s.MinP, "min-p", 0.05, "min-p sampling (0: off)")
		fs.Uint64Var(&s.Seed, "seed", 42, "sampling seed: "+seedHelp)
	})
}

// registerKVPair adds --cache-type-k/-ctk and --cache-type-v/-ctv to fs with the command's
// help texts (kvref golden, verify and eval give the pair a meaning of their own).
func registerKVPair(fs *flag.FlagSet, k, v *string, kHelp, vHelp string) {
	fs.StringVar(k, "cache-type-k", "", kHelp)
	alias(fs, "ctk", "cache-type-k")
	fs.StringVar(v, "cache-type-v", "", vHelp)
	alias(fs, "ctv", "cache-type-v")
}

// config checks the flags and returns the engine configuration for the given number of
// sequences expected at once (which sizes the default pool).
func (f *engineFlags) config(sequences int) (engine.Config, error) {
	switch {
	case f.ctx < 0:
		return engine.Config{}, fmt.Errorf("-c must be ≥ 0 (0: the model's context), got %d", f.ctx)
	case f.blockSize < 1:
		return engine.Config{}, fmt.Errorf("--block-size must be ≥ 1, got %d", f.blockSize)
	case f.cacheBlocks < 0:
		return engine.Config{}, fmt.Errorf("--cache-blocks must be ≥ 0, got %d", f.cacheBlocks)
	case f.threads < 0:
		return engine.Config{}, fmt.Errorf("-t must be ≥ 0 (0: one per core), got %d", f.threads)
	}
	kType, vType, err := cacheTypes(f.dtype, f.k, f.v)
	if err != nil {
		return engine.Config{}, err
	}
	return engine.Config{Context: f.ctx, BlockSize: f.blockSize, CacheBlocks: f.cacheBlocks, Sequences: sequences,
		Threads: f.threads, KType: kType, VType: vType}, nil
}

// cacheTypes resolves --cache-dtype, --cache-type-k and --cache-type-v: an empty key or
// value type takes the --cache-dtype one. The error names the flag.
func cacheTypes(both, k, v string) (quant.CacheType, quant.CacheType, error) {
	kt, err := parseCacheFlag("--cache-dtype", both)
	if err != nil {
		return 0, 0, err
	}
	vt := kt
	if k != "" {
		if kt, err = parseCacheFlag("--cache-type-k/-ctk", k); err != nil {
			return 0, 0, err
		}
	}
	if v != "" {
		if vt, err = parseCacheFlag("--cache-type-v/-ctv", v); err != nil {
			return 0, 0, err
		}
	}
	return kt, vt, nil
}

// parseCacheFlag parses the value of a cache type flag, naming the flag in the error.
func parseCacheFlag(flag, value string) (quant.CacheType, error) {
	t, err := quant.ParseCacheType(value)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", flag, err)
	}
	return t, nil
}

// parseCacheList parses the comma-separated cache types of a flag ("" gives none), naming
// the flag in the error.
func parseCacheList(flag, list string) ([]quant.CacheType, error) {
	if list == "" {
		return nil, nil
	}
	var out []quant.CacheType
	for _, name := range strings.Split(list, ",") {
		t, err := parseCacheFlag(flag, name)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// typeNames lists the cache types for help texts.
func typeNames() string {
	var s []string
	for _, t := range quant.CacheTypes() {
		s = append(s, t.String())
	}
	return strings.Join(s, ", ")
}
