package benchmark

import (
	"fmt"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/model"
)

// Meter measures the two rates llama.cpp's llama-bench reports, the way llama-bench
// measures them, on one engine: Generation is its tg test (-p 0 -n N: N tokens decoded one
// at a time from an empty cache, starting at position 0), Prompt its pp test (-p N -n 0:
// one N-token prompt processed from an empty cache in one batch, logits for the last
// token only). Each call starts from an empty cache and fresh random tokens, so no prefix
// is reused.
type Meter struct {
	e *engine.Engine
	r *rng.SplitMix64
}

// NewMeter returns a Meter for sequences of up to ctx tokens. Close it when done.
func NewMeter(m *model.Model, s Setup, ctx int) (*Meter, error) {
	if ctx > m.Config.Context {
		return nil, fmt.Errorf("benchmark: %d tokens do not fit in the model's context of %d", ctx, m.Config.Context)
	}
	e, err := engine.New(m, engine.Config{Context: ctx, BlockSize: s.BlockSize, Threads: s.Threads, KType: s.KType, VType: s.VType})
	if err != nil {
		return nil, err
	}
	return &Meter{e: e, r: rng.New(512)}, nil
}

// Close stops the meter's engine.
func (mt *Meter) Close() { mt.e.Close() }

// Generation returns the tokens per second of n batch-1 forward passes at positions 0 to
// n-1: one token of prompt (its forward pass gives the first generated token), then n-1
// decode steps, timed from submission to the last logits.
func (mt *Meter) Generation(n int) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("benchmark: a generation test needs at least one token, got %d", n)
	}
	mt.e.Pool().Flush()
	m := mt.e.Model()
	req := engine.Request{Prompt: randomPrompt(mt.r, m.Config.Vocab, 1), MaxTokens: n, IgnoreEOS: true}
	res, err := mt.e.GenerateWith(engine.SchedulerConfig{ReuseLogits: true}, req, func(engine.Token) error { return nil })
	if err != nil {
		return 0, err
	}
	if got := len(res.Outputs[0]); got != n {
		return 0, fmt.Errorf("benchmark: the generation test produced %d tokens, want %d", got, n)
	}
	return float64(n) / (res.Prefill + res.Decode).Seconds(), nil
}

// Prompt returns the tokens per second of one n-token prefill from an empty cache, all n
// tokens in one forward pass, timed from submission to the first logits.
func (mt *Meter) Prompt(n int) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("benchmark: a prompt test needs at least one token, got %d", n)
	}
	mt.e.Pool().Flush()
	m := mt.e.Model()
	req := engine.Request{Prompt: randomPrompt(mt.r, m.Config.Vocab, n), MaxTokens: 1, IgnoreEOS: true}
	res, err := mt.e.GenerateWith(engine.SchedulerConfig{MaxBatchTokens: n, ReuseLogits: true}, req, func(engine.Token) error { return nil })
	if err != nil {
		return 0, err
	}
	if res.PrefixHitTokens != 0 {
		return 0, fmt.Errorf("benchmark: the prompt test reused %d cached tokens", res.PrefixHitTokens)
	}
	return float64(n) / res.Prefill.Seconds(), nil
}
