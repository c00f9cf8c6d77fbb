package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPercentileIsNumpys: numpy.percentile's linear interpolation, checked against values
// numpy gives (np.percentile([1, 2, 3, 4], 99) = 3.97, [..., 50] = 2.5).
func TestPercentileIsNumpys(t *testing.T) {
	t.Parallel()

	v := []float64{4, 1, 3, 2}
	require.InDelta(t, 3.97, Percentile(v, 99), 1e-12)
	require.InDelta(t, 2.5, Percentile(v, 50), 1e-12)
	require.Equal(t, 1.0, Percentile(v, 0))
	require.Equal(t, 4.0, Percentile(v, 100))
	require.Equal(t, 7.0, Percentile([]float64{7}, 99))
	require.Equal(t, 0.0, Percentile(nil, 99))
	require.Equal(t, []float64{4, 1, 3, 2}, v, "the input is not sorted in place")
	require.InDelta(t, 1.118033988749895, Std(v), 1e-12, "np.std([1, 2, 3, 4])")
	require.Equal(t, 2.5, Mean(v))
}

// TestSummarize: the metrics of benchmark_serving.py's calculate_metrics from outcomes
// worked out by hand; failed requests count only as failures.
func TestSummarize(t *testing.T) {
	t.Parallel()

	outs := []Outcome{
		{Success: true, PromptLen: 10, OutputTokens: 3, TTFT: 0.1, Latency: 0.3, ITL: []float64{0.1, 0.1}},
		{Success: true, PromptLen: 12, OutputTokens: 5, TTFT: 0.2, Latency: 1.0, ITL: []float64{0.2, 0.2, 0.2, 0.2}},
		{Success: true, PromptLen: 11, OutputTokens: 1, TTFT: 0.4, Latency: 0.4},
		{Error: "HTTP 429", PromptLen: 10},
	}
	r := Summarize(outs, 2)
	require.Equal(t, 3, r.Completed)
	require.Equal(t, 1, r.Failed)
	require.Equal(t, []string{"HTTP 429"}, r.Errors)
	require.Equal(t, 33, r.TotalInputTokens)
	require.Equal(t, 9, r.TotalOutputTokens)
	require.InDelta(t, 1.5, r.RequestThroughput, 1e-12)
	require.InDelta(t, 4.5, r.OutputThroughput, 1e-12)
	require.InDelta(t, 21, r.TotalThroughput, 1e-12)
	require.InDelta(t, 1000*(0.1+0.2+0.4)/3, r.MeanTTFTms, 1e-9)
	require.InDelta(t, 200, r.MedianTTFTms, 1e-9)
	// TPOT: (0.3-0.1)/2 = 0.1 and (1.0-0.2)/4 = 0.2; the one-token request has none.
	require.InDelta(t, 150, r.MeanTPOTms, 1e-9)
	require.InDelta(t, 1000*(0.1+0.99*0.1), r.P99TPOTms, 1e-9)
	// ITL pools all six gaps.
	require.InDelta(t, 1000*1.0/6, r.MeanITLms, 1e-9)
	require.InDelta(t, 200, r.MedianITLms, 1e-9)
	require.InDelta(t, 1000*(0.3+1.0+0.4)/3, r.MeanE2ELms, 1e-9)

	var b strings.Builder
	r.WriteText(&b)
	for _, want := range []string{"Successful requests:                     3\n", "Failed requests:                         1\n",
		"Output token throughput (tok/s):         4.50\n", "Median TTFT (ms):                        200.00\n",
		"-----Time per Output Token (excl. 1st token)------\n", "---------------Time to First Token----------------\n"} {
		require.Contains(t, b.String(), want)
	}
}

// TestPromptsShareThePrefix: every prompt is the same S ids, then U of its own, all in
// [3, vocab); the same seed gives the same prompts.
func TestPromptsShareThePrefix(t *testing.T) {
	t.Parallel()

	c := Config{SharedTokens: 20, UniqueTokens: 5, Vocab: 50, Seed: 7}
	ps := c.Prompts(3)
	require.Len(t, ps, 3)
	for _, p := range ps {
		require.Len(t, p, 25)
		require.Equal(t, ps[0][:20], p[:20])
		for _, id := range p {
			require.True(t, id >= 3 && id < 50, "id %d", id)
		}
	}
	require.NotEqual(t, ps[0][20:], ps[1][20:])
	require.NotEqual(t, ps[1][20:], ps[2][20:])
	require.Equal(t, ps, c.Prompts(3))
}

func TestEndpoint(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]string{
		"http://127.0.0.1:8080":                    "http://127.0.0.1:8080/v1/completions",
		"http://127.0.0.1:8080/":                   "http://127.0.0.1:8080/v1/completions",
		"http://h:1/v1":                            "http://h:1/v1/completions",
		"http://h:1/v1/completions":                "http://h:1/v1/completions",
		"https://example.com/proxy/v1/completions": "https://example.com/proxy/v1/completions",
	} {
		got, err := Config{URL: in}.Endpoint()
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
	_, err := Config{URL: "127.0.0.1:8080"}.Endpoint()
	require.ErrorContains(t, err, "not a server URL")
}

// fakeServer streams n tokens per request, gap apart, in llama-server's shape (a closing
// event with empty text and a finish reason, then usage) or kvref's (the last token carries
// the finish reason; usage in its own event without choices). It records the bodies and
// the most requests in flight at once.
type fakeServer struct {
	gap             time.Duration
	llamaShape      bool
	mu              sync.Mutex
	bodies          []map[string]any
	inFlight, peak  int
	failEvery, seen int
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.seen++
	fail := f.failEvery > 0 && f.seen%f.failEvery == 0
	f.inFlight++
	f.peak = max(f.peak, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	if fail {
		http.Error(w, `{"error": {"message": "queue full"}}`, http.StatusTooManyRequests)
		return
	}
	n := int(body["max_tokens"].(float64))
	fl := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range n {
		time.Sleep(f.gap)
		finish := "null"
		text := fmt.Sprintf("t%d", i)
		if i == n-1 && !f.llamaShape {
			finish = `"length"`
			text = "" // kvref holding back an unfinished character: still a token
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"%s\",\"finish_reason\":%s}]}\n\n", text, finish)
		fl.Flush()
	}
	if f.llamaShape {
		fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],\"usage\":{\"completion_tokens\":%d}}\n\n", n)
	} else {
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":%d}}\n\n", n)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestRunAgainstAServer: the requests carry the workload (token ids, max_tokens,
// ignore_eos, stream), no more than C are in flight, and the timings follow the stream:
// G tokens, G-1 gaps each, the closing event of llama-server's shape counted as no token.
func TestRunAgainstAServer(t *testing.T) {
	t.Parallel()

	for _, llama := range []bool{false, true} {
		f := &fakeServer{gap: 5 * time.Millisecond, llamaShape: llama}
		srv := httptest.NewServer(f)
		r, err := Run(context.Background(), Config{URL: srv.URL, Concurrency: 3, Requests: 7, SharedTokens: 8, UniqueTokens: 2,
			OutputTokens: 4, Vocab: 100, Model: "m"})
		srv.Close()
		require.NoError(t, err)
		require.Equal(t, 7, r.Completed)
		require.Equal(t, 0, r.Failed)
		require.Equal(t, 28, r.TotalOutputTokens)
		require.Equal(t, 70, r.TotalInputTokens)
		require.LessOrEqual(t, f.peak, 3)
		require.Len(t, f.bodies, 7)
		for _, b := range f.bodies {
			require.Equal(t, true, b["ignore_eos"])
			require.Equal(t, true, b["stream"])
			require.Equal(t, "m", b["model"])
			require.Len(t, b["prompt"], 10)
		}
		// Every gap is at least the server's, so the mean ITL and the TPOT are too; the
		// closing event, if counted, would put a near-zero gap in 7 of 28.
		require.GreaterOrEqual(t, r.MeanITLms, 5.0, "llama shape %v", llama)
		require.GreaterOrEqual(t, r.MedianTPOTms, 5.0)
		require.GreaterOrEqual(t, r.MedianTTFTms, 5.0)
	}
}

// TestRunReportsFailures: a request the server refuses is a failure with its status and
// body, and the others still count.
func TestRunReportsFailures(t *testing.T) {
	t.Parallel()

	f := &fakeServer{failEvery: 2}
	srv := httptest.NewServer(f)
	defer srv.Close()
	r, err := Run(context.Background(), Config{URL: srv.URL, Concurrency: 1, Requests: 4, SharedTokens: 4, OutputTokens: 2, Vocab: 10})
	require.NoError(t, err)
	require.Equal(t, 2, r.Completed)
	require.Equal(t, 2, r.Failed)
	require.Len(t, r.Errors, 1)
	require.Contains(t, r.Errors[0], "429")
	require.Contains(t, r.Errors[0], "queue full")

	f = &fakeServer{failEvery: 1}
	srv2 := httptest.NewServer(f)
	defer srv2.Close()
	_, err = Run(context.Background(), Config{URL: srv2.URL, Concurrency: 2, SharedTokens: 4, OutputTokens: 2, Vocab: 10})
	require.ErrorContains(t, err, "none of 2 requests")

	_, err = Run(context.Background(), Config{URL: srv.URL, Concurrency: 0, SharedTokens: 4, OutputTokens: 2, Vocab: 10})
	require.ErrorContains(t, err, "concurrency 0")
}

// TestSendCountsTokensNotEvents: G tokens make G-1 gaps in either server's shape; the
// closing event of llama-server's adds none.
func TestSendCountsTokensNotEvents(t *testing.T) {
	t.Parallel()

	for _, llama := range []bool{false, true} {
		srv := httptest.NewServer(&fakeServer{llamaShape: llama})
		o := Send(context.Background(), srv.Client(), srv.URL+"/v1/completions", "", []int{5, 6}, 4)
		srv.Close()
		require.True(t, o.Success, o.Error)
		require.Equal(t, 4, o.OutputTokens)
		require.Len(t, o.ITL, 3, "llama shape %v", llama)
		require.Equal(t, 2, o.PromptLen)
		require.GreaterOrEqual(t, o.Latency, o.TTFT)
	}
}
