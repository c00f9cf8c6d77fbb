// Package runsummary is what kvref run reports: the --json line of each token (TokenLine),
// and the sum of a run of requests through one engine (Summary: tokens, cache hits,
// timings, and the pool's and the scheduler's counters), as JSON or as text.
package runsummary

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// Summary adds up the results of a run of requests through one engine, as kvref run
// --json prints it in its last line: tokens, cache hits, timings and, once the run is over
// (Finish), the pool's and the scheduler's counters.
type Summary struct {
	PromptTokens    int     `json:"prompt_tokens"`
	PrefixHitTokens int     `json:"prefix_hit_tokens"`
	GeneratedTokens int     `json:"generated_tokens"`
	BytesPerToken   int64   `json:"bytes_per_token"`
	BlockSize       int     `json:"block_size"`
	BlocksUsed      int     `json:"blocks_used"`      // peak during the run
	BlocksReclaimed int64   `json:"blocks_reclaimed"` // released as sequences slid past them (sliding-window attention)
	CacheTypeK      string  `json:"cache_type_k"`
	CacheTypeV      string  `json:"cache_type_v"`
	Context         int     `json:"context"`
	Threads         int     `json:"threads"`
	PrefillMS       float64 `json:"prefill_ms"`
	DecodeMS        float64 `json:"decode_ms"`
	TokensPerSecond float64 `json:"tokens_per_second"` // decoded tokens (each continuation's first comes from prefill) per second of decode
	Check           bool    `json:"check"`
	// Groups are the cache groups of a model with sliding layers beside full ones: each
	// group's layers, window, peak blocks and blocks its window released.
	Groups       []Group        `json:"groups,omitempty"`
	Requests     []Request      `json:"requests"`
	Cache        *kvcache.Stats `json:"cache"`
	Engine       *engine.Stats  `json:"engine"`
	decodeTokens int
}

// Group is one cache group's line of a Summary.
type Group struct {
	Group           int   `json:"group"`
	Layers          []int `json:"layers"`
	Window          int   `json:"window"`           // 0: full attention
	PeakBlocksUsed  int   `json:"peak_blocks_used"` // most blocks in use at the end of a step
	BlocksReclaimed int64 `json:"blocks_reclaimed"` // released by the window
	BlocksCached    int   `json:"blocks_cached"`    // kept for prefix hits at the end
}

// Request is one request's line of a Summary.
type Request struct {
	PromptTokens    int      `json:"prompt_tokens"`
	PrefixHitTokens int      `json:"prefix_hit_tokens"`
	Generated       []int    `json:"generated_tokens"` // per continuation
	StopReasons     []string `json:"stop_reasons"`
	Preemptions     int      `json:"preemptions"`
}

// New starts the summary of a run on e: its cache shape, context and threads; check says
// whether the run is checked against the cache-free reference.
func New(e *engine.Engine, check bool) *Summary {
	pc := e.Pool().Config()
	return &Summary{BlockSize: pc.BlockSize, BytesPerToken: pc.BytesPerToken(), CacheTypeK: pc.KType.String(),
		CacheTypeV: pc.VType.String(), Context: e.Context(), Threads: e.Runner().Threads(), Check: check}
}

// Add counts one finished request.
func (s *Summary) Add(r engine.Result) {
	s.PromptTokens += r.PromptTokens
	s.PrefixHitTokens += r.PrefixHitTokens
	rs := Request{PromptTokens: r.PromptTokens, PrefixHitTokens: r.PrefixHitTokens, StopReasons: r.StopReasons, Preemptions: r.Preemptions}
	for _, o := range r.Outputs {
		s.GeneratedTokens += len(o)
		s.decodeTokens += max(len(o)-1, 0)
		rs.Generated = append(rs.Generated, len(o))
	}
	s.Requests = append(s.Requests, rs)
	s.PrefillMS += milliseconds(r.Prefill)
	s.DecodeMS += milliseconds(r.Decode)
	if s.DecodeMS > 0 {
		s.TokensPerSecond = float64(s.decodeTokens) / (s.DecodeMS / 1000)
	}
}

// Finish records the pool's counters and the scheduler's at the end of the run: the peak
// blocks used and the blocks a sliding window reclaimed.
func (s *Summary) Finish(pool kvcache.Stats, sched engine.Stats) {
	s.Cache, s.Engine = &pool, &sched
	s.BlocksUsed, s.BlocksReclaimed = sched.PeakBlocksUsed, pool.BlocksReclaimed
	s.Groups = nil
	for g, gs := range pool.Groups {
		gsum := Group{Group: g, Layers: gs.Layers, Window: gs.Window, BlocksReclaimed: gs.BlocksReclaimed, BlocksCached: gs.BlocksCached}
		if g < len(sched.PeakGroupBlocksUsed) {
			gsum.PeakBlocksUsed = sched.PeakGroupBlocksUsed[g]
		}
		s.Groups = append(s.Groups, gsum)
	}
}

// WriteText writes the summary as kvref run prints it on its standard error: the tokens,
// steps and timings, the cache's peak, and, when they apply, the blocks a sliding window of
// window tokens reclaimed (window 0: none), the cache groups, and the checked tokens. It
// needs Finish to have run.
func (s *Summary) WriteText(w io.Writer, window int) {
	fmt.Fprintf(w, "kvref: %d prompt tokens (%d from cache), %d generated in %d steps (mean batch %.1f tokens, %d preemptions); prefill %.1f ms, decode %.1f ms (%.1f tokens/s); cache %s, %d B/token, %d blocks of %d used at peak\n",
		s.PromptTokens, s.PrefixHitTokens, s.GeneratedTokens, s.Engine.Steps, s.Engine.RowsMean, s.Engine.Preemptions, s.PrefillMS, s.DecodeMS, s.TokensPerSecond,
		s.CacheTypeK, s.BytesPerToken, s.BlocksUsed, s.BlockSize)
	if window > 0 {
		fmt.Fprintf(w, "kvref: sliding window %d: %d blocks reclaimed as sequences slid past them\n", window, s.BlocksReclaimed)
	}
	if len(s.Groups) > 0 {
		var full, sliding []string
		for _, g := range s.Groups {
			if g.Window > 0 {
				sliding = append(sliding, fmt.Sprintf("%d", g.PeakBlocksUsed))
			} else {
				full = append(full, fmt.Sprintf("%d", g.PeakBlocksUsed))
			}
		}
		fmt.Fprintf(w, "kvref: %d cache groups of %d layers: peak blocks per full group %s, per sliding group (window %d) %s; %d blocks released by the window\n",
			len(s.Groups), len(s.Groups[0].Layers), strings.Join(full, " "), s.Groups[len(s.Groups)-1].Window, strings.Join(sliding, " "), s.BlocksReclaimed)
	}
	if s.Check {
		fmt.Fprintf(w, "kvref: --check: %d of the %d generated tokens were printed only after their logits were recomputed without the cache: bit-identical\n",
			s.Engine.CheckedTokens, s.GeneratedTokens)
	}
}

// TokenLine is kvref run's --json line for one generated token: its sequence (when the
// run has several), step, position, id, text piece and the top log-probabilities.
type TokenLine struct {
	Seq   *int         `json:"seq,omitempty"`
	Step  int          `json:"step"`
	Pos   int          `json:"pos"`
	ID    int          `json:"id"`
	Piece string       `json:"piece"`
	Top   [][2]float64 `json:"top"`
}

// milliseconds is d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
