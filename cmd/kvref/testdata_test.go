package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/runsummary"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/synth"
)

var update = flag.Bool("update", false, "rewrite testdata/ from the current code")

// expectedRun is one recorded run of the tiny model in testdata/tiny.expected.json.
type expectedRun struct {
	Args   []string               `json:"args"`
	Tokens []runsummary.TokenLine `json:"tokens"`
}

var testdataRuns = [][]string{
	{"-p", "Once upon a time", "-n", "24", "--temp", "0", "--ignore-eos"},
	{"-p", "", "-n", "16", "--temp", "0", "--ignore-eos", "--block-size", "3"},
	{"-p", "kvref", "-n", "16", "--temp", "0.9", "--seed", "11", "--top-k", "20", "--ignore-eos"},
}

// TestTestdataTinyModel pins the project's own tiny model and its outputs: the generator
// and GGUF writer must reproduce testdata/tiny.gguf byte for byte, and running it must
// reproduce the recorded tokens and logits exactly. Any change to the numerics, the
// synthetic weights or the file format shows up here; run
// `go test ./cmd/kvref -run TestTestdataTinyModel -update` to re-record deliberately.
func TestTestdataTinyModel(t *testing.T) {
	dir := filepath.Join(testutil.ModuleRoot(t), "testdata")
	modelPath := filepath.Join(dir, "tiny.gguf")
	expectedPath := filepath.Join(dir, "tiny.expected.json")
	fresh, err := synth.Tiny.Bytes()
	require.NoError(t, err)

	var runs []expectedRun
	for _, args := range testdataRuns {
		full := append([]string{"run", "-m", modelPath, "--json", "--check", "-t", "1"}, args...)
		if *update {
			require.NoError(t, os.WriteFile(modelPath, fresh, 0o644))
		}
		out, stderr, code := kvref(t, full...)
		require.Equal(t, 0, code, stderr)
		runs = append(runs, expectedRun{Args: args, Tokens: parseJSONRun(t, out).Tokens})
	}
	if *update {
		b, err := json.MarshalIndent(runs, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(expectedPath, append(b, '\n'), 0o644))
		t.Logf("rewrote %s and %s", modelPath, expectedPath)
	}
	stored, err := os.ReadFile(modelPath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(stored, fresh), "synth.Tiny no longer reproduces testdata/tiny.gguf")

	data, err := os.ReadFile(expectedPath)
	require.NoError(t, err)
	var want []expectedRun
	require.NoError(t, json.Unmarshal(data, &want))
	require.Equal(t, want, runs)
}
