package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenHybridSuiteAgainstKvrefServer records the hybrid suite (`kvref golden --suite
// hybrid`) on a synthetic Gemma 3 (12 layers, every sixth global: one full cache group and
// five sliding ones of 2 layers, window 32) with blocks of 16 and a pool of 128, and
// verifies kvref serve on the same model, block size and pool live and teacher-forced:
// every scenario passes, every expected hit and every optional hit is observed. The
// recording's own checks (bitwise against the reference, releases, evictions only in the
// sliding groups, the shortened hit, preemption after a release) must all hold.
func TestGoldenHybridSuiteAgainstKvrefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("records the hybrid suite and serves it")
	}
	dir := t.TempDir()
	model, goldens := filepath.Join(dir, "gemma3.gguf"), filepath.Join(dir, "goldens")
	_, stderr, code := kvref(t, "synth", "--arch", "gemma3", "--layers", "12", "--dim", "64", "--heads", "4", "--kv-heads", "1",
		"--hidden", "128", "--sliding-window", "32", "-c", "1024", "-o", model)
	require.Equal(t, 0, code, stderr)
	out, stderr, code := kvref(t, "golden", "--model", model, "--suite", "hybrid", "--out", goldens, "-t", "2")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "recorded 6 scenarios into "+goldens)
	require.Regexp(t, `hybrid-hit-shortened\.f32 .* [1-9]\d* evictions, 0 preemptions, \d+ blocks reclaimed`, stderr)
	require.Regexp(t, `hybrid-preempt-across-window\.f32 .* [1-9]\d* preemptions`, stderr)

	url := serveKvref(t, model, 16, 128)
	out, stderr, code = kvref(t, "verify", "--golden", goldens, "--target", url, "-m", model, "-t", "2")
	require.Equal(t, 0, code, out+stderr)
	t.Logf("kvref verify against kvref serve:\n%s", out)
	require.Contains(t, out, "PASS: 6 scenarios, 6 passed, 0 unsupported, 0 failed, 0 vacuous, 0 missing; expected cache hits observed: 2 of 2; optional hits on blocks a sliding window released: 5 of 5; teacher-forced")
	require.Regexp(t, `hybrid-hit-shortened\.f32 +pass +4 +11 +1/1, reclaimed 1/1`, out)

	// The same shape with every layer global (a Hugging Face directory: a gemma3 GGUF
	// fixes the pattern) gives other logits past the window: kvref serve on it fails.
	off := filepath.Join(dir, "gemma3-global")
	_, stderr, code = kvref(t, "synth", "--arch", "gemma3", "--layers", "12", "--dim", "64", "--heads", "4", "--kv-heads", "1",
		"--hidden", "128", "--sliding-window", "32", "--global-every", "1", "-c", "1024", "--format", "hf", "-o", off)
	require.Equal(t, 0, code, stderr)
	wrong := serveKvref(t, off, 16, 128)
	out, _, code = kvref(t, "verify", "--golden", goldens, "--target", wrong, "-m", model, "-t", "2")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "FAIL")
}
