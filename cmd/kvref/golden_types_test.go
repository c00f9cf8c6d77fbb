package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/quant"
)

// TestGoldenAtLlamaCacheTypes records goldens with the reference cache in llama.cpp's
// spellings — --cache-dtype q4_0 (keys and values), and -ctk q5_1 -ctv iq4_nl (a pair) —
// and verifies kvref's server running the same cache types, selecting the goldens with the
// same flags: teacher-forced, every step must match exactly (worst error 0), every expected
// hit observed.
func TestGoldenAtLlamaCacheTypes(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	for _, c := range []struct {
		record []string
		k, v   quant.CacheType
		name   string
	}{
		{[]string{"--cache-dtype", "q4_0"}, quant.Q4_0, quant.Q4_0, "mixed-hits-misses.q4_0"},
		{[]string{"-ctk", "q5_1", "-ctv", "iq4_nl"}, quant.Q5_1, quant.IQ4_NL, "mixed-hits-misses.q5_1+iq4_nl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"golden", "--model", modelPath, "--run", "^mixed-hits-misses", "--out", dir, "-t", "2"}, c.record...)
			out, stderr, code := kvref(t, args...)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, out, "recorded 1 scenarios")
			man, goldens, err := golden.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, goldens, 1)
			require.Equal(t, c.name, goldens[0].Scenario.Name)
			k, v, err := goldens[0].Scenario.Cache.Types()
			require.NoError(t, err)
			require.Equal(t, []quant.CacheType{c.k, c.v}, []quant.CacheType{k, v})
			require.Equal(t, c.name+".json", man.Scenarios[0].File)

			url := serveKvrefWith(t, modelPath, engine.Config{BlockSize: 16, CacheBlocks: 128, Threads: 2, KType: c.k, VType: c.v})
			out, stderr, code = kvref(t, append([]string{"verify", "--golden", dir, "--target", url, "-m", modelPath, "--json", "-t", "2"}, c.record...)...)
			require.Equal(t, 0, code, out+stderr)
			var rep golden.Report
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			require.Len(t, rep.Scenarios, 1)
			s := rep.Scenarios[0]
			require.Equal(t, golden.StatusPass, s.Status)
			require.Zero(t, s.WorstError, "the same cache types give the same logits")
			require.Equal(t, s.ExpectedHits, s.ObservedHits)
			require.Positive(t, s.StepsCompared)

			// Selecting other types finds nothing to check.
			_, stderr, code = kvref(t, "verify", "--golden", dir, "--target", url, "-m", modelPath, "-ctk", "q8_0")
			require.Equal(t, 1, code)
			require.Contains(t, stderr, "no golden matches")
		})
	}
	_, stderr, code := kvref(t, "golden", "--model", modelPath, "--cache-dtypes", "q8_0", "-ctk", "q4_0", "--out", filepath.Join(t.TempDir(), "x"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "not both")
}
