package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/model/synth"
)

// slidingShape is the Mistral-shaped synthetic model of the sliding-window goldens: GQA
// (8 query heads, 2 KV heads) and every layer attending over a window of 64 positions,
// which blocks of 16 split into 4.
var slidingShape = synth.Shape{Name: "kvref-synthetic-swa", Dim: 128, Layers: 4, Heads: 8, KVHeads: 2, Hidden: 256, Context: 1024, RopeBase: 10000, Seed: 1, SlidingWindow: 64}

// slidingFixture is the sliding suite recorded on slidingShape, once per test binary.
var slidingFixture struct {
	once                sync.Once
	model, twin, dir    string // the model, its window-off twin, the goldens
	stdout, stderr, err string
}

// slidingGoldens returns the sliding-window model (an ASCII vocabulary, so that
// llama-server returns every step), its twin with the window off (the same weights and
// vocabulary, attending over every position), and a directory holding the sliding suite
// recorded on the model with blocks of 16 and a pool of 128, with the recording's output.
func slidingGoldens(t *testing.T) (model, twin, dir, stdout, stderr string) {
	t.Helper()
	f := &slidingFixture
	f.once.Do(func() {
		root, err := os.MkdirTemp("", "kvref-sliding-goldens-")
		if err != nil {
			f.err = err.Error()
			return
		}
		sharedDirs.Store(root, true)
		off := slidingShape
		off.Name, off.SlidingWindow = "kvref-synthetic-swa-off", 0
		f.model, f.twin, f.dir = filepath.Join(root, "swa.gguf"), filepath.Join(root, "swa-off.gguf"), filepath.Join(root, "goldens")
		for path, shape := range map[string]synth.Shape{f.model: slidingShape, f.twin: off} {
			data, err := os.ReadFile(asciiVocabModel(t, shape))
			if err == nil {
				err = os.WriteFile(path, data, 0o644)
			}
			if err != nil {
				f.err = err.Error()
				return
			}
		}
		var out, errb bytes.Buffer
		if code := Main([]string{"golden", "--model", f.model, "--suite", "sliding", "--out", f.dir, "-t", "2"}, &out, &errb); code != 0 {
			f.err = fmt.Sprintf("kvref golden exited %d: %s", code, errb.String())
		}
		f.stdout, f.stderr = out.String(), errb.String()
	})
	require.False(t, f.err != "", f.err)
	return f.model, f.twin, f.dir, f.stdout, f.stderr
}

// queryPos is the position of the query whose logits gave step s of a request of the
// golden: its last prompt token's for step 0.
func queryPos(t *testing.T, goldens map[string]*golden.Golden, scenario, request string, step int) int {
	t.Helper()
	r := goldens[scenario].Request(request)
	require.NotNil(t, r, "%s/%s", scenario, request)
	return len(r.PromptIDs) - 1 + step
}

// TestGoldenSlidingSuiteAgainstKvrefServer records the sliding suite on a Mistral-shaped
// synthetic model (window 64, blocks of 16) and verifies kvref serve on the same model,
// block size and pool live and teacher-forced: every scenario passes, every expected hit
// and every optional hit on reclaimed blocks is observed. Then the counter-checks: kvref
// serve on the same weights with the window off fails every scenario, only at queries past
// the window; a candidate that recomputes what its window released passes with notes;
// one that misses the prefix a live sequence holds is vacuous.
func TestGoldenSlidingSuiteAgainstKvrefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("records the sliding suite and serves it twice")
	}
	model, twin, dir, out, stderr := slidingGoldens(t)
	require.Contains(t, out, "recorded 4 scenarios into "+dir)
	for _, name := range []string{"window-crossing-block-boundary", "window-crossing-mid-block", "shared-prefix-slid-past", "preempt-after-reclaim"} {
		require.Regexp(t, `kvref golden: `+name+`\.f32 .*, \d+ blocks reclaimed`, stderr)
	}
	require.Regexp(t, `preempt-after-reclaim\.f32 .* [1-9]\d* preemptions`, stderr)
	_, list, err := golden.ReadDir(dir)
	require.NoError(t, err)
	goldens := map[string]*golden.Golden{}
	for _, g := range list {
		goldens[g.Scenario.Name] = g
		require.Equal(t, 64, g.Model.SlidingWindow)
	}

	work := t.TempDir()
	dump, junit := filepath.Join(work, "kvref-serve.jsonl"), filepath.Join(work, "junit.xml")
	url := serveKvref(t, model, 16, 128)
	out, stderr, code := kvref(t, "verify", "--golden", dir, "--target", url, "-m", model, "--save", dump, "--junit", junit, "-t", "2")
	require.Equal(t, 0, code, out+stderr)
	t.Logf("kvref verify against kvref serve:\n%s", out)
	require.Contains(t, out, "PASS: 4 scenarios, 4 passed, 0 unsupported, 0 failed, 0 vacuous, 0 missing; expected cache hits observed: 3 of 3; optional hits on blocks a sliding window released: 3 of 3; teacher-forced")
	require.Regexp(t, `window-crossing-block-boundary\.f32 +pass +5 +118 +reclaimed 2/2 +cached_tokens`, out)
	require.Regexp(t, `shared-prefix-slid-past\.f32 +pass +4 +72 +3/3 +cached_tokens`, out)
	for name, failure := range junitCases(t, junit) {
		require.Empty(t, failure, name)
	}

	// The same weights with the window off: every scenario fails, and only where a query
	// no longer sees position 0 (the window is what the goldens hold it to).
	wrong := serveKvref(t, twin, 16, 128)
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--target", wrong, "-m", model, "--json", "-t", "2")
	require.Equal(t, 1, code, stderr)
	rep := decodeReport(t, out, stderr)
	require.Len(t, rep.Scenarios, 4)
	for _, s := range rep.Scenarios {
		require.Equal(t, golden.StatusFail, s.Status, s.Name)
		for _, f := range s.Failures {
			require.Contains(t, []string{golden.KindLogprob, golden.KindToken}, f.Kind, "%s: %s", s.Name, f.Message)
			require.GreaterOrEqual(t, queryPos(t, goldens, s.Name, f.Request, f.Step), 64, "%s: %s", s.Name, f.Message)
		}
	}
	first := rep.Scenarios[0].Failures[0]
	require.Equal(t, "A", first.Request)
	require.Equal(t, 64, queryPos(t, goldens, "window-crossing-block-boundary.f32", "A", first.Step), "A fails at the first query past the window: %s", first.Message)

	// A candidate that drops the blocks its window released recomputes the crossing
	// classes' re-requests and reuses only the shared prefix for F: still a pass.
	mutate := func(name string, edit func(scenario, request string, r *golden.CandidateRequest)) string {
		c, err := golden.ReadDumpFile(dump)
		require.NoError(t, err)
		for sn, cs := range c.Scenarios {
			for id, r := range cs.Requests {
				edit(sn, id, r)
			}
		}
		path := filepath.Join(work, name)
		require.NoError(t, golden.WriteDumpFile(path, c))
		return path
	}
	zero, x := 0, 32
	dropping := mutate("dropping.jsonl", func(sn, id string, r *golden.CandidateRequest) {
		switch {
		case strings.HasPrefix(sn, "window-crossing") && (id == "R" || id == "S"):
			r.CachedTokens = &zero
		case strings.HasPrefix(sn, "shared-prefix") && id == "F":
			r.CachedTokens = &x
		}
	})
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--candidate", dropping, "-m", model, "--run", "window|shared", "-t", "2")
	require.Equal(t, 0, code, out+stderr)
	require.Contains(t, out, "expected cache hits observed: 3 of 3; optional hits on blocks a sliding window released: 0 of 3")
	require.Contains(t, out, "note: request S: kvref reused 112 prompt tokens, all from blocks a sliding window had released (kept cached until evicted); the candidate recomputed them")
	require.Contains(t, out, "note: request F: the candidate reused 32 prompt tokens (cached_tokens), kvref 128, of which the 96 from its first reclaimed block on")

	// E's prefix is held by H while A has slid past it: a candidate that frees it when A's
	// window leaves it has nothing to hit.
	freed := mutate("freed.jsonl", func(sn, id string, r *golden.CandidateRequest) {
		if strings.HasPrefix(sn, "shared-prefix") && id == "E" {
			r.CachedTokens = &zero
		}
	})
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--candidate", freed, "-m", model, "--run", "shared", "--json", "-t", "2")
	require.Equal(t, 1, code, stderr)
	rep = decodeReport(t, out, stderr)
	require.Equal(t, golden.StatusVacuous, rep.Scenarios[0].Status)
	require.Contains(t, rep.Scenarios[0].Vacuous[0], "request E expects a prefix-cache hit but the candidate reports 0 cached tokens (cached_tokens; kvref reused 32)")
}

// TestGoldenSlidingSuiteRefusedWithoutAWindow: asking for the sliding suite on a model
// that attends over every position is an error that says what to do; --list names the
// suite but lists it only for a model with a window.
func TestGoldenSlidingSuiteRefusedWithoutAWindow(t *testing.T) {
	_, stderr, code := kvref(t, "golden", "--suite", "sliding", "--out", t.TempDir())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the sliding suite needs a model with sliding-window attention; this model attends over every position")
	require.Contains(t, stderr, "kvref synth --sliding-window 64 makes one")

	out, _, code := kvref(t, "golden", "--list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Suite sliding: only for models with sliding-window attention")
	require.Contains(t, out, "window-crossing-mid-block [sliding]")

	path := filepath.Join(t.TempDir(), "swa.gguf")
	_, stderr, code = kvref(t, "synth", "-o", path, "--dim", "32", "--layers", "1", "--heads", "2", "--kv-heads", "1", "--hidden", "32", "--ctx", "512", "--sliding-window", "32")
	require.Equal(t, 0, code, stderr)
	out, stderr, code = kvref(t, "golden", "--list", "--model", path, "--block-size", "8", "--cache-blocks", "64")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "context 512, sliding window 32")
	require.Contains(t, out, "Suite sliding: 4 scenarios")
	_, stderr, code = kvref(t, "golden", "--suite", "sliding", "--model", path, "--block-size", "32", "--out", t.TempDir())
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the block size is 32 (Params.BlockSize), at most 16 works: record with --block-size 16 or less")
	// A skipped scenario's reason names the library's parameters; the command says which
	// of its flags set them.
	_, stderr, code = kvref(t, "golden", "--suite", "sliding", "--model", path, "--block-size", "8", "--cache-blocks", "28",
		"--run", "^window-crossing-mid-block", "--out", t.TempDir())
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "kvref golden: skipping window-crossing-block-boundary.f32: needs about 32 blocks, the pool has 28 (Params.Blocks)")
	require.Contains(t, stderr, "kvref golden: (--cache-blocks sets Params.Blocks, --block-size Params.BlockSize, -c Params.Context)")
	require.Contains(t, out, "(skipped preempt-recompute.f32: with a sliding window of 32 every sequence holds at most 5 blocks of 8")

	dir := t.TempDir()
	_, stderr, code = kvref(t, "golden", "--model", path, "--suite", "sliding", "--block-size", "8", "--cache-blocks", "64", "--cache-dtypes", "f16", "--run", "shared", "--out", dir, "-t", "2")
	require.Equal(t, 0, code, stderr)
	man, goldens, err := golden.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, goldens, 1)
	require.Equal(t, "shared-prefix-slid-past.f16", goldens[0].Scenario.Name)
	require.Equal(t, 32, man.Params.Window)
	b, err := json.Marshal(man.Params)
	require.NoError(t, err)
	require.Contains(t, string(b), `"sliding_window":32,"reclaims":true`)
}
