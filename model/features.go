package model

import "fmt"

// Features names what the configuration has beyond the plain Llama block, in the words
// kvref inspect prints: "tied output", "q/k/v biases", "q/k norm", "sliding window N". A
// plain Llama configuration has none.
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
		out = append(out, fmt.Sprintf("sliding window %d", c.SlidingWindow))
	}
	return out
}
