package main

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/quant"
)

// llamaMixes are llama-quantize's file types built from ggml's block types (its IQ types
// excluded, and Q2_K_S, which it refuses to make without an importance matrix): the
// k-quant mixes choose a type per tensor (Q6_K for the output, more bits for some layers'
// attn_v and ffn_down, ...).
var llamaMixes = []string{"Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M",
	"Q6_K", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"}

// TestLlamaQuantizeMixesDecode has llama.cpp's llama-quantize make every mix of an f16
// synthetic model (four layers, GQA 4, rows of 256 and 512 values, so every block type
// applies) and decodes each file with --check: every tensor type loads, and the cached
// logits equal the cache-free reference bit for bit. Across the mixes, every weight type
// of package quant appears.
func TestLlamaQuantizeMixesDecode(t *testing.T) {
	tool := testutil.Shared(t, "bin/llama-quantize")
	dir := t.TempDir()
	src := filepath.Join(dir, "f16.gguf")
	_, stderr, code := kvref(t, "synth", "-o", src, "--dim", "256", "--layers", "4", "--heads", "4", "--kv-heads", "1",
		"--hidden", "512", "--ctx", "128", "--vocab", "512", "--seed", "51", "--wtype", "f16")
	require.Equal(t, 0, code, stderr)
	seen := map[gguf.TensorType]bool{}
	for _, mix := range llamaMixes {
		t.Run(mix, func(t *testing.T) {
			file := filepath.Join(dir, mix+".gguf")
			out, err := exec.Command(tool, src, file, mix, "2").CombinedOutput()
			require.NoError(t, err, "llama-quantize: %s", out)
			f, err := gguf.Open(file)
			require.NoError(t, err)
			counts := map[gguf.TensorType]int{}
			for _, ti := range f.Tensors {
				if len(ti.Dims) == 2 {
					counts[ti.Type]++
					seen[ti.Type] = true
				}
			}
			f.Close()
			var types []string
			for _, typ := range slices.Sorted(maps.Keys(counts)) {
				types = append(types, fmt.Sprintf("%d %s", counts[typ], typ))
			}
			_, stderr, code := kvref(t, "run", "-m", file, "-p", "mixes", "-n", "12", "--temp", "0", "--ignore-eos", "--check", "--json")
			require.Equal(t, 0, code, stderr)
			t.Logf("%-6s matrices: %s; decodes with --check", mix, strings.Join(types, ", "))
		})
	}
	for _, wt := range quant.WeightTypes() {
		require.True(t, seen[gguf.TensorType(wt.GGMLType())], "no mix holds %v", wt)
	}
}
