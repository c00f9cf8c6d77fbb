package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// lockedBuffer is a bytes.Buffer for a logger written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLatencyMetricsAndAccessLog: after requests, /metrics parses as the Prometheus text
// format and has the latency and token histograms with their counts and sums, the prefix
// cache's hits and queries and hit ratio, and the blocks by state; the access log has one
// timestamped record per response, 200, 400 and 404 alike, with its status, latency and
// tokens.
func TestLatencyMetricsAndAccessLog(t *testing.T) {
	var buf lockedBuffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 4}, Options{Logger: logger, LogRequests: true})
	prompt := []int{1, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	ts.complete(t, map[string]any{"prompt": prompt, "max_tokens": 5, "ignore_eos": true})
	ts.complete(t, map[string]any{"prompt": prompt, "max_tokens": 5, "ignore_eos": true}) // 8 of 10 tokens hit
	ts.apiError(t, "/v1/completions", map[string]any{"prompt": "a", "temprature": 0}, http.StatusBadRequest)
	status, _ := ts.get(t, "/nowhere")
	require.Equal(t, http.StatusNotFound, status)

	status, out := ts.get(t, "/metrics")
	require.Equal(t, http.StatusOK, status)
	parser := expfmt.NewTextParser(model.LegacyValidation) // classic Prometheus names only
	families, err := parser.TextToMetricFamilies(bytes.NewReader(out))
	require.NoError(t, err, string(out))
	hist := func(name string) (uint64, float64) {
		f := families[name]
		require.NotNil(t, f, name)
		h := f.GetMetric()[0].GetHistogram()
		return h.GetSampleCount(), h.GetSampleSum()
	}
	n, sum := hist("kvref_time_to_first_token_seconds")
	require.Equal(t, uint64(2), n)
	require.Positive(t, sum)
	n, _ = hist("kvref_time_per_output_token_seconds")
	require.Equal(t, uint64(2), n)
	n, _ = hist("kvref_e2e_request_latency_seconds")
	require.Equal(t, uint64(2), n)
	n, sum = hist("kvref_request_prompt_tokens")
	require.Equal(t, uint64(2), n)
	require.Equal(t, 20.0, sum)
	_, sum = hist("kvref_request_generation_tokens")
	require.Equal(t, 10.0, sum)
	value := func(name string) float64 {
		f := families[name]
		require.NotNil(t, f, name)
		m := f.GetMetric()[0]
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	require.Equal(t, 8.0, value("kvref_prefix_cache_hits_total"))
	require.Equal(t, 20.0, value("kvref_prefix_cache_queries_total"))
	require.Equal(t, 0.4, value("kvref_prefix_cache_hit_ratio"))
	require.Zero(t, value("kvref_scheduler_preemptions_total"))
	states := map[string]float64{}
	for _, m := range families["kvref_cache_blocks"].GetMetric() {
		states[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	require.Equal(t, value("kvref_cache_blocks_total"), states["used"]+states["cached"]+states["free"])
	require.Positive(t, states["cached"])

	log := buf.String()
	for _, want := range []string{
		`msg="POST /v1/completions 200: 1 prompt(s) × n=1, 10 prompt tokens (8 cached), 5 generated, `,
		`status=200`, `prompt_tokens=10 cached_tokens=8 generated_tokens=5`,
		`msg="POST /v1/completions 400: Unrecognized request argument supplied: temprature, `, "status=400",
		`msg="GET /nowhere 404: GET /nowhere: no such endpoint`, "status=404",
	} {
		require.Contains(t, log, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		require.Regexp(t, regexp.MustCompile(`^time=\d{4}-\d\d-\d\dT`), line)
		require.Contains(t, line, "latency_ms=")
	}
}

// fixedStats is a collector of given Stats, for tests of the metrics' text.
type fixedStats Stats

func (f fixedStats) Describe(ch chan<- *prometheus.Desc) { statsCollector{}.Describe(ch) }
func (f fixedStats) Collect(ch chan<- prometheus.Metric) { emitStats(Stats(f), ch) }

// formatMetrics renders st as /metrics would, in the Prometheus text format.
func formatMetrics(st Stats) string {
	reg := prometheus.NewRegistry()
	reg.MustRegister(fixedStats(st))
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			panic(err)
		}
	}
	return b.String()
}
