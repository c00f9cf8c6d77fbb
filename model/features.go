package model

import "fmt"

// Features names what the configuration has beyond the plain Llama block, in the words
// kvref inspect prints: "tied output", "q/k/v biases", "q/k norm", "sliding window N", and
// Gemma's block. A plain Llama configuration has none.
func (c Config) Features() []string {
	var out []string
	if c.Tied {
		out = append(out, "tied output")
	}
	if c.QKVBias {
		out = append(out, "q/k/v biases")
	}
	if c.QKNorm {
		out = append(out, "q/k norm")
	}
	if c.SlidingWindow > 0 {
		if n := c.SlidingCount(); n < c.Layers {
			out = append(out, fmt.Sprintf("sliding window %d on %d of %d layers", c.SlidingWindow, n, c.Layers))
		} else {
			out = append(out, fmt.Sprintf("sliding window %d", c.SlidingWindow))
		}
	}
	if c.LocalRope != nil {
		out = append(out, fmt.Sprintf("sliding layers' rope base %g", c.LocalRope.Base))
	}
	if c.EmbedScale {
		out = append(out, "embedding ×√dim")
	}
	if c.PostNorms {
		out = append(out, "post-norms")
	}
	if c.Activation == ActivationGELUTanh {
		out = append(out, "GELU-tanh gate")
	}
	if c.QueryScalar > 0 {
		out = append(out, fmt.Sprintf("query scale 1/√%g", c.QueryScalar))
	}
	if c.AttnSoftCap > 0 {
		out = append(out, fmt.Sprintf("attention soft-cap %g", c.AttnSoftCap))
	}
	if c.FinalSoftCap > 0 {
		out = append(out, fmt.Sprintf("logit soft-cap %g", c.FinalSoftCap))
	}
	return out
}
