package eval

import (
	"fmt"
	"io"
)

// WriteTable writes the report for people, as kvref eval prints it: the text and its
// windows, then one row per cache type with its bytes per token, perplexity, KL and top-1
// agreement against f32.
func (r Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "model %s, text %s: %d tokens in %d windows of up to %d, %d predictions\n\n",
		r.Model, r.Text, r.Tokens, r.Windows, r.Window, r.Predicted)
	width := 9 // the longest single type name, fp8-e4m3, and a space
	for _, c := range r.Results {
		width = max(width, len(c.CacheType))
	}
	fmt.Fprintf(w, "%-*s %9s %6s %11s %10s %10s %10s %8s %10s\n", width, "cache", "B/token", "×f32", "perplexity", "Δppl", "mean KL", "max KL", "top-1", "max|Δlogit|")
	for _, c := range r.Results {
		fmt.Fprintf(w, "%-*s %9d %6.3f %11.4f %+10.4f %10.2e %10.2e %7.2f%% %10.2e\n", width, c.CacheType, c.BytesPerToken, c.BytesVsF32,
			c.Perplexity, c.PerplexityDiff, c.MeanKL, c.MaxKL, 100*c.Top1Agreement, c.MaxAbsLogitErr)
	}
}
