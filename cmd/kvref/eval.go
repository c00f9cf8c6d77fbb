package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"eval", "measure what each KV cache type costs in accuracy (perplexity, KL, top-1)", evalCmd})
}

// dtypeAccuracy is one row of `kvref eval`.
type dtypeAccuracy struct {
	CacheType      string  `json:"cache_type"` // "q8_0", or "K/V" such as "q8_0/f16" for different key and value types
	CacheTypeK     string  `json:"cache_type_k"`
	CacheTypeV     string  `json:"cache_type_v"`
	BytesPerToken  int64   `json:"bytes_per_token"`
	BytesVsF32     float64 `json:"bytes_vs_f32"`
	Perplexity     float64 `json:"perplexity"`
	PerplexityDiff float64 `json:"perplexity_delta"`
	MeanKL         float64 `json:"mean_kl"`
	MaxKL          float64 `json:"max_kl"`
	Top1Agreement  float64 `json:"top1_agreement"`
	MaxAbsLogitErr float64 `json:"max_abs_logit_error"`
	nll, kl        float64
	agree, n       int
}

// evalReport is the --json output of `kvref eval`.
type evalReport struct {
	Model     string          `json:"model"`
	Text      string          `json:"text"`
	Tokens    int             `json:"tokens"`
	Window    int             `json:"window"`
	Windows   int             `json:"windows"`
	Predicted int             `json:"predicted_tokens"`
	Results   []dtypeAccuracy `json:"results"`
}

func evalCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	modelPath := fs.String("m", "", "model (GGUF, Hugging Face directory, llama2.c, hf://, synth:SHAPE); empty: the built-in stories260K")
	tokPath := fs.String("tokenizer", "", "tokenizer.bin of a llama2.c checkpoint")
	file := fs.String("file", "", "text to evaluate on (default: a built-in TinyStories-style sample)")
	dtypes := fs.String("cache-dtype", "all", "comma-separated cache types to compare with f32, or all: "+typeNames())
	var mixed cacheFlags
	fs.StringVar(&mixed.k, "cache-type-k", "", "also compare one cache with this key type and --cache-type-v's value type (llama.cpp's spelling)")
	fs.StringVar(&mixed.k, "ctk", "", "same as --cache-type-k")
	fs.StringVar(&mixed.v, "cache-type-v", "", "value type of the --cache-type-k row (default: f32)")
	fs.StringVar(&mixed.v, "ctv", "", "same as --cache-type-v")
	ctx := fs.Int("c", 0, "window length in tokens (0: the model's context, at most 4096)")
	threads := fs.Int("t", 0, "threads (0: one per core)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref eval [-m MODEL] [--file TEXT] [--cache-dtype T,...] [-ctk K -ctv V] [-c N] [--json]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	types := []cachePair{{quant.F32, quant.F32}}
	if *dtypes == "all" {
		for _, t := range quant.CacheTypes()[1:] {
			types = append(types, cachePair{t, t})
		}
	} else if *dtypes != "" {
		for _, name := range strings.Split(*dtypes, ",") {
			t, err := parseCacheFlag("--cache-dtype", name)
			if err != nil {
				return err
			}
			if t != quant.F32 {
				types = append(types, cachePair{t, t})
			}
		}
	}
	if mixed.k != "" || mixed.v != "" {
		mixed.both = "f32"
		k, v, err := mixed.types()
		if err != nil {
			return err
		}
		if p := (cachePair{k, v}); !slices.Contains(types, p) {
			types = append(types, p)
		}
	}
	text, source := sampleText, "built-in sample"
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		text, source = string(data), *file
	}
	m, err := loadModelWith(*modelPath, *tokPath, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	var usable []cachePair
	for _, p := range types {
		if err := p.validate(m.Config.KVHeads, m.Config.HeadDim); err != nil {
			fmt.Fprintf(stderr, "kvref eval: skipping %s: %v\n", p, err)
			continue
		}
		usable = append(usable, p)
	}
	rep, err := evaluate(m, text, usable, *ctx, *threads, stderr)
	if err != nil {
		return err
	}
	rep.Model, rep.Text = m.Source, source
	if *asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	fmt.Fprintf(stdout, "model %s, text %s: %d tokens in %d windows of up to %d, %d predictions\n\n",
		rep.Model, rep.Text, rep.Tokens, rep.Windows, rep.Window, rep.Predicted)
	width := 9 // the longest single type name, fp8-e4m3, and a space
	for _, r := range rep.Results {
		width = max(width, len(r.CacheType))
	}
	fmt.Fprintf(stdout, "%-*s %9s %6s %11s %10s %10s %10s %8s %10s\n", width, "cache", "B/token", "×f32", "perplexity", "Δppl", "mean KL", "max KL", "top-1", "max|Δlogit|")
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "%-*s %9d %6.3f %11.4f %+10.4f %10.2e %10.2e %7.2f%% %10.2e\n", width, r.CacheType, r.BytesPerToken, r.BytesVsF32,
			r.Perplexity, r.PerplexityDiff, r.MeanKL, r.MaxKL, 100*r.Top1Agreement, r.MaxAbsLogitErr)
	}
	return nil
}

// cachePair is the key and value types of one cache `kvref eval` measures.
type cachePair struct{ k, v quant.CacheType }

// String is "q8_0" when keys and values share the type, else "q8_0/f16".
func (p cachePair) String() string {
	if p.k == p.v {
		return p.k.String()
	}
	return p.k.String() + "/" + p.v.String()
}

// validate reports whether the model's rows fit both types.
func (p cachePair) validate(kvHeads, headDim int) error {
	if err := p.k.Validate(kvHeads, headDim); err != nil {
		return err
	}
	return p.v.Validate(kvHeads, headDim)
}

// evaluate runs the text, window by window, through one engine per cache and compares each
// cache's logits at every position with the f32 cache's (types[0] must be f32 for both).
func evaluate(m *model.Model, text string, types []cachePair, window, threads int, stderr io.Writer) (evalReport, error) {
	ids := m.Tokenizer.Encode(text, false)
	if window <= 0 {
		window = min(m.Config.Context, engine.DefaultContext)
	}
	if window < 2 {
		return evalReport{}, fmt.Errorf("the window must hold at least 2 tokens, got %d", window)
	}
	if len(ids) < 2 {
		return evalReport{}, fmt.Errorf("the text has %d tokens; need at least 2 to predict one", len(ids))
	}
	engines := make([]*engine.Engine, len(types))
	for i, t := range types {
		e, err := engine.New(m, engine.Config{Context: window, Threads: threads, KType: t.k, VType: t.v})
		if err != nil {
			return evalReport{}, err
		}
		defer e.Close()
		engines[i] = e
	}
	rep := evalReport{Tokens: len(ids), Window: window}
	res := make([]dtypeAccuracy, len(types))
	bos := m.Tokenizer.BOS()
	step := window
	if bos >= 0 {
		step = window - 1 // each window starts with BOS, then window-1 text tokens
	}
	var windows [][]int
	for start := 0; start < len(ids); start += step {
		w := ids[start:min(start+step, len(ids))]
		if bos >= 0 {
			w = append([]int{bos}, w...)
		}
		if len(w) >= 2 {
			windows = append(windows, w)
		}
	}
	rep.Windows = len(windows)
	bar := newProgress(stderr, len(windows)*len(types))
	for _, w := range windows {
		// Logits of every position for f32, then for each other type compared on the fly.
		base := make([][]float32, len(w))
		err := engines[0].AllLogits(w, 64, func(pos int, logits []float32) { base[pos] = append([]float32(nil), logits...) })
		if err != nil {
			return rep, err
		}
		bar.add(1)
		for i := range types {
			r := &res[i]
			score := func(pos int, logits []float32) {
				if pos+1 >= len(w) {
					return
				}
				lp := golden.LogSoftmax(logits)
				r.nll -= lp[w[pos+1]]
				lq := golden.LogSoftmax(base[pos])
				kl := 0.0
				for j := range lq {
					kl += math.Exp(lq[j]) * (lq[j] - lp[j])
					r.MaxAbsLogitErr = math.Max(r.MaxAbsLogitErr, math.Abs(float64(logits[j])-float64(base[pos][j])))
				}
				kl = math.Max(kl, 0)
				r.kl += kl
				r.MaxKL = math.Max(r.MaxKL, kl)
				if engine.Argmax(logits) == engine.Argmax(base[pos]) {
					r.agree++
				}
				r.n++
			}
			if i == 0 {
				for pos := range w {
					score(pos, base[pos])
				}
				continue
			}
			if err := engines[i].AllLogits(w, 64, score); err != nil {
				return rep, err
			}
			bar.add(1)
		}
	}
	bar.done()
	f32Bytes := engines[0].Pool.Config().BytesPerToken()
	for i, t := range types {
		r := &res[i]
		r.CacheType, r.CacheTypeK, r.CacheTypeV = t.String(), t.k.String(), t.v.String()
		r.BytesPerToken = engines[i].Pool.Config().BytesPerToken()
		r.BytesVsF32 = float64(r.BytesPerToken) / float64(f32Bytes)
		r.Perplexity = math.Exp(r.nll / float64(r.n))
		r.PerplexityDiff = r.Perplexity - res[0].Perplexity
		r.MeanKL = r.kl / float64(r.n)
		r.Top1Agreement = float64(r.agree) / float64(r.n)
	}
	rep.Predicted = res[0].n
	rep.Results = res
	return rep, nil
}
