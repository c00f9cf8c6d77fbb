package benchmark

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kvref/kvref/internal/benchmark/probe"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/model"
)

// Roofline is the machine's measured limits and how close decode and prefill come to them.
type Roofline struct {
	Kernels string `json:"kernels"` // the kernel level in use (kernels.Implementation)
	// Implementations says which implementation each kernel ran (kernels.Implementations).
	Implementations  []kernels.Choice `json:"implementations"`
	Threads          int              `json:"threads"`
	BandwidthGBs1    float64          `json:"bandwidth_gb_s_1_thread"`
	BandwidthGBs     float64          `json:"bandwidth_gb_s"` // with Threads threads
	PeakVectorBits   int              `json:"peak_vector_bits"`
	FMAPeakGFLOPs    float64          `json:"fma_peak_gflop_s"`
	MulAddPeakGFLOPs float64          `json:"mul_add_peak_gflop_s"`
	// Int8PeakGops is the peak rate of int8 multiply-adds (two operations each), with the
	// instructions Int8PeakWhat: the arithmetic of the quantized weights' products.
	Int8PeakGops float64 `json:"int8_peak_gop_s"`
	Int8PeakWhat string  `json:"int8_peak_instructions,omitempty"`
	// QuantizedWeights says whether most of the model's weights are in ggml's block
	// formats, so that its prefill is measured against the int8 peak.
	QuantizedWeights bool `json:"quantized_weights"`
	RooflineRun
	// The same decode and prefill with the portable Go kernels (kernels.SetPortable), the
	// code a -tags purego build runs; absent unless RooflineConfig.Portable.
	Portable *RooflineRun `json:"portable,omitempty"`
}

// RooflineRun is one kernel path's decode and prefill figures against the machine's limits.
type RooflineRun struct {
	DecodeBytesPerToken   int64   `json:"decode_bytes_per_token"` // weights + cache read per token
	DecodeSteps           int     `json:"decode_steps"`
	DecodeTokensPerSecond float64 `json:"decode_tokens_per_second"` // best window of DecodeWindow steps
	DecodeGBs             float64 `json:"decode_gb_s"`
	BandwidthFraction     float64 `json:"bandwidth_fraction"`
	MeanBandwidthFraction float64 `json:"mean_bandwidth_fraction"` // over all the timed steps
	// PairedFractions is, for each of PairedWindows windows of DecodeWindow steps timed
	// between two short bandwidth probes, the window's read rate over the better of its two
	// probes (pairedWindows); PairedBandwidthFraction is their median. Absent for the
	// portable run.
	PairedFractions         []float64 `json:"paired_bandwidth_fractions,omitempty"`
	PairedBandwidthFraction float64   `json:"paired_bandwidth_fraction,omitempty"`
	PairedWindowGBs         []float64 `json:"paired_window_gb_s,omitempty"` // each window's read rate
	PairedProbeGBs          []float64 `json:"paired_probe_gb_s,omitempty"`  // the probes, one more
	PrefillTokens           int       `json:"prefill_tokens"`
	PrefillSeconds          float64   `json:"prefill_seconds"`
	PrefillGFLOPs           float64   `json:"prefill_gflop_s"`
	FMAFraction             float64   `json:"fma_fraction"`
	MulAddFraction          float64   `json:"mul_add_fraction"`
	// Int8Fraction is the prefill's rate as a fraction of the int8 peak: the figure that
	// counts when the weights are quantized (Roofline.QuantizedWeights), whose products
	// are integer multiply-adds, so that FMAFraction can exceed 1.
	Int8Fraction float64 `json:"int8_fraction"`
	// BatchArithmeticSeconds is how long the products of a decode step of CeilingBatch
	// sequences take at the peak of the weights' arithmetic (BatchArithmetic), and
	// BatchCeiling the most such a step can gain over this run's batch-1 step (its best
	// window); both 0 when no peak was measured, and for the portable run.
	BatchArithmeticSeconds float64 `json:"batch16_arithmetic_seconds"`
	BatchCeiling           float64 `json:"batch16_ceiling"`
	// BatchTokensPerSecond is the measured decode of CeilingBatch sequences together (its
	// best window of DecodeWindow steps, as batch 1's), BatchSpeedup its rate over batch
	// 1's, and BatchCeilingFraction that speedup over BatchCeiling: how close batched
	// decode comes to its ceiling in the same run (0 without a ceiling; all three absent
	// for the portable run).
	BatchTokensPerSecond float64 `json:"batch16_tokens_per_second,omitempty"`
	BatchSpeedup         float64 `json:"batch16_speedup,omitempty"`
	BatchCeilingFraction float64 `json:"batch16_ceiling_fraction,omitempty"`
}

// RooflineConfig says what MeasureRoofline runs.
type RooflineConfig struct {
	Setup
	Steps          int       // batch-1 decode steps timed (at least DecodeWindow are)
	Prompt         int       // prompt tokens before the timed decode
	Prefill        int       // prompt tokens of the timed prefill (capped at the context - 1)
	BandwidthBytes int64     // size of the buffer streamed to measure the bandwidth
	Portable       bool      // also measure decode and prefill with the portable kernels
	Progress       io.Writer // where to say what is being measured (nil: nowhere)
}

// DecodeWindow is how many consecutive decode steps make one timing window; the roofline
// takes the best window, as the bandwidth figure is the best of its passes, so that both
// sides of the ratio are measured the same way on a machine shared with other work.
const DecodeWindow = 8

// PairedWindows is how many decode windows MeasureRoofline times between bandwidth
// probes (RooflineRun.PairedFractions).
const PairedWindows = 5

// Bandwidth streams buf (much larger than the last-level cache) through
// probe.StreamRead (eight independent vector additions from memory, so that no chain of
// additions limits it) on each of threads goroutines and returns the best of five passes
// in GB/s.
func Bandwidth(buf []float32, threads int) float64 {
	return bandwidthPasses(buf, threads, 5)
}

// bandwidthPasses is Bandwidth with the best of passes passes.
func bandwidthPasses(buf []float32, threads, passes int) float64 {
	best := 0.0
	var sink float32
	var mu sync.Mutex
	for range passes {
		chunk := len(buf) / threads
		start := time.Now()
		var wg sync.WaitGroup
		for t := range threads {
			part := buf[t*chunk : (t+1)*chunk]
			wg.Go(func() {
				v := probe.StreamRead(part)
				mu.Lock()
				sink += v
				mu.Unlock()
			})
		}
		wg.Wait()
		best = max(best, float64(threads*chunk*4)/time.Since(start).Seconds()/1e9)
	}
	_ = sink
	return best
}

// Peak runs a register-only loop of flopsPerIter flops on each of threads goroutines and
// returns GFLOP/s (best of three); 0 when loop is nil.
func Peak(loop func(int), flopsPerIter, threads int) float64 {
	if loop == nil {
		return 0
	}
	const iters = 20_000_000
	best := 0.0
	for range 3 {
		start := time.Now()
		var wg sync.WaitGroup
		for range threads {
			wg.Go(func() { loop(iters) })
		}
		wg.Wait()
		best = max(best, float64(threads)*float64(iters)*float64(flopsPerIter)/time.Since(start).Seconds()/1e9)
	}
	return best
}

// PrefillFlops counts the multiply-adds (×2) of a forward pass over n tokens: every weight
// matrix once per token, the classifier for the last token only, attention over the causal
// triangle.
func PrefillFlops(m *model.Model, n int) float64 {
	c := m.Config
	attn := float64(c.Layers) * float64(c.Heads) * float64(c.HeadDim) * float64(n) * float64(n+1) / 2 * 2 // q·k and p·v
	return 2 * (layerParams(m)*float64(n) + attn + float64(c.Vocab)*float64(c.Dim))
}

// layerParams counts the weights of the layers' matrices: the multiply-adds of one token
// through them.
func layerParams(m *model.Model) float64 {
	n := 0.0
	for _, l := range m.Weights.Layers {
		for _, w := range []*model.Matrix{l.Wq, l.Wk, l.Wv, l.Wo, l.Gate, l.Up, l.Down} {
			n += float64(w.Rows) * float64(w.Cols)
		}
	}
	return n
}

// CeilingBatch is the batch size whose ceiling over batch 1 the roofline reports.
const CeilingBatch = 16

// BatchArithmetic is how long the products of a decode step of batch sequences take at
// peak (GFLOP/s or Gop/s, a multiply-add counted as two) and nothing else: 2 · batch ·
// (the layers' weights + the classifier's) / peak seconds; 0 when the peak is unknown.
func BatchArithmetic(m *model.Model, batch int, peak float64) float64 {
	if peak <= 0 {
		return 0
	}
	c := m.Config
	return 2 * float64(batch) * (layerParams(m) + float64(c.Vocab)*float64(c.Dim)) / (peak * 1e9)
}

// BatchCeiling is the most a decode step of batch sequences can gain over a batch-1 step
// of stepSeconds when its products take arithSeconds (BatchArithmetic): batch ×
// stepSeconds / arithSeconds, and never more than batch (the weights are read once either
// way); 0 when either time is unknown.
func BatchCeiling(batch int, stepSeconds, arithSeconds float64) float64 {
	if stepSeconds <= 0 || arithSeconds <= 0 {
		return 0
	}
	return min(float64(batch), float64(batch)*stepSeconds/arithSeconds)
}

// JSON is kvref bench --roofline --json's object for the model named source: the
// roofline, its fractions at the top level (and the portable kernels' when measured),
// and the host's stolen share of CPU time.
func (r Roofline) JSON(source string, steal *StealMeter) map[string]any {
	out := map[string]any{"model": source, "roofline": r, "bandwidth_fraction": r.BandwidthFraction, "fma_fraction": r.FMAFraction, "host_steal_fraction": steal.JSON()}
	if r.Portable != nil {
		out["portable_bandwidth_fraction"] = r.Portable.BandwidthFraction
		out["portable_fma_fraction"] = r.Portable.FMAFraction
	}
	return out
}

// say writes a progress line when w is set.
func say(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "kvref bench: "+format+"\n", args...)
	}
}

// MeasureRoofline measures the machine (bandwidth, arithmetic peak) and the model's decode
// and prefill against it, with the fast kernels and then, if c.Portable, with the portable
// ones.
func MeasureRoofline(m *model.Model, c RooflineConfig) (Roofline, error) {
	threads := Threads(c.Threads)
	r := Roofline{Kernels: kernels.Implementation(), Implementations: kernels.Implementations(), Threads: threads}
	if c.Prefill < 1 {
		return r, fmt.Errorf("benchmark: the timed prefill needs at least one token, got %d", c.Prefill)
	}
	if c.BandwidthBytes < 1<<20 {
		return r, fmt.Errorf("benchmark: the bandwidth probe needs a buffer of at least 1MiB (much larger than the last-level cache), got %d bytes", c.BandwidthBytes)
	}
	say(c.Progress, "measuring memory bandwidth (%d MiB stream)...", c.BandwidthBytes>>20)
	buf := make([]float32, c.BandwidthBytes/4)
	for i := range buf {
		buf[i] = 1
	}
	r.BandwidthGBs1 = Bandwidth(buf, 1)
	r.BandwidthGBs = Bandwidth(buf, threads)
	say(c.Progress, "measuring arithmetic peak...")
	fma, mulAdd, fmaFlops, mulAddFlops, bits := probe.PeakLoops()
	r.PeakVectorBits = bits
	r.FMAPeakGFLOPs = Peak(fma, fmaFlops, threads)
	r.MulAddPeakGFLOPs = Peak(mulAdd, mulAddFlops, threads)
	int8, int8Ops, int8What := probe.Int8PeakLoop()
	r.Int8PeakGops, r.Int8PeakWhat = Peak(int8, int8Ops, threads), int8What
	r.QuantizedWeights = quantizedWeights(m)

	run, err := decodePrefill(m, c, r, c.Steps, 2)
	if err != nil {
		return r, err
	}
	// Other work on a shared machine can hold the bandwidth down for seconds: measure it
	// again after the decode and keep the best of both, so that a slow moment during the
	// probe does not flatter the decode figure.
	say(c.Progress, "measuring memory bandwidth again...")
	if again := Bandwidth(buf, threads); again > r.BandwidthGBs {
		run.MeanBandwidthFraction *= r.BandwidthGBs / again
		run.BandwidthFraction = run.DecodeGBs / again
		r.BandwidthGBs = again
	}
	r.BandwidthGBs1 = max(r.BandwidthGBs1, Bandwidth(buf, 1))
	say(c.Progress, "%d decode windows of %d steps between bandwidth probes...", PairedWindows, DecodeWindow)
	if run.PairedWindowGBs, run.PairedProbeGBs, err = pairedWindows(m, c, buf, threads, PairedWindows); err != nil {
		return r, err
	}
	run.PairedFractions = windowFractions(run.PairedWindowGBs, run.PairedProbeGBs)
	run.PairedBandwidthFraction = Median(run.PairedFractions)
	peak, _ := r.weightsPeak()
	run.BatchArithmeticSeconds = BatchArithmetic(m, CeilingBatch, peak)
	run.BatchCeiling = BatchCeiling(CeilingBatch, 1/run.DecodeTokensPerSecond, run.BatchArithmeticSeconds)
	say(c.Progress, "batch-%d decode...", CeilingBatch)
	b, err := Batch(m, c.Setup, CeilingBatch, c.Prompt, max(c.Steps, DecodeWindow))
	if err != nil {
		return r, err
	}
	secs, _ := bestWindow(b)
	run.BatchTokensPerSecond = CeilingBatch * DecodeWindow / secs
	run.BatchSpeedup = run.BatchTokensPerSecond / run.DecodeTokensPerSecond
	if run.BatchCeiling > 0 {
		run.BatchCeilingFraction = run.BatchSpeedup / run.BatchCeiling
	}
	buf = nil
	r.RooflineRun = run
	if c.Portable {
		say(c.Progress, "the same with the portable Go kernels...")
		kernels.SetPortable(true)
		run, err := decodePrefill(m, c, r, max(DecodeWindow, c.Steps/4), 1)
		kernels.SetPortable(false)
		if err != nil {
			return r, err
		}
		r.Portable = &run
	}
	return r, nil
}

// decodePrefill times steps batch-1 decode steps and prefillPasses prefills (keeping the
// fastest) with the kernels currently selected.
func decodePrefill(m *model.Model, c RooflineConfig, limits Roofline, steps, prefillPasses int) (RooflineRun, error) {
	var r RooflineRun
	say(c.Progress, "batch-1 decode (%s kernels)...", kernels.Implementation())
	dec, err := Batch(m, c.Setup, 1, c.Prompt, max(steps, DecodeWindow))
	if err != nil {
		return r, err
	}
	r.DecodeSteps = dec.Steps
	r.DecodeBytesPerToken = dec.WeightBytesPerStep + dec.CacheBytesPerStep
	bestSecs, bestBytes := bestWindow(dec)
	r.DecodeTokensPerSecond = DecodeWindow / bestSecs
	r.DecodeGBs = float64(bestBytes) / bestSecs / 1e9
	r.BandwidthFraction = r.DecodeGBs / limits.BandwidthGBs
	r.MeanBandwidthFraction = dec.GBPerSecond / limits.BandwidthGBs

	r.PrefillTokens = min(c.Prefill, m.Config.Context-1)
	say(c.Progress, "prefill of %d tokens (%s kernels)...", r.PrefillTokens, kernels.Implementation())
	meter, err := NewMeter(m, c.Setup, r.PrefillTokens+1)
	if err != nil {
		return r, err
	}
	defer meter.Close()
	best := 0.0
	for range prefillPasses {
		rate, err := meter.Prompt(r.PrefillTokens)
		if err != nil {
			return r, err
		}
		best = max(best, rate)
	}
	r.PrefillSeconds = float64(r.PrefillTokens) / best
	r.PrefillGFLOPs = PrefillFlops(m, r.PrefillTokens) / r.PrefillSeconds / 1e9
	if limits.FMAPeakGFLOPs > 0 {
		r.FMAFraction = r.PrefillGFLOPs / limits.FMAPeakGFLOPs
	}
	if limits.MulAddPeakGFLOPs > 0 {
		r.MulAddFraction = r.PrefillGFLOPs / limits.MulAddPeakGFLOPs
	}
	if limits.Int8PeakGops > 0 {
		r.Int8Fraction = r.PrefillGFLOPs / limits.Int8PeakGops
	}
	return r, nil
}

// bestWindow returns the fastest DecodeWindow consecutive steps of dec: their seconds and
// the bytes they read.
func bestWindow(dec BatchResult) (bestSecs float64, bestBytes int64) {
	for i := 0; i+DecodeWindow <= len(dec.stepSeconds); i++ {
		secs, bytes := 0.0, int64(0)
		for _, k := range dec.stepSeconds[i : i+DecodeWindow] {
			secs += k
		}
		for _, b := range dec.stepBytes[i : i+DecodeWindow] {
			bytes += b
		}
		if bestSecs == 0 || secs < bestSecs {
			bestSecs, bestBytes = secs, bytes
		}
	}
	return bestSecs, bestBytes
}

// pairedWindows times windows windows of DecodeWindow batch-1 decode steps, each after
// a fresh prompt of c.Prompt tokens, with a short probe of the bandwidth (best of two passes
// over buf) before the first window and after every window, and returns the windows'
// read rates (weights and cache) and the probes, in GB/s: windowFractions sets each window
// against the better of the two probes beside it. On a host whose memory is shared with other virtual machines the
// bandwidth moves by half within minutes; a window set against probes taken seconds
// around it says how close the decode comes to what the memory gave at that moment, where
// the best window against the best probe of the whole run can pair a slow minute with a
// fast one.
func pairedWindows(m *model.Model, c RooflineConfig, buf []float32, threads, windows int) (rates, probes []float64, err error) {
	probes = []float64{bandwidthPasses(buf, threads, 2)}
	for range windows {
		dec, err := Batch(m, c.Setup, 1, c.Prompt, DecodeWindow)
		if err != nil {
			return nil, nil, err
		}
		rates = append(rates, dec.GBPerSecond)
		probes = append(probes, bandwidthPasses(buf, threads, 2))
	}
	return rates, probes, nil
}

// windowFractions returns rates[i] / max(probes[i], probes[i+1]) for every window i: the
// rate measured between two probes over the better of them. probes has one more entry
// than rates.
func windowFractions(rates, probes []float64) []float64 {
	f := make([]float64, len(rates))
	for i, r := range rates {
		f[i] = r / max(probes[i], probes[i+1])
	}
	return f
}

// weightsPeak is the peak of the arithmetic the weights' products use, and its name: the
// int8 multiply-adds for quantized weights, the unfused multiply and add otherwise.
func (r Roofline) weightsPeak() (peak float64, what string) {
	if r.QuantizedWeights && r.Int8PeakGops > 0 {
		return r.Int8PeakGops, "int8"
	}
	return r.MulAddPeakGFLOPs, "multiply+add"
}

// quantizedWeights reports whether most of the layers' weights (by count) are stored in
// ggml's block formats.
func quantizedWeights(m *model.Model) bool {
	var quantized, all float64
	for _, l := range m.Weights.Layers {
		for _, w := range []*model.Matrix{l.Wq, l.Wk, l.Wv, l.Wo, l.Gate, l.Up, l.Down} {
			n := float64(w.Rows) * float64(w.Cols)
			all += n
			if w.Quantized() {
				quantized += n
			}
		}
	}
	return all > 0 && quantized > all/2
}
