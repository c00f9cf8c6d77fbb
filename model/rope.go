package model

import (
	"math"

	"github.com/kvref/kvref/internal/kernels"
)

// newRoPE builds the model's rotary embedding: base frequencies, then the configured
// scaling, then GGUF's per-frequency divisors (rope_freqs.weight) when the file has them.
func newRoPE(c Config, freqFactors []float32) *kernels.RoPE {
	r := kernels.NewRoPE(c.RopeStyle, c.RopeDims, c.RopeBase)
	s := c.RopeScaling
	switch s.Type {
	case "linear":
		for i := range r.InvFreq {
			r.InvFreq[i] /= s.Factor
		}
	case "llama3":
		// Hugging Face's _compute_llama3_parameters: long wavelengths are slowed by the
		// factor, short ones kept, and the band between blends the two.
		lowWavelen := float64(s.OriginalContext) / s.LowFreqFactor
		highWavelen := float64(s.OriginalContext) / s.HighFreqFactor
		for i, f := range r.InvFreq {
			wavelen := 2 * math.Pi / f
			switch {
			case wavelen < highWavelen:
			case wavelen > lowWavelen:
				r.InvFreq[i] = f / s.Factor
			default:
				smooth := (float64(s.OriginalContext)/wavelen - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
				r.InvFreq[i] = (1-smooth)*f/s.Factor + smooth*f
			}
		}
	}
	for i, d := range freqFactors {
		if i < len(r.InvFreq) {
			r.InvFreq[i] /= float64(d)
		}
	}
	return r
}
