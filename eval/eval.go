// Package eval measures what each K/V cache type costs in accuracy: a text runs through
// one engine per cache type, and every position's logits are compared with the f32 cache's
// (perplexity, KL divergence, top-1 agreement, largest logit error). The bytes saved follow
// the formula; the accuracy lost is measured here, per model.
package eval

import (
	"fmt"
	"math"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/logit"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/quant"
	"github.com/kvref/kvref/tokenizer"
)

// Result is what one cache type costs against the f32 cache: one row of `kvref eval`.
type Result struct {
	CacheType      string  `json:"cache_type"` // "q8_0", or "q8_0/f16" for keys and values of different types
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

// Report is a whole evaluation (the --json output of `kvref eval`).
type Report struct {
	Model     string   `json:"model"`
	Text      string   `json:"text"`
	Tokens    int      `json:"tokens"`
	Window    int      `json:"window"`
	Windows   int      `json:"windows"`
	Predicted int      `json:"predicted_tokens"`
	Results   []Result `json:"results"`
}

// Cache is the key and value types of one cache under evaluation.
type Cache struct{ K, V quant.CacheType }

// String is "q8_0" when keys and values share the type, else "K/V" such as "q8_0/f16".
func (c Cache) String() string {
	if c.K == c.V {
		return c.K.String()
	}
	return c.K.String() + "/" + c.V.String()
}

// Validate reports whether rows of kvHeads heads of headDim values fit both types.
func (c Cache) Validate(kvHeads, headDim int) error {
	if err := c.K.Validate(kvHeads, headDim); err != nil {
		return err
	}
	return c.V.Validate(kvHeads, headDim)
}

// CacheTypes runs the text, window by window, through one engine per cache type and
// compares each type's logits at every position with the f32 cache's (types[0] must be f32):
// perplexity, KL divergence, top-1 agreement and the largest logit error. window is the
// window length in tokens (0: the model's context, at most engine.DefaultContext); each
// window starts with BOS when the model has one. progress, when not nil, is called after
// each engine's pass over a window with the passes done and the total.
func CacheTypes(m *model.Model, text string, types []quant.CacheType, window, threads int, progress func(done, total int)) (Report, error) {
	caches := make([]Cache, len(types))
	for i, t := range types {
		caches[i] = Cache{t, t}
	}
	return Caches(m, text, caches, window, threads, progress)
}

// Caches is CacheTypes for caches whose keys and values may have different types
// (llama.cpp's -ctk q8_0 -ctv f16, say); caches[0] must be f32 for both.
func Caches(m *model.Model, text string, types []Cache, window, threads int, progress func(done, total int)) (Report, error) {
	if len(types) == 0 || types[0] != (Cache{quant.F32, quant.F32}) {
		return Report{}, fmt.Errorf("eval: the first cache type must be f32, the baseline")
	}
	ids := m.Tokenizer.Encode(text, false)
	if window <= 0 {
		window = min(m.Config.Context, engine.DefaultContext)
	}
	if window < 2 {
		return Report{}, fmt.Errorf("the window must hold at least 2 tokens, got %d", window)
	}
	if len(ids) < 2 {
		return Report{}, fmt.Errorf("the text has %d tokens; need at least 2 to predict one", len(ids))
	}
	engines := make([]*engine.Engine, len(types))
	for i, t := range types {
		e, err := engine.New(m, engine.Config{Context: window, Threads: threads, KType: t.K, VType: t.V})
		if err != nil {
			return Report{}, err
		}
		defer e.Close()
		engines[i] = e
	}
	rep := Report{Tokens: len(ids), Window: window}
	res := make([]Result, len(types))
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
	done, total := 0, len(windows)*len(types)
	tick := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	for _, w := range windows {
		// Logits of every position for f32, then for each other type compared on the fly.
		base := make([][]float32, len(w))
		err := engines[0].AllLogits(w, 64, func(pos int, logits []float32) { base[pos] = append([]float32(nil), logits...) })
		if err != nil {
			return rep, err
		}
		tick()
		for i := range types {
			r := &res[i]
			score := func(pos int, logits []float32) {
				if pos+1 >= len(w) {
					return
				}
				lp := logit.LogSoftmax(logits)
				r.nll -= lp[w[pos+1]]
				lq := logit.LogSoftmax(base[pos])
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
			tick()
		}
	}
	f32Bytes := engines[0].Pool().Config().BytesPerToken()
	for i, t := range types {
		r := &res[i]
		r.CacheType, r.CacheTypeK, r.CacheTypeV = t.String(), t.K.String(), t.V.String()
		r.BytesPerToken = engines[i].Pool().Config().BytesPerToken()
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

// TokenLogprob is one token of a text as `kvref eval --per-token` prints it: its position,
// id and text, and its log-probability given the tokens before it (the float64
// log-softmax of the raw logits, as kvref serve's logprobs).
type TokenLogprob struct {
	Pos     int     `json:"pos"`
	ID      int     `json:"id"`
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

// PerToken is the log-probability of every token of text after the first, in one window:
// the text tokenized as kvref serve tokenizes a text prompt (BOS when the model adds one,
// special tokens parsed), run through an engine with a cache of c's types, its logits
// taken position by position (Engine.AllLogits). These are the values kvref serve returns
// for the same text with echo and logprobs, or prompt_logprobs, bit for bit.
func PerToken(m *model.Model, text string, c Cache, threads int) ([]TokenLogprob, error) {
	ids := m.Tokenizer.EncodeSpecial(text, tokenizer.Prompt)
	if len(ids) < 2 {
		return nil, fmt.Errorf("the text has %d tokens; need at least 2 to predict one", len(ids))
	}
	if len(ids) > m.Config.Context {
		return nil, fmt.Errorf("the text has %d tokens, more than the model's context of %d: --per-token scores one window", len(ids), m.Config.Context)
	}
	e, err := engine.New(m, engine.Config{Context: len(ids), Threads: threads, KType: c.K, VType: c.V})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	out := make([]TokenLogprob, 0, len(ids)-1)
	err = e.AllLogits(ids, 64, func(pos int, logits []float32) {
		if pos+1 < len(ids) {
			next := ids[pos+1]
			out = append(out, TokenLogprob{Pos: pos + 1, ID: next, Token: string(m.Tokenizer.Piece(next)), Logprob: logit.LogSoftmax(logits)[next]})
		}
	})
	return out, err
}
