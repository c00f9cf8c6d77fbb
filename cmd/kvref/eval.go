package main

import (
	"encoding/json"
	"fmt"
	"github.com/kvref/kvref/internal/logit"
	"io"
	"math"
	"os"
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
	CacheType      string  `json:"cache_type"`
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
	ctx := fs.Int("c", 0, "window length in tokens (0: the model's context, at most 4096)")
	threads := fs.Int("t", 0, "threads (0: one per core)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kvref eval [-m MODEL] [--file TEXT] [--cache-dtype T,...] [-c N] [--json]")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	types := []quant.CacheType{quant.F32}
	if *dtypes == "all" {
		types = quant.CacheTypes()
	} else {
		for _, name := range strings.Split(*dtypes, ",") {
			t, err := quant.ParseCacheType(name)
			if err != nil {
				return err
			}
			if t != quant.F32 {
				types = append(types, t)
			}
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
	var usable []quant.CacheType
	for _, t := range types {
		if err := t.Validate(m.Config.KVHeads, m.Config.HeadDim); err != nil {
			fmt.Fprintf(stderr, "kvref eval: skipping %s: %v\n", t, err)
			continue
		}
		usable = append(usable, t)
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
	fmt.Fprintf(stdout, "%-9s %9s %6s %11s %10s %10s %10s %8s %10s\n", "cache", "B/token", "×f32", "perplexity", "Δppl", "mean KL", "max KL", "top-1", "max|Δlogit|")
	for _, r := range rep.Results {
		fmt.Fprintf(stdout, "%-9s %9d %6.3f %11.4f %+10.4f %10.2e %10.2e %7.2f%% %10.2e\n", r.CacheType, r.BytesPerToken, r.BytesVsF32,
			r.Perplexity, r.PerplexityDiff, r.MeanKL, r.MaxKL, 100*r.Top1Agreement, r.MaxAbsLogitErr)
	}
	return nil
}

// evaluate runs the text, window by window, through one engine per cache type and compares
// each type's logits at every position with the f32 cache's (types[0] must be f32).
func evaluate(m *model.Model, text string, types []quant.CacheType, window, threads int, stderr io.Writer) (evalReport, error) {
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
		e, err := engine.New(m, engine.Config{Context: window, Threads: threads, KType: t, VType: t})
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
				if logit.Argmax(logits) == logit.Argmax(base[pos]) {
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
		r.CacheType = t.String()
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
