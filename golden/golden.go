package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/digest"
)

// Golden is the recorded result of one scenario on kvref: what every request was sent and
// what kvref produced, step by step, with the tolerance policy a candidate is held to.
type Golden struct {
	Format       string          `json:"format"`
	KvrefVersion string          `json:"kvref_version"`
	Model        ModelInfo       `json:"model"`
	Scenario     Scenario        `json:"scenario"`
	TopK         int             `json:"top_k"`
	Tolerance    Tolerance       `json:"tolerance"`
	Stats        RunStats        `json:"stats"`
	Requests     []GoldenRequest `json:"requests"`
	FullLogits   string          `json:"full_logits,omitempty"` // file beside the golden, when recorded with full logits

	// logits holds, when recorded with full logits, the raw logits of every step:
	// request id → continuation → step → vocabulary. It is written as safetensors.
	logits map[string][][][]float32
}

// ModelInfo identifies the model a golden was recorded with.
type ModelInfo struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Source  string `json:"source,omitempty"` // kvref's description of where it came from
	Vocab   int    `json:"vocab"`
	Context int    `json:"context"`
	BOS     int    `json:"bos"`
	EOS     int    `json:"eos"`
	// SlidingWindow is the model's attention window (0: every position), so a reader of a
	// golden knows positions older than it are masked.
	SlidingWindow int `json:"sliding_window,omitempty"`
}

// Tolerance is the comparison policy of a golden. Every field but QuantizationError can
// be overridden when verifying.
//
// Logprob and Margin are the tolerances of an f32 reference cache. For a golden recorded
// with a quantized cache, a candidate whose cache quantizes differently from kvref's (or
// not at all) may sit anywhere within the quantization error q on either side of the f32
// result, so the tolerances become Logprob + 2q and Margin + 4q (the margin involves two
// log-probabilities). With teacher forcing q is measured at each step on the candidate's
// own history (the largest |quantized − f32| reference log-probability over the tokens
// compared there); without it, q is QuantizationError, measured over the golden's history
// when it was recorded.
type Tolerance struct {
	Logprob           float64 `json:"logprob"`            // largest allowed |candidate − reference| log-probability (f32 cache)
	Margin            float64 `json:"margin"`             // a chosen token may differ from the reference argmax only where the reference margin is below this (f32 cache)
	MaxRepeat         int     `json:"max_repeat"`         // this many identical tokens in a row that the reference does not produce is degenerate
	MinSampleLogprob  float64 `json:"min_sample_logprob"` // a sampled token less likely than this under the reference is implausible
	QuantizationError float64 `json:"quantization_error"` // measured when recording: largest |Δ log-probability| between this cache type and f32
	Policy            string  `json:"policy"`             // the rule in words
}

// DefaultTolerance is the policy of an f32-cache golden: log-probabilities within 0.05 of
// the reference (an f16-cache engine is within ~0.02 on stories260K; see docs/golden.md), a
// different token only where the reference margin is below 0.1 (twice the log-probability
// tolerance, since each of the two top logits may be off by it), 16 repeats.
func DefaultTolerance() Tolerance {
	return Tolerance{Logprob: 0.05, Margin: 0.1, MaxRepeat: 16, MinSampleLogprob: -20}
}

// logprobTol and marginTol are the tolerances at a step whose quantization error is q.
func (t Tolerance) logprobTol(q float64) float64 { return t.Logprob + 2*q }
func (t Tolerance) marginTol(q float64) float64  { return t.Margin + 4*q }

func (t Tolerance) describe() string {
	s := fmt.Sprintf("teacher-forced comparison: every candidate log-probability within %.3g of the reference on the candidate's own token history; "+
		"a chosen token may differ from the reference argmax only where the reference margin is below %.3g; "+
		"%d identical tokens in a row that the reference does not produce fail as degenerate; sampled tokens must have reference log-probability ≥ %g",
		t.Logprob, t.Margin, t.MaxRepeat, t.MinSampleLogprob)
	if t.QuantizationError > 0 {
		s += fmt.Sprintf("; quantized reference cache: tolerances widened to %.3g + 2q and %.3g + 4q, where q is the quantization error against f32 (measured per step with teacher forcing; %.3g over the golden's history)",
			t.Logprob, t.Margin, t.QuantizationError)
	}
	return s
}

// RunStats are kvref's scheduler and cache totals for the reference run of a scenario.
type RunStats struct {
	Steps           int   `json:"steps"`
	Preemptions     int   `json:"preemptions"`
	Evictions       int64 `json:"evictions"`
	PrefixHitTokens int64 `json:"prefix_hit_tokens"`
	CowCopies       int64 `json:"cow_copies"`
	PeakBlocksUsed  int   `json:"peak_blocks_used"`
	BlocksReclaimed int64 `json:"blocks_reclaimed,omitempty"` // released because every layer's sliding window had moved past them
}

// GoldenRequest is one request of a golden, resolved: the exact prompt ids and stop strings
// to send, and what kvref produced.
type GoldenRequest struct {
	ID           string          `json:"id"`
	Event        int             `json:"event"` // index of the submit event (the wave) in scenario.events
	PromptIDs    []int           `json:"prompt_ids"`
	MaxTokens    int             `json:"max_tokens"`
	N            int             `json:"n"`
	Sampling     engine.Sampling `json:"sampling"`
	IgnoreEOS    bool            `json:"ignore_eos"`
	Stop         []string        `json:"stop,omitempty"`
	ExpectCache  string          `json:"expect_cache,omitempty"`
	CachedTokens int             `json:"cached_tokens"` // prompt tokens kvref took from its cache
	// ReclaimedTokens is the part of CachedTokens from the first reused block on that, when
	// kvref reused it, no sequence held and whose last holder had released it by sliding
	// past it (kvcache.Pool.Reclaim), not by finishing: kvref keeps such a block cached
	// until evicted, an engine that drops what its window leaves recomputes from there
	// on, and both are right. CachedTokens − ReclaimedTokens is the hit a candidate must show.
	ReclaimedTokens int            `json:"reclaimed_tokens,omitempty"`
	Preemptions     int            `json:"preemptions"`
	Cancelled       bool           `json:"cancelled"`
	Choices         []GoldenChoice `json:"choices"`
	// PromptSteps are, for a request with prompt_logprobs, the log-probabilities of prompt
	// tokens 1 to n−1: PromptSteps[i] is prompt token i+1 (its id, log-probability, and the
	// top-k and margin of the distribution it was drawn from).
	PromptSteps []Step `json:"prompt_steps,omitempty"`
}

// Greedy reports whether the request samples greedily.
func (r *GoldenRequest) Greedy() bool { return r.Sampling.Greedy() }

// GoldenChoice is one continuation of a golden request.
type GoldenChoice struct {
	Index        int    `json:"index"`
	FinishReason string `json:"finish_reason"` // kvref's: eos, stop, length, context or cancelled
	OutputIDs    []int  `json:"output_ids"`
	Text         string `json:"text"`
	Steps        []Step `json:"steps"`
}

// Request returns the golden request with the given id, or nil.
func (g *Golden) Request(id string) *GoldenRequest {
	for i := range g.Requests {
		if g.Requests[i].ID == id {
			return &g.Requests[i]
		}
	}
	return nil
}

// Manifest lists the goldens of a directory and how they were recorded.
type Manifest struct {
	Format       string          `json:"format"`
	KvrefVersion string          `json:"kvref_version"`
	Model        ModelInfo       `json:"model"`
	Suite        string          `json:"suite"`
	Params       Params          `json:"params"`
	TopK         int             `json:"top_k"`
	Scenarios    []ManifestEntry `json:"scenarios"`
}

// ManifestEntry is one golden of a directory.
type ManifestEntry struct {
	Name      string `json:"name"`
	Class     string `json:"class"`
	CacheType string `json:"cache_type"`
	File      string `json:"file"`
}

// ManifestFile is the name of the manifest in a golden directory.
const ManifestFile = "manifest.json"

// WriteDir writes the manifest, one NAME.json per golden and, for goldens with full
// logits, NAME.logits.safetensors. Files are compact JSON with no timestamps, so recording
// the same suite twice gives the same bytes.
func WriteDir(dir string, m *Manifest, goldens []*Golden) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	m.Format = ManifestFormat
	m.Scenarios = m.Scenarios[:0]
	for _, g := range goldens {
		file := g.Scenario.Name + ".json"
		if g.logits != nil {
			g.FullLogits = g.Scenario.Name + ".logits.safetensors"
			if err := writeLogits(filepath.Join(dir, g.FullLogits), g); err != nil {
				return err
			}
		}
		if err := writeJSON(filepath.Join(dir, file), g); err != nil {
			return err
		}
		m.Scenarios = append(m.Scenarios, ManifestEntry{Name: g.Scenario.Name, Class: g.Scenario.Class, CacheType: g.Scenario.Cache.TypeName(), File: file})
	}
	return writeJSON(filepath.Join(dir, ManifestFile), m)
}

func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("golden: writing %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// ErrNoManifest is returned (wrapped) by ReadDir for a directory without a manifest: no
// goldens were ever written there.
var ErrNoManifest = errors.New("golden: not a golden directory")

// ReadDir reads a golden directory written by WriteDir, in manifest order.
func ReadDir(dir string) (*Manifest, []*Golden, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s has no %s, so no goldens (WriteDir writes them)", ErrNoManifest, dir, ManifestFile)
	}
	if err != nil {
		return nil, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, nil, fmt.Errorf("golden: %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Format != ManifestFormat {
		return nil, nil, fmt.Errorf("golden: %s has format %q, want %q", filepath.Join(dir, ManifestFile), m.Format, ManifestFormat)
	}
	var out []*Golden
	for _, e := range m.Scenarios {
		g, err := ReadGolden(filepath.Join(dir, e.File))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, g)
	}
	return &m, out, nil
}

// ReadGolden reads one golden file and checks its structure.
func ReadGolden(path string) (*Golden, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("golden: %s: %w", path, err)
	}
	if g.Format != GoldenFormat {
		return nil, fmt.Errorf("golden: %s has format %q, want %q", path, g.Format, GoldenFormat)
	}
	if err := g.Scenario.Validate(); err != nil {
		return nil, fmt.Errorf("golden: %s: %w", path, err)
	}
	for _, r := range g.Scenario.Requests() {
		gr := g.Request(r.ID)
		if gr == nil {
			return nil, fmt.Errorf("golden: %s: request %s of the scenario has no recorded result", path, r.ID)
		}
		if len(gr.Choices) != max(gr.N, 1) {
			return nil, fmt.Errorf("golden: %s: request %s asks for %d continuations but has %d", path, r.ID, max(gr.N, 1), len(gr.Choices))
		}
		for _, c := range gr.Choices {
			if len(c.Steps) != len(c.OutputIDs) {
				return nil, fmt.Errorf("golden: %s: request %s continuation %d has %d output ids but %d steps", path, r.ID, c.Index, len(c.OutputIDs), len(c.Steps))
			}
		}
	}
	return &g, nil
}

// FileSHA256 returns the hex SHA-256 of a file (internal/digest: a large file is read for it
// once per version).
func FileSHA256(path string) (string, error) { return digest.File(path) }

// BytesSHA256 returns the hex SHA-256 of b.
func BytesSHA256(b []byte) string { return digest.Bytes(b) }

// Version describes the kvref build: the module version and, when the binary was built
// from a repository, the commit ("+dirty" when it had uncommitted changes).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "kvref (unknown build)"
	}
	v := "kvref " + info.Main.Version
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev[:min(12, len(rev))] + dirty
	}
	return v
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
