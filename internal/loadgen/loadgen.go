// Package loadgen sends a serving workload to an OpenAI-compatible server (kvref serve,
// llama.cpp's llama-server, vLLM) and measures it as vLLM's benchmarks/benchmark_serving.py
// does, under the same names: request and output-token throughput, time to first token
// (TTFT), time per output token after the first (TPOT) and inter-token latency (ITL),
// each as mean, median and 99th percentile.
//
// The workload is the shared-system-prompt case: every request's prompt is the same
// SharedTokens token ids followed by UniqueTokens ids of its own, sent as token ids to
// /v1/completions with max_tokens OutputTokens, ignore_eos and stream, by Concurrency
// clients at once (each takes the next request as soon as its last one ends).
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kvref/kvref/internal/rng"
)

// Config is a workload and where to send it.
type Config struct {
	URL          string // the server: a base URL (http://127.0.0.1:8080) or the full /v1/completions URL
	Model        string // the request's "model" field (empty: left out)
	Concurrency  int    // clients sending at once, C
	Requests     int    // requests in all (0: Concurrency)
	SharedTokens int    // token ids every prompt starts with, S
	UniqueTokens int    // token ids of each prompt's own, after the shared ones
	OutputTokens int    // tokens generated per request, G (max_tokens, with ignore_eos)
	// Vocab bounds the prompts' token ids: they are drawn from [3, Vocab), skipping the
	// usual special ids 0, 1 and 2.
	Vocab int
	Seed  uint64 // the prompts' seed: the same seed gives the same prompts
	// Client sends the requests (nil: a new connection for every request).
	Client *http.Client
}

// Endpoint returns the completions URL of c.URL: the URL itself when its path already
// names an endpoint, else its base with /v1/completions.
func (c Config) Endpoint() (string, error) {
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("loadgen: %q is not a server URL such as http://127.0.0.1:8080", c.URL)
	}
	if p := strings.TrimRight(u.Path, "/"); p == "" || p == "/v1" {
		u.Path = "/v1/completions"
	}
	return u.String(), nil
}

// Prompts returns the workload's prompts: n of them, each the SharedTokens shared ids and
// then UniqueTokens ids of its own.
func (c Config) Prompts(n int) [][]int {
	ids := func(r *rng.SplitMix64, k int) []int {
		p := make([]int, k)
		for i := range p {
			p[i] = 3 + int(r.Uint64()%uint64(c.Vocab-3))
		}
		return p
	}
	shared := ids(rng.New(c.Seed), c.SharedTokens)
	out := make([][]int, n)
	for i := range out {
		out[i] = append(slices.Clone(shared), ids(rng.New(c.Seed+1+uint64(i)), c.UniqueTokens)...)
	}
	return out
}

func (c Config) validate() error {
	switch {
	case c.Concurrency < 1:
		return fmt.Errorf("loadgen: concurrency %d: give at least 1 client", c.Concurrency)
	case c.Requests < 0:
		return fmt.Errorf("loadgen: %d requests: give at least 1 (or 0: one per client)", c.Requests)
	case c.SharedTokens < 0 || c.UniqueTokens < 0 || c.SharedTokens+c.UniqueTokens < 1:
		return fmt.Errorf("loadgen: a prompt of %d shared and %d own tokens: give at least one token", c.SharedTokens, c.UniqueTokens)
	case c.OutputTokens < 1:
		return fmt.Errorf("loadgen: %d output tokens: give at least 1", c.OutputTokens)
	case c.Vocab < 4:
		return fmt.Errorf("loadgen: vocabulary bound %d: the prompts' ids are drawn from [3, vocab), give at least 4", c.Vocab)
	}
	return nil
}

// Outcome is what one request measured, as benchmark_serving.py's RequestFuncOutput.
type Outcome struct {
	Success      bool      `json:"success"`
	Error        string    `json:"error,omitempty"`
	PromptLen    int       `json:"prompt_len"`
	OutputTokens int       `json:"output_tokens"` // usage.completion_tokens when sent, else the streamed chunks
	TTFT         float64   `json:"ttft"`          // seconds from sending to the first chunk
	Latency      float64   `json:"latency"`       // seconds from sending to the end of the stream
	ITL          []float64 `json:"itl"`           // seconds between consecutive chunks
}

// Send runs one streamed completion of prompt and measures it the way benchmark_serving.py
// does: every server-sent event with choices is a token's arrival (the first ends the
// TTFT, each later one adds its gap to the ITL), and usage.completion_tokens, when the
// server sends it, is the output length. One difference: when the stream has one more
// event than usage.completion_tokens and the last has empty text and a finish_reason, it
// is the closing event llama-server sends after the last token, not a token, and is not
// counted (benchmark_serving.py would add a gap of about 0 to the ITL for it). A token
// whose text is empty (kvref holds back the bytes of an unfinished character) still counts.
func Send(ctx context.Context, client *http.Client, endpoint, model string, prompt []int, outputTokens int) Outcome {
	out := Outcome{PromptLen: len(prompt)}
	body := map[string]any{"prompt": prompt, "max_tokens": outputTokens, "temperature": 0, "stream": true,
		"ignore_eos": true, "stream_options": map[string]any{"include_usage": true}}
	if model != "" {
		body["model"] = model
	}
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		out.Error = err.Error()
		return out
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		out.Error = fmt.Sprintf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(b)))
		return out
	}
	chunks, usageTokens := 0, -1
	lastClosing := false // the last event with choices had empty text and a finish reason
	var last time.Time
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	// The stream ends with data: [DONE], or (llama.cpp's llama-server of early 2025) just ends.
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		payload, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		payload = strings.TrimSpace(payload)
		if payload == "[DONE]" {
			break
		}
		var ev struct {
			Choices []struct {
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(payload), &ev); err != nil {
			out.Error = fmt.Sprintf("a server-sent event is not JSON: %v: %.200s", err, payload)
			return out
		}
		if len(ev.Error) > 0 && string(ev.Error) != "null" {
			out.Error = fmt.Sprintf("the stream ended with an error: %.500s", ev.Error)
			return out
		}
		now := time.Now()
		if len(ev.Choices) > 0 {
			lastClosing = closing(ev.Choices[0].Text, ev.Choices[0].FinishReason)
			if chunks == 0 {
				out.TTFT = now.Sub(start).Seconds()
			} else {
				out.ITL = append(out.ITL, now.Sub(last).Seconds())
			}
			last = now
			chunks++
		}
		if ev.Usage != nil && ev.Usage.CompletionTokens > 0 {
			usageTokens = ev.Usage.CompletionTokens
		}
	}
	out.Latency = time.Since(start).Seconds()
	if err := sc.Err(); err != nil {
		out.Error = err.Error()
		return out
	}
	if chunks == 0 {
		out.Error = "the stream carried no completion chunk"
		return out
	}
	if lastClosing && usageTokens > 0 && chunks == usageTokens+1 {
		// llama-server's closing event: one more event than tokens, and the last one empty.
		chunks--
		out.ITL = out.ITL[:len(out.ITL)-1]
	}
	out.OutputTokens = chunks
	if usageTokens > 0 {
		out.OutputTokens = usageTokens
	}
	out.Success = true
	return out
}

// closing reports whether a streamed choice has the shape of a closing event without a
// token: empty text and a finish reason.
func closing(text string, finish *string) bool {
	return text == "" && finish != nil && *finish != ""
}

// Run sends the workload and returns its report. The prompts are c.Prompts(requests);
// Concurrency clients each send the next unsent one when their last one ends, so that
// Concurrency requests are in flight until the line runs out.
func Run(ctx context.Context, c Config) (Report, error) {
	if err := c.validate(); err != nil {
		return Report{}, err
	}
	endpoint, err := c.Endpoint()
	if err != nil {
		return Report{}, err
	}
	n := c.Requests
	if n == 0 {
		n = c.Concurrency
	}
	client := c.Client
	if client == nil {
		// A connection per request: llama-server closes idle keep-alive connections, and a
		// POST on one it has closed fails.
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	}
	prompts := c.Prompts(n)
	outcomes := make([]Outcome, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	start := time.Now()
	var wg sync.WaitGroup
	for range min(c.Concurrency, n) {
		wg.Go(func() {
			for i := range next {
				outcomes[i] = Send(ctx, client, endpoint, c.Model, prompts[i], c.OutputTokens)
			}
		})
	}
	wg.Wait()
	r := Summarize(outcomes, time.Since(start).Seconds())
	r.Endpoint, r.Concurrency, r.SharedTokens, r.UniqueTokens, r.OutputTokensAsked = endpoint, c.Concurrency, c.SharedTokens, c.UniqueTokens, c.OutputTokens
	if r.Completed == 0 {
		return r, fmt.Errorf("loadgen: none of %d requests to %s succeeded; the first error: %s", n, endpoint, r.Errors[0])
	}
	return r, ctx.Err()
}

// Report is a run's result, under the names benchmark_serving.py gives them in its JSON
// result (times in milliseconds where the name ends in _ms, percentiles as numpy's
// linear interpolation).
type Report struct {
	Endpoint          string  `json:"endpoint"`
	Concurrency       int     `json:"max_concurrency"`
	SharedTokens      int     `json:"shared_prompt_tokens"`
	UniqueTokens      int     `json:"unique_prompt_tokens"`
	OutputTokensAsked int     `json:"output_len"`
	Duration          float64 `json:"duration"` // seconds from the first request sent to the last one ended
	Completed         int     `json:"completed"`
	Failed            int     `json:"failed"`
	TotalInputTokens  int     `json:"total_input_tokens"`
	TotalOutputTokens int     `json:"total_output_tokens"`
	RequestThroughput float64 `json:"request_throughput"`     // completed requests per second
	OutputThroughput  float64 `json:"output_throughput"`      // output tokens per second
	TotalThroughput   float64 `json:"total_token_throughput"` // input and output tokens per second

	MeanTTFTms   float64 `json:"mean_ttft_ms"`
	MedianTTFTms float64 `json:"median_ttft_ms"`
	StdTTFTms    float64 `json:"std_ttft_ms"`
	P99TTFTms    float64 `json:"p99_ttft_ms"`
	MeanTPOTms   float64 `json:"mean_tpot_ms"`
	MedianTPOTms float64 `json:"median_tpot_ms"`
	StdTPOTms    float64 `json:"std_tpot_ms"`
	P99TPOTms    float64 `json:"p99_tpot_ms"`
	MeanITLms    float64 `json:"mean_itl_ms"`
	MedianITLms  float64 `json:"median_itl_ms"`
	StdITLms     float64 `json:"std_itl_ms"`
	P99ITLms     float64 `json:"p99_itl_ms"`
	MeanE2ELms   float64 `json:"mean_e2el_ms"`
	MedianE2ELms float64 `json:"median_e2el_ms"`
	StdE2ELms    float64 `json:"std_e2el_ms"`
	P99E2ELms    float64 `json:"p99_e2el_ms"`

	Errors []string `json:"errors,omitempty"` // the failed requests' errors, distinct ones
}

// Summarize computes a Report from the outcomes of a run that took duration seconds, as
// benchmark_serving.py's calculate_metrics does: only successful requests count; a
// request's TPOT is (latency − TTFT) / (output tokens − 1), for requests of more than one
// output token; the ITL pools every gap of every request.
func Summarize(outcomes []Outcome, duration float64) Report {
	r := Report{Duration: duration}
	var ttft, tpot, itl, e2el []float64
	seen := map[string]bool{}
	for _, o := range outcomes {
		if !o.Success {
			r.Failed++
			if !seen[o.Error] {
				seen[o.Error] = true
				r.Errors = append(r.Errors, o.Error)
			}
			continue
		}
		r.Completed++
		r.TotalInputTokens += o.PromptLen
		r.TotalOutputTokens += o.OutputTokens
		ttft = append(ttft, o.TTFT)
		e2el = append(e2el, o.Latency)
		if o.OutputTokens > 1 {
			tpot = append(tpot, (o.Latency-o.TTFT)/float64(o.OutputTokens-1))
		}
		itl = append(itl, o.ITL...)
	}
	if duration > 0 {
		r.RequestThroughput = float64(r.Completed) / duration
		r.OutputThroughput = float64(r.TotalOutputTokens) / duration
		r.TotalThroughput = float64(r.TotalInputTokens+r.TotalOutputTokens) / duration
	}
	ms := func(v []float64) (mean, median, std, p99 float64) {
		return 1000 * Mean(v), 1000 * Percentile(v, 50), 1000 * Std(v), 1000 * Percentile(v, 99)
	}
	r.MeanTTFTms, r.MedianTTFTms, r.StdTTFTms, r.P99TTFTms = ms(ttft)
	r.MeanTPOTms, r.MedianTPOTms, r.StdTPOTms, r.P99TPOTms = ms(tpot)
	r.MeanITLms, r.MedianITLms, r.StdITLms, r.P99ITLms = ms(itl)
	r.MeanE2ELms, r.MedianE2ELms, r.StdE2ELms, r.P99E2ELms = ms(e2el)
	return r
}

// Mean is the arithmetic mean of v, 0 for none (numpy.mean of the values, or 0 as
// benchmark_serving.py writes it for an empty list).
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Std is the population standard deviation of v (numpy.std), 0 for none.
func Std(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m, s := Mean(v), 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)))
}

// Percentile is numpy.percentile(v, p) with its default linear interpolation: the value
// at rank p/100 · (n−1) of the sorted values, interpolated between its neighbours; 0 for
// none.
func Percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (rank-float64(lo))*(s[hi]-s[lo])
}

// WriteText writes the report as benchmark_serving.py prints it.
func (r Report) WriteText(w io.Writer) {
	line := func(name string, format string, v any) { fmt.Fprintf(w, "%-40s "+format+"\n", name, v) }
	section := func(title string) {
		pad := 50 - len(title)
		fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("-", pad/2), title, strings.Repeat("-", pad-pad/2))
	}
	fmt.Fprintf(w, "%s\n", "============ Serving Benchmark Result ============")
	line("Endpoint:", "%s", r.Endpoint)
	line("Maximum request concurrency:", "%d", r.Concurrency)
	line("Prompt (shared + own tokens):", "%s", fmt.Sprintf("%d + %d", r.SharedTokens, r.UniqueTokens))
	line("Successful requests:", "%d", r.Completed)
	if r.Failed > 0 {
		line("Failed requests:", "%d", r.Failed)
	}
	line("Benchmark duration (s):", "%.2f", r.Duration)
	line("Total input tokens:", "%d", r.TotalInputTokens)
	line("Total generated tokens:", "%d", r.TotalOutputTokens)
	line("Request throughput (req/s):", "%.2f", r.RequestThroughput)
	line("Output token throughput (tok/s):", "%.2f", r.OutputThroughput)
	line("Total Token throughput (tok/s):", "%.2f", r.TotalThroughput)
	latency := func(title, abbr string, mean, median, p99 float64) {
		section(title)
		line("Mean "+abbr+" (ms):", "%.2f", mean)
		line("Median "+abbr+" (ms):", "%.2f", median)
		line("P99 "+abbr+" (ms):", "%.2f", p99)
	}
	latency("Time to First Token", "TTFT", r.MeanTTFTms, r.MedianTTFTms, r.P99TTFTms)
	latency("Time per Output Token (excl. 1st token)", "TPOT", r.MeanTPOTms, r.MedianTPOTms, r.P99TPOTms)
	latency("Inter-token Latency", "ITL", r.MeanITLms, r.MedianITLms, r.P99ITLms)
	fmt.Fprintf(w, "%s\n", strings.Repeat("=", 50))
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}
