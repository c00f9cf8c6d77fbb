//go:build linux

package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/nodellama"
	"github.com/kvref/kvref/internal/testutil"
)

// nodeServeArgs are serve.mjs's settings for the verify runs, as llama-server's documented
// ones (docs/golden.md): 4 sequences of 1152 tokens, an f32 cache, 1 thread.
var nodeServeArgs = []string{"--sequences", "4", "--ctx", "1152", "--threads", "1", "--cache", "f32"}

// nodeSuite is one golden suite that TestNodeLlamaCppVerify runs against serve.mjs: the
// suite, the model it is recorded on (a path, given the test) and what the test requires
// of the outcome.
type nodeSuite struct {
	name   string // the subtest
	suite  string
	record []string // kvref golden's extra flags
	model  func(t *testing.T) string
	check  func(t *testing.T, rep *golden.Report)
}

// nodeSuites are the suites run against node-llama-cpp: the default suite, the sliding suite
// on both Gemmas and on a llama-architecture window, and the hybrid suite (Gemma's per-layer
// cache groups). The six-layer Gemma 3 holds six tables per sequence (one per group), so
// its suites record with 256 blocks: all six hybrid scenarios and both sliding crossings.
var nodeSuites = []nodeSuite{
	{name: "default", suite: "default", model: func(t *testing.T) string { return testutil.Shared(t, "models/stories260K.gguf") }, check: nodeDefaultOutcome},
	{name: "sliding-gemma2", suite: "sliding", model: nodeSynth("--arch", "gemma2"), check: nodeGemmaSlidingOutcome},
	{name: "sliding-gemma3", suite: "sliding", record: []string{"--cache-blocks", "256"}, model: nodeSynth("--arch", "gemma3", "--layers", "6"), check: nodeGemmaSlidingOutcome},
	{name: "sliding-llama", suite: "sliding", model: nodeSynth("--arch", "llama"), check: nodeLlamaWindowIgnored},
	{name: "hybrid-gemma3", suite: "hybrid", record: []string{"--cache-blocks", "256"}, model: nodeSynth("--arch", "gemma3", "--layers", "6"), check: nodeGemmaSlidingOutcome},
}

// nodeWindow is the sliding window of the synthetic models of the sliding suites.
const nodeWindow = 64

// nodeSynth returns a function writing a synthetic model with a 64-token window (kvref
// synth with the given flags) into the test's temporary directory.
func nodeSynth(flags ...string) func(t *testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "model.gguf")
		args := append([]string{"synth", "-o", path, "--sliding-window", fmt.Sprint(nodeWindow), "--ctx", "2048"}, flags...)
		_, stderr, code := kvref(t, args...)
		require.Equal(t, 0, code, stderr)
		return path
	}
}

// startNodeServe starts tools/node-llama-cpp/serve.mjs on the model at a free loopback port
// and waits for /health; it is stopped when the test ends.
func startNodeServe(t *testing.T, dir, model string, extra ...string) *llamaServer {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // the free port may be taken before the server binds it
		port := freePort(t)
		args := append([]string{filepath.Join(dir, "serve.mjs"), "--model", model, "--port", port}, nodeServeArgs...)
		args = append(args, extra...)
		s, err := launch(t, "node", args, port)
		if err == nil {
			return s
		}
		lastErr = err
	}
	require.FailNow(t, fmt.Sprint(lastErr))
	return nil
}

// verifyNode runs kvref verify --target against serve.mjs (the f32 scenarios, the slot
// cache model, serve.mjs's /flush before every scenario) and logs the report's table.
func verifyNode(t *testing.T, s *llamaServer, dir, model string, extra ...string) verifyRun {
	t.Helper()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	args := []string{"verify", "--golden", dir, "--target", s.url, "-m", model, "--cache-dtype", "f32", "--cache-model", "slots",
		"--flush-url", strings.TrimSuffix(s.url, "/v1") + "/flush", "--junit", junit, "--json", "-t", "2", "--timeout", "3m"}
	args = append(args, extra...)
	start := time.Now()
	out, stderr, code := kvref(t, args...)
	rep := decodeReport(t, out, stderr)
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	t.Logf("kvref %s\n(%.1f s, exit %d)\n%s", strings.Join(args, " "), time.Since(start).Seconds(), code, table.String())
	return verifyRun{rep, stderr, code, junit}
}

// recordSuite records a suite's goldens on the model into a temporary directory.
func recordSuite(t *testing.T, suite, model string, flags ...string) string {
	t.Helper()
	if suite == "default" && len(flags) == 0 && strings.HasSuffix(model, "stories260K.gguf") {
		_, dir, _ := stories260KGoldens(t) // shared with the llama-server tests
		return dir
	}
	dir := t.TempDir()
	_, stderr, code := kvref(t, append([]string{"golden", "--model", model, "--suite", suite, "--out", dir, "-t", "2"}, flags...)...)
	require.Equal(t, 0, code, stderr)
	return dir
}

// TestNodeLlamaCppVerify runs kvref verify's suites (nodeSuites) against llama.cpp 0.5.0
// through serve.mjs. The hit evidence is serve.mjs's own claim (the prompt tokens its
// sequence kept, usage.prompt_tokens_details.cached_tokens): llama.cpp reports none.
func TestNodeLlamaCppVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node-llama-cpp through whole golden suites (minutes)")
	}
	if puregoBuild {
		// What is checked here is llama.cpp's cache; the run with kvref's assembly kernels
		// checks it, and internal/nodellama compares the portable kernels' logits with it.
		t.Skip("-tags purego: llama.cpp's cache is verified by the default build's run (4 minutes saved)")
	}
	dir := nodellama.Require(t, nodellama.ToolDir(testutil.ModuleRoot(t)))
	for _, ns := range nodeSuites {
		t.Run(ns.name, func(t *testing.T) {
			model := ns.model(t)
			goldens := recordSuite(t, ns.suite, model, ns.record...)
			srv := startNodeServe(t, dir, model)
			run := verifyNode(t, srv, goldens, model)
			ns.check(t, run.rep)
		})
	}
}

// nodeDefaultOutcome is what llama.cpp 0.5.0 does with the default suite on stories260K.
func nodeDefaultOutcome(t *testing.T, rep *golden.Report) {
	t.Helper()
	require.Len(t, rep.Scenarios, 13)
	var lines []string
	for _, s := range rep.Scenarios {
		lines = append(lines, fmt.Sprintf("%s %s hits %d/%d (+%d slot) worst %.2g", s.Name, s.Status, s.ObservedHits, s.ExpectedHits, s.SlotBoundHits, s.WorstError))
		require.Equal(t, golden.StatusPass, s.Status, "%s: %+v %v", s.Name, s.Failures, s.Vacuous)
		require.Equal(t, golden.EvidenceCachedTokens, s.HitEvidence, s.Name)
		require.Less(t, s.WorstError, 1e-3, "%s: llama.cpp 0.5.0 with an f32 cache agrees with kvref to about 1e-5", s.Name)
	}
	require.True(t, rep.Passed)
	t.Log(strings.Join(lines, "\n"))
}

// nodeGemmaSlidingOutcome (also the hybrid suite's check): on a synthetic Gemma 2 (sliding and global layers alternating)
// or Gemma 3 (five sliding layers of 64 tokens, one global), llama.cpp 0.5.0's iSWA cache
// passes the sliding scenarios the model admits, its
// hits observed; the error is ggml's f16 GELU table (internal/nodellama's
// TestGemmaGapIsTheFeedForward), about 1e-3 in log-probability.
func nodeGemmaSlidingOutcome(t *testing.T, rep *golden.Report) {
	t.Helper()
	require.NotEmpty(t, rep.Scenarios)
	for _, s := range rep.Scenarios {
		require.Equal(t, golden.StatusPass, s.Status, "%s: %+v %v", s.Name, s.Failures, s.Vacuous)
		require.Equal(t, golden.EvidenceCachedTokens, s.HitEvidence, s.Name)
		require.Equal(t, s.ExpectedHits, s.ObservedHits+s.SlotBoundHits, s.Name)
		require.Less(t, s.WorstError, 5e-3, s.Name)
	}
	require.True(t, rep.Passed)
}

// positionRE finds the position a failure message names.
var positionRE = regexp.MustCompile(`\(position (\d+)\)`)

// nodeLlamaWindowIgnored: llama.cpp's llama architecture has no sliding window (it ignores
// llama.sliding_window, as transformers' LlamaForCausalLM does; Mistral-style windows are
// kvref's reading of the key), so every sliding scenario fails, and only where the window
// matters: no failure names a position inside the first window. An expected difference,
// not a defect.
func nodeLlamaWindowIgnored(t *testing.T, rep *golden.Report) {
	t.Helper()
	require.False(t, rep.Passed)
	require.NotEmpty(t, rep.Scenarios)
	for _, s := range rep.Scenarios {
		require.Equal(t, golden.StatusFail, s.Status, s.Name)
		first := -1
		for _, f := range s.Failures {
			require.Contains(t, []string{golden.KindLogprob, golden.KindToken}, f.Kind, "%s: %s", s.Name, f.Message)
			m := positionRE.FindStringSubmatch(f.Message)
			require.NotNil(t, m, "%s: a failure without a position: %s", s.Name, f.Message)
			pos, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			require.GreaterOrEqual(t, pos, nodeWindow, "%s: %s", s.Name, f.Message)
			if first < 0 || pos < first {
				first = pos
			}
		}
		t.Logf("%s: %d failures, the first at position %d (window %d)", s.Name, len(s.Failures), first, nodeWindow)
	}
}
