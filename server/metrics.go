package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics, in the Prometheus text format, through github.com/prometheus/client_golang:
// latency histograms observed by the handlers (time to first token, time per output
// token, end-to-end latency, prompt and generation tokens per request) and, at each
// scrape, the engine loop's counters and the cache pool's state read through Stats
// (statsCollector). Names follow Prometheus' conventions: a kvref_ prefix, base units
// (seconds, bytes) in the name, _total on counters. docs/serve.md maps each to the vLLM or
// llama-server metric it corresponds to.

// metrics are a server's own registry (one per server: tests run many) and histograms.
type metrics struct {
	reg                     *prometheus.Registry
	ttft, tpot, e2e         prometheus.Histogram
	promptTokens, genTokens prometheus.Histogram
}

// latencyBuckets are vLLM's buckets for time to first token, in seconds, extended down to
// the millisecond a small model answers in.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640}

// tokenBuckets are 1, 2, 5 times powers of ten, as vLLM's token histograms, up to 10^6.
var tokenBuckets = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000}

func newMetrics(s *Server) *metrics {
	h := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	}
	m := &metrics{
		reg:          prometheus.NewRegistry(),
		ttft:         h("kvref_time_to_first_token_seconds", "Time from a generation request's arrival to its first token.", latencyBuckets),
		tpot:         h("kvref_time_per_output_token_seconds", "Mean time between a request's output tokens after the first (per continuation).", latencyBuckets),
		e2e:          h("kvref_e2e_request_latency_seconds", "Time from a generation request's arrival to its response's end (2xx and errors after admission).", latencyBuckets),
		promptTokens: h("kvref_request_prompt_tokens", "Prompt tokens of a generation request (all its prompts).", tokenBuckets),
		genTokens:    h("kvref_request_generation_tokens", "Tokens generated for a request (all its choices).", tokenBuckets),
	}
	m.reg.MustRegister(m.ttft, m.tpot, m.e2e, m.promptTokens, m.genTokens, statsCollector{s})
	return m
}

// observe records a finished generation request: it arrived at start, its first token
// came at first (zero: none came), it ended at end, and u counts its tokens over choices
// continuations.
func (m *metrics) observe(start, first, end time.Time, u Usage, choices int) {
	m.e2e.Observe(end.Sub(start).Seconds())
	m.promptTokens.Observe(float64(u.PromptTokens))
	m.genTokens.Observe(float64(u.CompletionTokens))
	if first.IsZero() {
		return
	}
	m.ttft.Observe(first.Sub(start).Seconds())
	if perChoice := u.CompletionTokens / max(choices, 1); perChoice > 1 {
		m.tpot.Observe(end.Sub(first).Seconds() / float64(perChoice-1))
	}
}

// handleMetrics serves GET /metrics.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
}

// statsCollector reads the server's Stats at each scrape (asking the engine loop, so a
// scrape waits for the current step) and reports them as constant metrics.
type statsCollector struct{ s *Server }

// stat is one metric statsCollector reports.
type stat struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(st Stats) float64
}

func newStat(name, help string, kind prometheus.ValueType, value func(st Stats) float64, labels ...string) stat {
	return stat{prometheus.NewDesc(name, help, labels, nil), kind, value}
}

var (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
	stats   = []stat{
		newStat("kvref_requests_total", "Engine requests accepted (one per prompt).", counter, func(st Stats) float64 { return float64(st.Requests) }),
		newStat("kvref_requests_finished_total", "Engine requests that ran to a stop.", counter, func(st Stats) float64 { return float64(st.Finished) }),
		newStat("kvref_requests_cancelled_total", "Engine requests cancelled because their client went away.", counter, func(st Stats) float64 { return float64(st.Cancelled) }),
		newStat("kvref_requests_failed_total", "Engine requests ended by an error.", counter, func(st Stats) float64 { return float64(st.Failed) }),
		newStat("kvref_requests_running", "Engine requests waiting or running now.", gauge, func(st Stats) float64 { return float64(st.Running) }),
		newStat("kvref_generated_tokens_total", "Tokens generated, all choices together.", counter, func(st Stats) float64 { return float64(st.GeneratedTokens) }),
		newStat("kvref_prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache (every sequence added to the pool: a preempted one again when readmitted).", counter, func(st Stats) float64 { return float64(st.Cache.PromptTokens) }),
		newStat("kvref_prefix_cache_hits_total", "Prompt tokens whose K/V came from the prefix cache.", counter, func(st Stats) float64 { return float64(st.Cache.PrefixHitTokens) }),
		newStat("kvref_prefix_cache_hit_ratio", "Prefix-cache hits over queries since the start (0 before any query).", gauge, func(st Stats) float64 {
			if st.Cache.PromptTokens == 0 {
				return 0
			}
			return float64(st.Cache.PrefixHitTokens) / float64(st.Cache.PromptTokens)
		}),
		newStat("kvref_scheduler_steps_total", "Scheduler steps (batched forward passes).", counter, func(st Stats) float64 { return float64(st.Engine.Steps) }),
		newStat("kvref_scheduler_batch_tokens_mean", "Mean tokens (rows) per step.", gauge, func(st Stats) float64 { return st.Engine.RowsMean }),
		newStat("kvref_scheduler_batch_tokens_max", "Most tokens (rows) in one step.", gauge, func(st Stats) float64 { return float64(st.Engine.RowsMax) }),
		newStat("kvref_scheduler_batch_sequences_mean", "Mean sequences per step.", gauge, func(st Stats) float64 { return st.Engine.SequencesMean }),
		newStat("kvref_scheduler_batch_sequences_max", "Most sequences in one step.", gauge, func(st Stats) float64 { return float64(st.Engine.SequencesMax) }),
		newStat("kvref_scheduler_preemptions_total", "Sequences preempted (blocks freed, recomputed later).", counter, func(st Stats) float64 { return float64(st.Engine.Preemptions) }),
		newStat("kvref_scheduler_prefill_tokens_total", "Prompt and recomputed tokens run.", counter, func(st Stats) float64 { return float64(st.Engine.PrefillTokens) }),
		newStat("kvref_scheduler_decode_tokens_total", "Single-token decode rows run.", counter, func(st Stats) float64 { return float64(st.Engine.DecodeTokens) }),
		newStat("kvref_scheduler_replay_tokens_total", "Cached prompt positions recomputed for their log-probabilities (echo, prompt_logprobs).", counter, func(st Stats) float64 { return float64(st.Engine.ReplayTokens) }),
		newStat("kvref_cache_peak_blocks_used", "Most cache blocks in use at the end of a step.", gauge, func(st Stats) float64 { return float64(st.Engine.PeakBlocksUsed) }),
		newStat("kvref_cache_block_size", "Token slots per cache block.", gauge, func(st Stats) float64 { return float64(st.Cache.BlockSize) }),
		newStat("kvref_cache_blocks_total", "Blocks in the cache pool.", gauge, func(st Stats) float64 { return float64(st.Cache.BlocksTotal) }),
		newStat("kvref_cache_blocks_used", "Blocks referenced by at least one sequence.", gauge, func(st Stats) float64 { return float64(st.Cache.BlocksUsed) }),
		newStat("kvref_cache_blocks_cached", "Unreferenced blocks kept for prefix hits (evictable).", gauge, func(st Stats) float64 { return float64(st.Cache.BlocksCached) }),
		newStat("kvref_cache_blocks_free", "Free blocks.", gauge, func(st Stats) float64 { return float64(st.Cache.BlocksFree) }),
		newStat("kvref_cache_blocks_shared", "Blocks referenced by two or more block-table entries.", gauge, func(st Stats) float64 { return float64(st.Cache.BlocksShared) }),
		newStat("kvref_cache_usage_ratio", "Blocks in use over blocks in the pool.", gauge, func(st Stats) float64 {
			return float64(st.Cache.BlocksUsed) / float64(max(st.Cache.BlocksTotal, 1))
		}),
		newStat("kvref_cache_bytes_per_token", "Cache bytes per token: 2 · layers · kv_heads · head_dim · bytes per element.", gauge, func(st Stats) float64 { return float64(st.Cache.BytesPerToken) }),
		newStat("kvref_cache_bytes_per_block", "Cache bytes per block.", gauge, func(st Stats) float64 { return float64(st.Cache.BytesPerBlock) }),
		newStat("kvref_cache_bytes_in_use", "Bytes of the blocks in use.", gauge, func(st Stats) float64 { return float64(st.Cache.BytesInUse) }),
		newStat("kvref_cache_bytes_total", "Bytes the pool allocated.", gauge, func(st Stats) float64 { return float64(st.Cache.BytesTotal) }),
		newStat("kvref_cache_tokens_stored", "Committed token slots in used blocks.", gauge, func(st Stats) float64 { return float64(st.Cache.TokensStored) }),
		newStat("kvref_cache_unused_slots", "Slots of used blocks holding nothing (internal fragmentation).", gauge, func(st Stats) float64 { return float64(st.Cache.UnusedSlots) }),
		newStat("kvref_cache_evictions_total", "Cached blocks evicted to make room.", counter, func(st Stats) float64 { return float64(st.Cache.Evictions) }),
		newStat("kvref_cache_cow_copies_total", "Shared blocks copied before a write (copy-on-write).", counter, func(st Stats) float64 { return float64(st.Cache.CowCopies) }),
		newStat("kvref_cache_sequences", "Sequences in the pool.", gauge, func(st Stats) float64 { return float64(st.Cache.Sequences) }),
	}
	// groupStats are per cache group (a model with sliding layers beside full ones),
	// labelled group and window.
	groupStats = []struct {
		desc  *prometheus.Desc
		kind  prometheus.ValueType
		value func(st Stats, g int) float64
	}{
		{prometheus.NewDesc("kvref_cache_group_layers", "Layers of the cache group (blocks hold that many layers).", []string{"group", "window"}, nil), gauge,
			func(st Stats, g int) float64 { return float64(len(st.Cache.Groups[g].Layers)) }},
		{prometheus.NewDesc("kvref_cache_group_blocks_used", "Blocks the cache group's tables reference.", []string{"group", "window"}, nil), gauge,
			func(st Stats, g int) float64 { return float64(st.Cache.Groups[g].BlocksUsed) }},
		{prometheus.NewDesc("kvref_cache_group_blocks_cached", "Unreferenced blocks of the group kept for prefix hits.", []string{"group", "window"}, nil), gauge,
			func(st Stats, g int) float64 { return float64(st.Cache.Groups[g].BlocksCached) }},
		{prometheus.NewDesc("kvref_cache_group_blocks_reclaimed_total", "Blocks the group's window released.", []string{"group", "window"}, nil), counter,
			func(st Stats, g int) float64 { return float64(st.Cache.Groups[g].BlocksReclaimed) }},
		{prometheus.NewDesc("kvref_cache_group_peak_blocks_used", "Most blocks of the group in use at the end of a step.", []string{"group", "window"}, nil), gauge,
			func(st Stats, g int) float64 {
				if g < len(st.Engine.PeakGroupBlocksUsed) {
					return float64(st.Engine.PeakGroupBlocksUsed[g])
				}
				return 0
			}},
	}
	// blockStates is kvref_cache_blocks{state}: every block is in exactly one state.
	blockStates = prometheus.NewDesc("kvref_cache_blocks", "Blocks of the cache pool by state: used (referenced by a sequence), cached (unreferenced, kept for prefix hits, evictable), free.", []string{"state"}, nil)
)

// Describe sends every metric's description.
func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, st := range stats {
		ch <- st.desc
	}
	ch <- blockStates
	for _, m := range groupStats {
		ch <- m.desc
	}
}

// Collect reads Stats once and sends every metric.
func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.s.Stats(ctx)
	if err != nil {
		for _, m := range stats {
			ch <- prometheus.NewInvalidMetric(m.desc, err)
		}
		return
	}
	emitStats(st, ch)
}

// emitStats sends every metric of st.
func emitStats(st Stats, ch chan<- prometheus.Metric) {
	for _, m := range stats {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(st))
	}
	for state, n := range map[string]int{"used": st.Cache.BlocksUsed, "cached": st.Cache.BlocksCached, "free": st.Cache.BlocksFree} {
		ch <- prometheus.MustNewConstMetric(blockStates, gauge, float64(n), state)
	}
	for g, gs := range st.Cache.Groups {
		for _, m := range groupStats {
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(st, g), strconv.Itoa(g), strconv.Itoa(gs.Window))
		}
	}
}
