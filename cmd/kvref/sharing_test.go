package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

const sharedStory = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."

// TestPromptFileSharesPrefixes: three prompts sharing a long prefix run one after another in
// one cache; the second and third reuse its blocks, and each produces exactly the ids it
// produces alone.
func TestPromptFileSharesPrefixes(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	prompts := []string{sharedStory + " She ran", sharedStory + " The ball", sharedStory + " Lily said"}
	file := filepath.Join(t.TempDir(), "prompts.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(prompts, "\n")+"\n"), 0o644))

	common := []string{"-m", modelPath, "-n", "24", "--temp", "0", "--json", "--check"}
	out, stderr, code := kvref(t, append([]string{"run", "--prompt-file", file}, common...)...)
	require.Equal(t, 0, code, stderr)
	r := parseJSONRun(t, out)
	reqs := r.Summary["requests"].([]any)
	require.Len(t, reqs, 3)
	hit := func(i int) float64 { return reqs[i].(map[string]any)["prefix_hit_tokens"].(float64) }
	require.Zero(t, hit(0))
	require.GreaterOrEqual(t, hit(1)+hit(2), 64.0)
	cache := r.Summary["cache"].(map[string]any)
	require.Equal(t, hit(1)+hit(2), cache["prefix_hit_tokens"])
	t.Logf("prefix hits: %v, %v, %v; cache: %v", hit(0), hit(1), hit(2), cache)

	for i, p := range prompts {
		alone, stderr, code := kvref(t, append([]string{"run", "-p", p}, common...)...)
		require.Equal(t, 0, code, stderr)
		var want, got []int
		for _, tl := range parseJSONRun(t, alone).Tokens {
			want = append(want, tl.ID)
		}
		for _, tl := range r.Tokens {
			if *tl.Seq == i {
				got = append(got, tl.ID)
			}
		}
		require.Equal(t, want, got, "prompt %d", i)
	}
}

// TestParallelForksCopyOnWrite: -np 4 forks four continuations from one prompt; with a
// prompt ending inside a block, the first three writers each copy the shared block and the
// last one writes into it: 3 copies. Every step of every fork passes --check.
func TestParallelForksCopyOnWrite(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	out, stderr, code := kvref(t, "run", "-m", modelPath, "-p", "Once upon a time", "-n", "40", "-np", "4",
		"--temp", "1", "--seed", "3", "--json", "--check")
	require.Equal(t, 0, code, stderr)
	r := parseJSONRun(t, out)
	cache := r.Summary["cache"].(map[string]any)
	require.EqualValues(t, 3, cache["cow_copies"]) // 5 prompt tokens: block 0 is partial
	seqs := map[int][]int{}
	for _, tl := range r.Tokens {
		seqs[*tl.Seq] = append(seqs[*tl.Seq], tl.ID)
	}
	require.Len(t, seqs, 4)
	require.NotEqual(t, seqs[0], seqs[1], "forks sample with different seeds")

	// A prompt of exactly one block (16 tokens) shares only full blocks: no copies.
	prompt := "Once upon a time, there was a little girl named Lily."
	ids, _, _ := kvref(t, "tokenize", "-m", modelPath, "--json", prompt)
	require.Equal(t, 16, strings.Count(ids, ",")+1, "test prompt should be 16 tokens: %s", ids)
	out, stderr, code = kvref(t, "run", "-m", modelPath, "-p", prompt, "-n", "8", "-np", "4", "--temp", "1", "--json", "--check")
	require.Equal(t, 0, code, stderr)
	require.EqualValues(t, 0, parseJSONRun(t, out).Summary["cache"].(map[string]any)["cow_copies"])
}

// TestParallelPromptFileEqualsAlone: --parallel runs every prompt at once through the
// scheduler (continuous batching, mixed prefill and decode); each sequence's ids equal
// those of running its prompt alone.
func TestParallelPromptFileEqualsAlone(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	prompts := []string{"Once upon a time", sharedStory + " She ran", "Tom and Lily", "", sharedStory + " Lily said", "The cat"}
	file := filepath.Join(t.TempDir(), "prompts.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(prompts, "\n")), 0o644))
	common := []string{"-m", modelPath, "-n", "32", "--temp", "0", "--json", "--check", "--chunk-size", "7"}
	out, stderr, code := kvref(t, append([]string{"run", "--prompt-file", file, "--parallel"}, common...)...)
	require.Equal(t, 0, code, stderr)
	r := parseJSONRun(t, out)
	engineStats := r.Summary["engine"].(map[string]any)
	require.Greater(t, engineStats["batch_sequences_max"].(float64), 1.0, "the prompts should run batched")
	nonEmpty := prompts[:0:0]
	for _, p := range prompts {
		if strings.TrimSpace(p) != "" {
			nonEmpty = append(nonEmpty, p) // --prompt-file skips blank lines
		}
	}
	for i, p := range nonEmpty {
		alone, stderr, code := kvref(t, append([]string{"run", "-p", p}, common...)...)
		require.Equal(t, 0, code, stderr)
		var want, got []int
		for _, tl := range parseJSONRun(t, alone).Tokens {
			want = append(want, tl.ID)
		}
		for _, tl := range r.Tokens {
			if *tl.Seq == i {
				got = append(got, tl.ID)
			}
		}
		require.Equal(t, want, got, "prompt %d", i)
	}
}
