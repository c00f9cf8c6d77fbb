package model

import (
	"math"

	"github.com/kvref/kvref/internal/kernels"
)

// newRoPEs builds the rotary embedding of every layer (Config.LayerSpec): layers with the
// same parameters share one.
func newRoPEs(c Config, freqFactors []float32) []*kernels.RoPE {
	out := make([]*kernels.RoPE, c.Layers)
	made := map[Rope]*kernels.RoPE{}
	for l := range out {
		p := c.LayerSpec(l).Rope
		if made[p] == nil {
			made[p] = newRoPE(c, p, freqFactors)
		}
		out[l] = made[p]
	}
	return out
}

// newRoPE builds one rotary embedding of the model: base frequencies, then the scaling,
// then GGUF's per-frequency divisors (rope_freqs.weight) when the file has them.
func newRoPE(c Config, p Rope, freqFactors []float32) *kernels.RoPE {
	r := kernels.NewRoPE(c.RopeStyle, c.RopeDims, p.Base)
	s := p.Scaling
	switch s.Type {
	case "linear":
		for i := range r.InvFreq {
			r.InvFreq[i] /= s.Factor
		}
	case "llama3":
		// As llama.cpp computes it: float32 per-frequency divisors (what its converter stores
		// in rope_freqs.weight), so Hugging Face and GGUF copies of a model agree bit for bit.
		for i, d := range Llama3RopeFactors(s, p.Base, c.RopeDims) {
			r.InvFreq[i] /= float64(d)
		}
	}
	if s.Type == "llama3" {
		return r // the divisors are applied already
	}
	for i, d := range freqFactors {
		if i < len(r.InvFreq) {
			r.InvFreq[i] /= float64(d)
		}
	}
	return r
}

// Llama3RopeFactors are the per-frequency divisors of Llama 3.1's rope_scaling, as
// llama.cpp's converter stores them in rope_freqs.weight (and as Hugging Face's
// _compute_llama3_parameters applies them): the factor for long wavelengths, 1 for short
// ones, a blend between.
func Llama3RopeFactors(sc RopeScaling, base float64, dims int) []float32 {
	low := float64(sc.OriginalContext) / sc.LowFreqFactor
	high := float64(sc.OriginalContext) / sc.HighFreqFactor
	out := make([]float32, dims/2)
	for i := range out {
		freq := math.Pow(base, -float64(2*i)/float64(dims))
		wavelen := 2 * math.Pi / freq
		switch {
		case wavelen < high:
			out[i] = 1
		case wavelen > low:
			out[i] = float32(sc.Factor)
		default:
			smooth := (float64(sc.OriginalContext)/wavelen - sc.LowFreqFactor) / (sc.HighFreqFactor - sc.LowFreqFactor)
			out[i] = float32(1 / ((1-smooth)/sc.Factor + smooth))
		}
	}
	return out
}
