// Package kvref is the door to kvref's core for a Go program: open a model, generate text
// through a paged KV cache, and look at the cache while it works.
//
//	m, err := kvref.Open("", kvref.Options{})        // "": the built-in stories260K
//	if err != nil { ... }
//	defer m.Close()
//	r, err := m.Generate("Once upon a time", kvref.Params{MaxTokens: 20})
//	fmt.Println(r.Text)
//
// A Model owns one engine: the model's weights, a pool of KV-cache blocks and the threads
// that run the forward pass. Generate runs one prompt, Stream yields its text as it comes,
// GenerateAll runs several prompts together through the continuous-batching scheduler.
// Full blocks stay cached after a request ends, so a later prompt with the same prefix
// reuses them (Result.ReusedTokens). With Options.Check every step's logits are recomputed
// without the cache and must be bit-identical before a token is given out. Cache and
// Watch show the pool; NewStepper drives a second pool one command at a time (package
// stepper), as `kvref step` does.
//
// The packages underneath (engine, kvcache, model, tokenizer, ...) are there for programs
// that need more: this package only puts them together.
package kvref

import (
	"fmt"
	"io"
	"iter"
	"sync"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/textstream"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/stepper"
	"github.com/kvref/kvref/tokenizer"
)

// Options shape a Model's engine and its KV cache. The zero value is the defaults.
type Options struct {
	// CacheType stores keys and values: "f32" (the default), "f16", "bf16", "q8_0", ...
	// (the names kvref's --cache-dtype takes). KType and VType, when set, override it for
	// the keys or the values alone.
	CacheType, KType, VType string

	BlockSize   int // token slots per cache block (0: 16)
	CacheBlocks int // blocks in the pool (0: enough for Sequences full-context sequences)
	Sequences   int // sequences expected at once, for the default pool size (0: 1)
	Context     int // the longest sequence (0: the model's, at most 4096)
	Threads     int // worker threads (0: one per core)
	// Check recomputes every step's logits without the cache and requires them to be bit
	// for bit equal to the cached ones before a token is given out.
	Check bool
	// Tokenizer is the tokenizer.bin of a llama2.c checkpoint (default: tokenizer.bin
	// beside it); other formats carry their own.
	Tokenizer string
	// Progress receives download progress of hf:// and https:// references (nil: none).
	Progress io.Writer
}

// Model is an opened model with its engine and KV-cache pool. Its methods may be called
// from several goroutines: requests take turns (GenerateAll runs prompts together), and
// Cache waits for the step in progress. The body of a loop over Stream may call Cache and
// Watch, not Generate, GenerateAll or Stream (they wait for the stream to end).
type Model struct {
	mu     sync.Mutex // one request at a time
	poolMu sync.Mutex // the pool: held while a request changes it
	m      *model.Model
	eng    *engine.Engine
	cfg    engine.Config
	check  bool

	watchMu  sync.Mutex
	watchers map[int]func(kvcache.Event)
	nextW    int
}

// Open opens the model ref names, as kvref's -m does: "" for the built-in stories260K, a
// GGUF file, a Hugging Face directory (config.json and safetensors), a llama2.c
// checkpoint, "synth:NAME" for a synthetic model, or an hf://OWNER/REPO/FILE or https://
// reference (downloaded into kvref's cache first). It builds the engine opt describes.
func Open(ref string, opt Options) (*Model, error) {
	both := opt.CacheType
	if both == "" {
		both = quant.F32.String()
	}
	kt, vt, err := quant.ParseCacheTypes(both, opt.KType, opt.VType)
	if err != nil {
		return nil, fmt.Errorf("kvref: cache type: %w", err)
	}
	cfg := engine.Config{Context: opt.Context, BlockSize: opt.BlockSize, CacheBlocks: opt.CacheBlocks,
		Sequences: opt.Sequences, Threads: opt.Threads, KType: kt, VType: vt}
	m, err := OpenModel(ref, opt)
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(m, cfg)
	if err != nil {
		m.Close()
		return nil, err
	}
	d := &Model{m: m, eng: eng, cfg: cfg, check: opt.Check, watchers: map[int]func(kvcache.Event){}}
	eng.Pool().SetObserver(d.publish)
	return d, nil
}

// OpenModel opens the model ref names as Open does (with opt.Tokenizer and opt.Progress)
// but builds no engine: for programs that drive the packages underneath themselves, as
// kvref's own commands do. Close the model when done.
func OpenModel(ref string, opt Options) (*model.Model, error) {
	return loader.Open(ref, loader.Options{Tokenizer: opt.Tokenizer, Progress: opt.Progress})
}

// Close stops the engine and releases the model's file.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.poolMu.Lock()
	defer m.poolMu.Unlock()
	m.eng.Pool().SetObserver(nil)
	m.eng.Close()
	return m.m.Close()
}

// Name is where the model came from: its path or reference ("builtin:stories260K", ...).
func (m *Model) Name() string { return m.m.Source }

// Tokenize returns the token ids of text as a prompt: the model's BOS first when its
// tokenizer adds one, special tokens written in the text parsed.
func (m *Model) Tokenize(text string) []int {
	return m.m.Tokenizer.EncodeSpecial(text, tokenizer.Prompt)
}

// Params are one request's generation parameters. The zero value generates greedily until
// an end-of-text token or the end of the context.
type Params struct {
	MaxTokens   int      // tokens to generate per continuation (0: until a stop or the context is full)
	Temperature float64  // 0: greedy, always the most likely token
	TopK        int      // keep the K most likely tokens (0: all)
	TopP        float64  // keep the smallest set whose probability reaches P (0 or ≥ 1: all)
	MinP        float64  // drop tokens less likely than MinP × the most likely (0: none)
	Seed        uint64   // the same seed gives the same tokens
	Stop        []string // the text ends before the first of these it contains
	StopTokens  []int    // token ids that end the text (included in Result.Tokens)
	IgnoreEOS   bool     // go on past end-of-text tokens
	N           int      // continuations of the prompt, sharing its cache blocks (0: 1)
}

// request builds the engine's request for prompt.
func (m *Model) request(prompt string, p Params) engine.Request {
	maxTokens := p.MaxTokens
	if maxTokens == 0 {
		maxTokens = -1
	}
	return engine.Request{Prompt: m.Tokenize(prompt), MaxTokens: maxTokens, IgnoreEOS: p.IgnoreEOS, N: p.N, Check: m.check,
		StopTokens: p.StopTokens, StopStrings: p.Stop, Sampling: sampling(p)}
}

// sampling is the engine's form of p's sampling parameters.
func sampling(p Params) engine.Sampling {
	topP := p.TopP
	if topP == 0 {
		topP = 1
	}
	return engine.Sampling{Temperature: p.Temperature, TopK: p.TopK, TopP: topP, MinP: p.MinP, Seed: p.Seed}
}

// Result is what a request generated.
type Result struct {
	Text         string   // the first continuation's text, cut before a matched stop string
	Texts        []string // every continuation's text
	Tokens       [][]int  // every continuation's generated token ids
	StopReasons  []string // per continuation: "eos", "stop", "length" or "context"
	PromptTokens int      // tokens in the prompt
	// ReusedTokens are the prompt tokens whose keys and values came from the cache (full
	// blocks an earlier request with the same prefix left behind) instead of being computed.
	ReusedTokens int
	// CheckedTokens are the generated tokens whose logits were recomputed without the cache
	// and found bit-identical (Options.Check), else 0.
	CheckedTokens int
}

// result converts the engine's result of one request.
func result(r engine.Result, checked int) Result {
	out := Result{Texts: r.Texts, Tokens: r.Outputs, StopReasons: r.StopReasons, PromptTokens: r.PromptTokens,
		ReusedTokens: r.PrefixHitTokens, CheckedTokens: checked}
	if len(r.Texts) > 0 {
		out.Text = r.Texts[0]
	}
	return out
}

// Generate continues prompt and returns what it generated. Its sequences' full blocks stay
// cached for later prompts with the same prefix.
func (m *Model) Generate(prompt string, p Params) (Result, error) {
	rs, err := m.GenerateAll([]string{prompt}, p)
	if err != nil {
		return Result{}, err
	}
	return rs[0], nil
}

// GenerateAll runs every prompt together through one scheduler: admitted as the pool has
// room, batched into shared forward passes, preempted and resumed if it runs out. It
// returns one Result per prompt, in order, or the first prompt's error.
func (m *Model) GenerateAll(prompts []string, p Params) ([]Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.poolMu.Lock()
	defer m.poolMu.Unlock()
	sched := m.eng.NewScheduler(engine.SchedulerConfig{ReuseLogits: true})
	ids := make([]int, len(prompts))
	for i, text := range prompts {
		id, err := sched.Add(m.request(text, p))
		if err != nil {
			sched.Cancel(ids[:i]...)
			return nil, fmt.Errorf("kvref: prompt %d: %w", i, err)
		}
		ids[i] = id
	}
	defer sched.Cancel(ids...) // frees the blocks if a step fails
	checked := map[int]int{}
	err := sched.RunAll(func(t engine.Token) error {
		if m.check {
			checked[t.Request]++ // with Check, a token is emitted only once its step passed
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(prompts))
	for i, id := range ids {
		if err := sched.Err(id); err != nil {
			return nil, fmt.Errorf("kvref: prompt %d: %w", i, err)
		}
		out[i] = result(sched.Result(id), checked[id])
	}
	return out, nil
}

// Stream continues prompt and yields its text as it is generated, piece by piece (never a
// partial UTF-8 character, nor text that could still become a stop string); the pieces
// add up to Result.Text. It streams one continuation (Params.N is ignored). An error ends
// the sequence as its last pair; breaking out of the loop stops generation.
func (m *Model) Stream(prompt string, p Params) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		m.mu.Lock()
		defer m.mu.Unlock()
		p.N = 1
		req := m.request(prompt, p)
		m.poolMu.Lock()
		sched := m.eng.NewScheduler(engine.SchedulerConfig{ReuseLogits: true})
		id, err := sched.Add(req)
		m.poolMu.Unlock()
		if err != nil {
			yield("", fmt.Errorf("kvref: %w", err))
			return
		}
		defer func() {
			m.poolMu.Lock()
			defer m.poolMu.Unlock()
			sched.Cancel(id) // frees the blocks when the loop stops early
		}()
		var text []byte
		var ready []string
		sent := 0
		for {
			m.poolMu.Lock() // the pool is the request's during a step, the caller's between steps
			done := sched.Done()
			if !done {
				err = sched.EmitStep(func(t engine.Token) error {
					text = append(text, m.m.Tokenizer.Piece(t.ID)...)
					if n := textstream.Releasable(text, req.StopStrings); !t.Final && n > sent {
						ready = append(ready, string(text[sent:n]))
						sent = n
					}
					return nil
				})
			}
			m.poolMu.Unlock()
			if done {
				break
			}
			for _, piece := range ready {
				if !yield(piece, nil) {
					return
				}
			}
			ready = ready[:0]
			if err != nil {
				yield("", err)
				return
			}
		}
		m.poolMu.Lock()
		err = sched.Err(id)
		res := sched.Result(id)
		m.poolMu.Unlock()
		if err != nil {
			yield("", fmt.Errorf("kvref: %w", err))
			return
		}
		if final := res.Texts[0]; len(final) > sent {
			yield(final[sent:], nil)
		}
	}
}

// Cache returns a snapshot of the pool: its statistics, every block (state, reference
// count, tokens, owners) and every live sequence's block table. It shares nothing with the
// pool.
func (m *Model) Cache() kvcache.Snapshot {
	m.poolMu.Lock()
	defer m.poolMu.Unlock()
	return m.eng.Pool().Snapshot()
}

// CacheConfig returns the pool's shape: blocks, slots per block, the cache types and the
// bytes a token takes.
func (m *Model) CacheConfig() kvcache.Config { return m.eng.Pool().Config() }

// Watch calls f with every event of the pool from now on (a block allocated, shared by a
// prefix hit or a fork, copied on write, indexed, released, evicted, ...), in order, on the
// goroutine running the request, until stop is called. f must not call the Model, nor stop.
func (m *Model) Watch(f func(kvcache.Event)) (stop func()) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	id := m.nextW
	m.nextW++
	m.watchers[id] = f
	return func() {
		m.watchMu.Lock()
		defer m.watchMu.Unlock()
		delete(m.watchers, id)
	}
}

// publish hands a pool event to every watcher.
func (m *Model) publish(e kvcache.Event) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	for _, f := range m.watchers {
		f(e)
	}
}

// NewStepper starts a stepping session on a pool of its own, shaped like the Model's
// (Options): one command at a time, each returning what it did to the cache (package
// stepper, the session behind `kvref step`). Sampling comes from p's temperature, top-k,
// top-p, min-p and seed; Options.Check checks every step. Close it before the Model.
func (m *Model) NewStepper(p Params) (*stepper.Session, error) {
	return stepper.New(m.m, m.cfg, stepper.Options{Sampling: sampling(p), Check: m.check})
}
