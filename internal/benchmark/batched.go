package benchmark

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// BatchedPoint is one configuration of llama.cpp's llama-batched-bench: Batch sequences
// (-npl) each prefilled with Depth distinct tokens (-npp), then Gen decode steps (-ntg)
// in which all of them advance together.
type BatchedPoint struct {
	Depth int `json:"depth"`
	Gen   int `json:"gen"`
	Batch int `json:"batch"`
}

func (p BatchedPoint) String() string {
	return fmt.Sprintf("D=%d N=%d B=%d", p.Depth, p.Gen, p.Batch)
}

// LlamaBatchedBench runs llama.cpp's llama-batched-bench (../shared/bin/llama-batched-bench
// picks the build for the CPU) on one point at a time.
type LlamaBatchedBench struct {
	Path      string // the llama-batched-bench executable
	Threads   int    // -t
	CacheType string // -ctk and -ctv
	// FlashAttn adds -fa: llama.cpp needs flash attention for a quantized V cache.
	FlashAttn bool
}

// LlamaBatchedResult is one line of llama-batched-bench's --output-format jsonl: one point.
type LlamaBatchedResult struct {
	NKVMax    int     `json:"n_kv_max"`
	NBatch    int     `json:"n_batch"`
	NUBatch   int     `json:"n_ubatch"`
	FlashAttn int     `json:"flash_attn"`
	PPShared  int     `json:"is_pp_shared"`
	Threads   int     `json:"n_threads"`
	PP        int     `json:"pp"`
	TG        int     `json:"tg"`
	PL        int     `json:"pl"`
	NKV       int     `json:"n_kv"`
	TPP       float64 `json:"t_pp"`     // seconds of the prefill of all PL prompts
	SpeedPP   float64 `json:"speed_pp"` // S_PP: PL · PP / TPP tokens per second
	TTG       float64 `json:"t_tg"`     // seconds of the TG decode steps
	SpeedTG   float64 `json:"speed_tg"` // S_TG: PL · TG / TTG tokens per second
	T         float64 `json:"t"`
	Speed     float64 `json:"speed"`
}

// ParseLlamaBatchedBench decodes the JSON lines of llama-batched-bench --output-format
// jsonl, skipping any other line.
func ParseLlamaBatchedBench(out []byte) ([]LlamaBatchedResult, error) {
	var rs []LlamaBatchedResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r LlamaBatchedResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("benchmark: llama-batched-bench line %q is not its JSON result: %w", line, err)
		}
		if r.SpeedTG <= 0 || r.SpeedPP <= 0 {
			return nil, fmt.Errorf("benchmark: llama-batched-bench point pp %d tg %d pl %d reports speed_pp %v and speed_tg %v, want both > 0", r.PP, r.TG, r.PL, r.SpeedPP, r.SpeedTG)
		}
		rs = append(rs, r)
	}
	return rs, sc.Err()
}

// LlamaBatchedContext is the -c llama-batched-bench needs for p: every sequence's prompt
// and generated tokens in its one pool of cells (it skips a point that does not fit),
// rounded up to a multiple of 256.
func LlamaBatchedContext(p BatchedPoint) int {
	n := p.Batch * (p.Depth + p.Gen)
	return (n + 255) / 256 * 256
}

// Args returns the command line (without the executable) that runs p on model.
func (l LlamaBatchedBench) Args(model string, p BatchedPoint) []string {
	args := []string{"-m", model, "-c", strconv.Itoa(LlamaBatchedContext(p)),
		"-npp", strconv.Itoa(p.Depth), "-ntg", strconv.Itoa(p.Gen), "-npl", strconv.Itoa(p.Batch),
		"-t", strconv.Itoa(Threads(l.Threads)), "--output-format", "jsonl"}
	if l.CacheType != "" {
		args = append(args, "-ctk", l.CacheType, "-ctv", l.CacheType)
	}
	if l.FlashAttn {
		args = append(args, "-fa")
	}
	return args
}

// Run runs llama-batched-bench on the GGUF file model for the one point p.
func (l LlamaBatchedBench) Run(ctx context.Context, model string, p BatchedPoint) (LlamaBatchedResult, error) {
	args := l.Args(model, p)
	cmd := exec.CommandContext(ctx, l.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return LlamaBatchedResult{}, fmt.Errorf("benchmark: %s %s: %w; its last words: %s", l.Path, strings.Join(args, " "), err, lastLines(stderr.String(), 3))
	}
	rs, err := ParseLlamaBatchedBench(stdout.Bytes())
	if err != nil {
		return LlamaBatchedResult{}, err
	}
	if len(rs) != 1 || rs[0].PP != p.Depth || rs[0].TG != p.Gen || rs[0].PL != p.Batch {
		return LlamaBatchedResult{}, fmt.Errorf("benchmark: %s %s reported %d points, want exactly %s; its last words: %s", l.Path, strings.Join(args, " "), len(rs), p, lastLines(stderr.String(), 3))
	}
	return rs[0], nil
}

// KvrefBatched is kvref's side of one point: the same work llama-batched-bench times, with
// the bytes a decode step must read and how close its rate comes to the memory bandwidth
// probed just before and after it.
type KvrefBatched struct {
	PrefillSeconds float64 `json:"t_pp"`
	SpeedPP        float64 `json:"speed_pp"` // Batch · Depth / PrefillSeconds
	DecodeSeconds  float64 `json:"t_tg"`
	SpeedTG        float64 `json:"speed_tg"` // Batch · Gen / DecodeSeconds
	MsPerStep      float64 `json:"ms_per_step"`
	// WeightBytesPerStep and CacheBytesPerStep are what a decode step must read: the
	// weights once, and every sequence's keys and values (Batch · its length · bytes per
	// token), averaged over the steps.
	WeightBytesPerStep int64   `json:"weight_bytes_per_step"`
	CacheBytesPerStep  int64   `json:"cache_bytes_per_step"`
	BytesPerToken      int64   `json:"cache_bytes_per_token"`
	GBPerSecond        float64 `json:"gb_per_second"`
	// BandwidthGBs is the better of two short probes of the memory bandwidth, one just
	// before and one just after the run, and BandwidthFraction GBPerSecond over it (0 when
	// no probe ran).
	BandwidthGBs      float64 `json:"bandwidth_gb_s"`
	BandwidthFraction float64 `json:"bandwidth_fraction"`
}

// BatchedRow is one point of a BatchedComparison: both engines' rates per round, their
// medians and ratios (kvref over llama.cpp).
type BatchedRow struct {
	BatchedPoint
	Llama          []LlamaBatchedResult `json:"llama_cpp"`
	Kvref          []KvrefBatched       `json:"kvref"`
	RatioTG        []float64            `json:"ratios_tg"`
	RatioPP        []float64            `json:"ratios_pp"`
	LlamaTGMedian  float64              `json:"llama_cpp_speed_tg_median"`
	LlamaPPMedian  float64              `json:"llama_cpp_speed_pp_median"`
	KvrefTGMedian  float64              `json:"kvref_speed_tg_median"`
	KvrefPPMedian  float64              `json:"kvref_speed_pp_median"`
	RatioTGMedian  float64              `json:"ratio_tg_median"`
	RatioPPMedian  float64              `json:"ratio_pp_median"`
	MsPerStep      float64              `json:"kvref_ms_per_step_median"`
	GBPerSecond    float64              `json:"kvref_gb_per_second_median"`
	BandwidthFrac  float64              `json:"kvref_bandwidth_fraction_median"`
	WeightBytes    int64                `json:"weight_bytes_per_step"`
	CacheBytes     int64                `json:"cache_bytes_per_step"`
	LlamaArguments []string             `json:"llama_cpp_arguments"`
}

// BatchedComparison is the outcome of CompareBatched.
type BatchedComparison struct {
	CPU       string       `json:"cpu"`
	LlamaPath string       `json:"llama_batched_bench"`
	Kernels   string       `json:"kvref_kernels"`
	Threads   int          `json:"threads"`
	CacheType string       `json:"cache_type"`
	Rounds    int          `json:"rounds"`
	Rows      []BatchedRow `json:"points"`
}

// BatchedConfig says what CompareBatched runs.
type BatchedConfig struct {
	Setup
	Model  string            // the GGUF file both engines run (m must be this file)
	Llama  LlamaBatchedBench // its Threads and CacheType are set from Setup
	Points []BatchedPoint
	Rounds int
	// PrefillBudget is kvref's most prefill tokens in one step (0: 16384); llama-batched-bench
	// splits its prefill into batches of 2048 (-b) and ubatches of 512 (-ub).
	PrefillBudget int
	// BandwidthBytes sizes the buffer of the bandwidth probes around each kvref run (0: no
	// probes, and no bandwidth fraction).
	BandwidthBytes int64
	Progress       io.Writer
}

// KvrefBatchedRun runs one point on kvref the way llama-batched-bench runs it: p.Batch
// sequences of p.Depth distinct random tokens prefilled (timed: S_PP), then p.Gen decode
// steps of all of them (timed: S_TG); with a probe buffer, the memory bandwidth is probed
// before and after it.
func KvrefBatchedRun(m *model.Model, s Setup, p BatchedPoint, budget int, probe []float32) (KvrefBatched, error) {
	if p.Depth < 1 || p.Gen < 1 || p.Batch < 1 {
		return KvrefBatched{}, fmt.Errorf("benchmark: depth %d, gen %d and batch %d must all be at least 1", p.Depth, p.Gen, p.Batch)
	}
	if need := p.Depth + p.Gen + 8; need > m.Config.Context {
		return KvrefBatched{}, fmt.Errorf("benchmark: %s needs %d positions, more than the model's context of %d", p, need, m.Config.Context)
	}
	if budget <= 0 {
		budget = 16384
	}
	threads := Threads(s.Threads)
	var before float64
	if probe != nil {
		before = bandwidthPasses(probe, threads, 2)
	}
	r, err := batchRun(m, s, p.Batch, p.Depth, p.Gen, budget)
	if err != nil {
		return KvrefBatched{}, err
	}
	k := KvrefBatched{PrefillSeconds: r.PrefillSeconds, SpeedPP: float64(p.Batch*p.Depth) / r.PrefillSeconds,
		DecodeSeconds: r.Seconds, SpeedTG: r.TokensPerSecond, MsPerStep: r.MillisecondsPerStep,
		WeightBytesPerStep: r.WeightBytesPerStep, CacheBytesPerStep: r.CacheBytesPerStep, BytesPerToken: r.CacheBytesPerTokenFormula,
		GBPerSecond: r.GBPerSecond}
	if probe != nil {
		k.BandwidthGBs = max(before, bandwidthPasses(probe, threads, 2))
		k.BandwidthFraction = k.GBPerSecond / k.BandwidthGBs
	}
	return k, nil
}

// CompareBatched runs llama-batched-bench and kvref on the same GGUF file, point by point,
// with the same threads and cache type, in interleaved rounds (the engine that goes first
// alternates from point to point and round to round), so that whatever else loads the
// machine weighs on both alike. m is the model opened from c.Model.
func CompareBatched(ctx context.Context, m *model.Model, c BatchedConfig) (BatchedComparison, error) {
	if c.Rounds < 1 || len(c.Points) == 0 {
		return BatchedComparison{}, fmt.Errorf("benchmark: %d rounds of %d points: need at least one of each", c.Rounds, len(c.Points))
	}
	lb := c.Llama
	if _, err := exec.LookPath(lb.Path); err != nil {
		return BatchedComparison{}, fmt.Errorf("benchmark: llama-batched-bench %q cannot be run (%v): give the path of llama.cpp's llama-batched-bench executable, such as ../shared/bin/llama-batched-bench", lb.Path, err)
	}
	lb.Threads = Threads(c.Threads)
	out := BatchedComparison{CPU: CPUName(), LlamaPath: lb.Path, Kernels: kernels.Implementation(), Threads: lb.Threads,
		CacheType: lb.CacheType, Rounds: c.Rounds}
	for _, p := range c.Points {
		if need := p.Depth + p.Gen + 8; need > m.Config.Context {
			return out, fmt.Errorf("benchmark: %s needs %d positions, more than the model's context of %d", p, need, m.Config.Context)
		}
	}
	var probe []float32
	if c.BandwidthBytes > 0 {
		if c.BandwidthBytes < 1<<20 {
			return out, fmt.Errorf("benchmark: the bandwidth probe needs a buffer of at least 1MiB, got %d bytes", c.BandwidthBytes)
		}
		probe = make([]float32, c.BandwidthBytes/4)
		for i := range probe {
			probe[i] = 1
		}
	}
	// llama-batched-bench warms up (16 tokens) before it times; kvref warms up once here,
	// touching every weight.
	say(c.Progress, "kvref warm-up...")
	if _, err := batchRun(m, c.Setup, 1, 16, 2, 16); err != nil {
		return out, err
	}
	rows := make([]BatchedRow, len(c.Points))
	turn := 0
	for round := range c.Rounds {
		for i, p := range c.Points {
			row := &rows[i]
			row.BatchedPoint = p
			row.LlamaArguments = lb.Args(c.Model, p)
			llamaFirst := turn%2 == 0
			turn++
			for _, llama := range []bool{llamaFirst, !llamaFirst} {
				if llama {
					say(c.Progress, "round %d/%d: llama-batched-bench %s...", round+1, c.Rounds, p)
					r, err := lb.Run(ctx, c.Model, p)
					if err != nil {
						return out, err
					}
					row.Llama = append(row.Llama, r)
					continue
				}
				say(c.Progress, "round %d/%d: kvref %s...", round+1, c.Rounds, p)
				k, err := KvrefBatchedRun(m, c.Setup, p, c.PrefillBudget, probe)
				if err != nil {
					return out, err
				}
				row.Kvref = append(row.Kvref, k)
			}
			l, k := row.Llama[round], row.Kvref[round]
			row.RatioTG = append(row.RatioTG, k.SpeedTG/l.SpeedTG)
			row.RatioPP = append(row.RatioPP, k.SpeedPP/l.SpeedPP)
			// Each point as it ends, so that a run stopped early keeps what it measured.
			say(c.Progress, "round %d/%d %s: S_TG llama.cpp %.2f, kvref %.2f (×%.2f); S_PP llama.cpp %.2f, kvref %.2f (×%.2f); kvref %.2f ms/step, %.2f GB/s (%.1f%% of the bandwidth)",
				round+1, c.Rounds, p, l.SpeedTG, k.SpeedTG, k.SpeedTG/l.SpeedTG, l.SpeedPP, k.SpeedPP, k.SpeedPP/l.SpeedPP, k.MsPerStep, k.GBPerSecond, 100*k.BandwidthFraction)
		}
	}
	for i := range rows {
		summarizeBatched(&rows[i])
	}
	out.Rows = rows
	return out, nil
}

// summarizeBatched fills a row's medians from its rounds.
func summarizeBatched(r *BatchedRow) {
	var ltg, lpp, ktg, kpp, ms, gbs, frac []float64
	for _, l := range r.Llama {
		ltg, lpp = append(ltg, l.SpeedTG), append(lpp, l.SpeedPP)
	}
	for _, k := range r.Kvref {
		ktg, kpp, ms, gbs = append(ktg, k.SpeedTG), append(kpp, k.SpeedPP), append(ms, k.MsPerStep), append(gbs, k.GBPerSecond)
		if k.BandwidthGBs > 0 {
			frac = append(frac, k.BandwidthFraction)
		}
		r.WeightBytes, r.CacheBytes = k.WeightBytesPerStep, k.CacheBytesPerStep
	}
	r.LlamaTGMedian, r.LlamaPPMedian = Median(ltg), Median(lpp)
	r.KvrefTGMedian, r.KvrefPPMedian = Median(ktg), Median(kpp)
	r.RatioTGMedian, r.RatioPPMedian = Median(r.RatioTG), Median(r.RatioPP)
	r.MsPerStep, r.GBPerSecond, r.BandwidthFrac = Median(ms), Median(gbs), Median(frac)
}

// WriteBatchedComparison writes a BatchedComparison: the machine, then one row per point
// with both engines' S_TG and S_PP, their ratios, and kvref's step against the bandwidth.
func WriteBatchedComparison(w io.Writer, c BatchedComparison) {
	fmt.Fprintf(w, "CPU %s; kvref %s kernels; %s; cache %s, %d threads, %d interleaved rounds\n\n", c.CPU, c.Kernels, c.LlamaPath, c.CacheType, c.Threads, c.Rounds)
	fmt.Fprintf(w, "%5s %4s %3s %18s %18s %22s %18s %18s %22s %9s %22s %8s %8s\n",
		"D", "N", "B", "llama S_TG t/s", "kvref S_TG t/s", "S_TG kvref/llama", "llama S_PP t/s", "kvref S_PP t/s", "S_PP kvref/llama",
		"ms/step", "MB/step weights+cache", "GB/s", "of bw")
	for _, r := range c.Rows {
		var ltg, lpp, ktg, kpp []float64
		for _, l := range r.Llama {
			ltg, lpp = append(ltg, l.SpeedTG), append(lpp, l.SpeedPP)
		}
		for _, k := range r.Kvref {
			ktg, kpp = append(ktg, k.SpeedTG), append(kpp, k.SpeedPP)
		}
		frac := "-"
		if r.BandwidthFrac > 0 {
			frac = fmt.Sprintf("%.1f%%", 100*r.BandwidthFrac)
		}
		fmt.Fprintf(w, "%5d %4d %3d %18s %18s %22s %18s %18s %22s %9.2f %22s %8.2f %8s\n",
			r.Depth, r.Gen, r.Batch, medianRange(ltg, "%.1f"), medianRange(ktg, "%.1f"), medianRange(r.RatioTG, "%.2f"),
			medianRange(lpp, "%.1f"), medianRange(kpp, "%.1f"), medianRange(r.RatioPP, "%.2f"),
			r.MsPerStep, fmt.Sprintf("%.0f + %.0f", float64(r.WeightBytes)/1e6, float64(r.CacheBytes)/1e6), r.GBPerSecond, frac)
	}
	fmt.Fprintln(w, "\n(S_TG: B·N generated tokens over the N decode steps; S_PP: B·D prompt tokens over the prefill; medians of the rounds, their range in brackets;")
	fmt.Fprintln(w, " MB/step: what a kvref decode step must read, the weights once and every sequence's cached keys and values; of bw: its GB/s over the bandwidth probed just before and after the run)")
}

// LlamaBatchedCacheType returns llama.cpp's name of kvref's cache type for -ctk and -ctv,
// and whether llama.cpp needs flash attention (-fa) for it: its quantized V cache runs
// only there, a different attention path from the float caches'. kvref's int8 and fp8
// caches have no llama.cpp equivalent.
func LlamaBatchedCacheType(kvref string) (name string, flashAttn bool, err error) {
	switch kvref {
	case "f32", "f16", "bf16":
		return kvref, false, nil
	case "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1":
		return kvref, true, nil
	}
	return "", false, fmt.Errorf("benchmark: cache type %s has no llama.cpp equivalent (use f32, f16, bf16 or one of ggml's q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1)", kvref)
}
