package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model/synth"
)

// corruptAfter makes kvref run flip one bit of a cached key (layer 1, position 2: slot 2 of
// block 0, the first block of a fresh pool) right after scheduler step n: every logit
// computed afterwards reads it.
func corruptAfter(t *testing.T, n int) {
	t.Helper()
	stepHook = func(eng *engine.Engine, steps int) {
		if steps != n {
			return
		}
		require.Positive(t, eng.Pool().Blocks()[0].Ref, "block 0 holds the sequence's first positions")
		eng.Pool().KRow(1, 0, 2)[5] ^= 0x40
	}
	t.Cleanup(func() { stepHook = nil })
}

// TestRunCheckPrintsOnlyVerifiedTokens: with --check, kvref run prints a token only after
// its logits have been recomputed without the cache. A clean run counts every generated
// token as checked; after a cache entry is corrupted at step 10, exactly the 10 tokens
// sampled before it are printed — as JSON lines or as streamed text — then the error.
func TestRunCheckPrintsOnlyVerifiedTokens(t *testing.T) {
	args := []string{"run", "-p", "Once upon a time", "-n", "60", "--temp", "0", "--ignore-eos", "--check", "--block-size", "4"}
	out, stderr, code := kvref(t, append(args, "--json")...)
	require.Equal(t, 0, code, stderr)
	clean := parseJSONRun(t, out)
	require.Len(t, clean.Tokens, 60)
	eng := clean.Summary["engine"].(map[string]any)
	require.EqualValues(t, 60, eng["checked_tokens"], "every printed token was checked")
	_, stderr, code = kvref(t, args...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "--check: 60 of the 60 generated tokens were printed only after")

	corruptAfter(t, 10)
	out, stderr, code = kvref(t, append(args, "--json")...)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "check failed: sequence 0 step 10")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 10, "only the verified tokens are printed, and no summary:\n%s", out)
	for i, line := range lines {
		require.NotContains(t, line, "summary")
		got := parseJSONRun(t, line+"\n"+`{"summary": {}}`).Tokens[0]
		require.Equal(t, clean.Tokens[i], got, "line %d", i)
	}

	corruptAfter(t, 10)
	out, stderr, code = kvref(t, args...)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "check failed")
	text := "Once upon a time"
	for _, tk := range clean.Tokens[:10] {
		text += tk.Piece
	}
	require.Equal(t, text, out, "the stream stops at the last verified token")
}

// nanModelFile writes the tiny synthetic model with blk.0.attn_q.weight full of NaN: it
// loads (its hyper-parameters are fine) and every logit is NaN.
func nanModelFile(t *testing.T) string {
	t.Helper()
	data, err := synth.Tiny.Bytes()
	require.NoError(t, err)
	src, err := gguf.Parse("tiny.gguf", data)
	require.NoError(t, err)
	w := gguf.NewWriter()
	for _, kv := range src.Metadata {
		w.Add(kv.Key, kv.Value)
	}
	for i := range src.Tensors {
		info := &src.Tensors[i]
		b, err := src.TensorData(info)
		require.NoError(t, err)
		if info.Name == "blk.0.attn_q.weight" {
			b = append([]byte(nil), b...)
			for j := 0; j+4 <= len(b); j += 4 {
				binary.LittleEndian.PutUint32(b[j:], math.Float32bits(float32(math.NaN())))
			}
		}
		require.NoError(t, w.AddTensor(info.Name, info.Type, info.Dims, b))
	}
	path := filepath.Join(t.TempDir(), "nan.gguf")
	require.NoError(t, w.WriteFile(path))
	return path
}

// TestRunJSONNeverPrintsAnInvalidLine: with a model whose logits are NaN, kvref run --json
// ends with an error that says so, and prints no empty or invalid JSON line.
func TestRunJSONNeverPrintsAnInvalidLine(t *testing.T) {
	path := nanModelFile(t)
	out, stderr, code := kvref(t, "run", "-m", path, "-p", "hi", "-n", "5", "--json")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "non-finite logit")
	for _, line := range strings.Split(out, "\n") {
		if line != "" {
			require.True(t, json.Valid([]byte(line)), "invalid JSON line %q", line)
		}
	}
	require.NotContains(t, out, "\n\n", "no empty lines")
}
