package quant_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// llama-quantize writes the block types of q4_0, q4_1, q5_0, q5_1 and iq4_nl for weight
// tensors, which makes it an independent source of ggml's bytes for the same float data.
// For q4_0, q4_1, q5_0 and q5_1 its quantizer without an importance matrix
// (quantize_q4_0 and so on) is quantize_row_*_ref, the very function llama.cpp's CPU
// backend uses to write a cache of that type (ggml_cpy via quantize_row_q4_0 ...), so the
// cache's Encode must give its bytes. For iq4_nl the weights get quantize_iq4_nl, which is
// quantize_row_iq4_nl_impl with a scale search (ntry = 7) where the cache gets
// quantize_row_iq4_nl_ref (ntry = −1, no search): llama-quantize checks kvref's
// implementation of the shared function through EncodeIQ4NLWeights, and the cache's own
// path is held to ggml's bytes by TestCacheEncodeMatchesGGMLCorpus.

// corpusModel writes a GGUF model whose every matrix holds the golden corpus (cycled), so
// that llama-quantize sees rows with ties, zeros, outliers and tiny values, and returns its
// path and the matrices' values by tensor name. The corpus row "huge", whose fp16 scales
// overflow, is left out: llama-quantize refuses to write infinite scales ("quantized data
// validation failed"); TestCacheEncodeMatchesGGMLCorpus covers it.
func corpusModel(t *testing.T) (string, map[string][]float32) {
	shape := synth.Shape{Name: "kvref-quant-corpus", Dim: 128, Layers: 1, Heads: 2, KVHeads: 1, Hidden: 128, Context: 64, RopeBase: 10000, Seed: 3}
	data, err := shape.Bytes()
	require.NoError(t, err)
	f, err := gguf.Parse("corpus", data)
	require.NoError(t, err)
	w := gguf.NewWriter()
	for _, kv := range f.Metadata {
		w.Add(kv.Key, kv.Value)
	}
	var corpus []float32
	for k, row := range quant.GoldenCorpus() {
		if quant.GoldenRowName(k) != "huge" {
			corpus = append(corpus, row...)
		}
	}
	values := map[string][]float32{}
	next := 0
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		b, err := f.TensorData(ti)
		require.NoError(t, err)
		if len(ti.Dims) == 2 {
			x := make([]float32, ti.Elements())
			b = make([]byte, 4*len(x))
			for j := range x {
				x[j] = corpus[next%len(corpus)]
				next++
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x[j]))
			}
			values[ti.Name] = x
		}
		require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, b))
	}
	require.GreaterOrEqual(t, next, len(corpus), "the matrices should hold the whole corpus")
	path := filepath.Join(t.TempDir(), "corpus-f32.gguf")
	require.NoError(t, w.WriteFile(path))
	return path, values
}

func TestLlamaQuantizeWritesTheCacheBlocks(t *testing.T) {
	t.Parallel()

	bin := testutil.Shared(t, "bin/llama-quantize")
	in, values := corpusModel(t)
	for _, c := range []struct {
		ftype  string
		tensor gguf.TensorType
		encode func(dst []byte, src []float32)
		bytes  int // per 32 values
	}{
		{"Q4_0", gguf.Q4_0, cacheEncoder(quant.Q4_0), 18},
		{"Q4_1", gguf.Q4_1, cacheEncoder(quant.Q4_1), 20},
		{"Q5_0", gguf.Q5_0, cacheEncoder(quant.Q5_0), 22},
		{"Q5_1", gguf.Q5_1, cacheEncoder(quant.Q5_1), 24},
		{"IQ4_NL", gguf.IQ4_NL, quant.EncodeIQ4NLWeights, 18},
	} {
		t.Run(c.ftype, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), c.ftype+".gguf")
			cmd := exec.Command(bin, "--pure", in, out, c.ftype, "2")
			log, err := cmd.CombinedOutput()
			require.NoError(t, err, "llama-quantize: %s", log)
			f, err := gguf.Open(out)
			require.NoError(t, err)
			defer f.Close()
			compared := 0
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				x, ok := values[ti.Name]
				if !ok {
					continue
				}
				require.Equal(t, c.tensor, ti.Type, "llama-quantize --pure %s stored %s as %v", c.ftype, ti.Name, ti.Type)
				got, err := f.TensorData(ti)
				require.NoError(t, err)
				n := int(ti.Dims[0])
				want := make([]byte, len(x)/32*c.bytes)
				for r := 0; r*n < len(x); r++ {
					c.encode(want[r*n/32*c.bytes:(r+1)*n/32*c.bytes], x[r*n:(r+1)*n])
				}
				require.NoErrorf(t, firstBlockDiff(got, want, c.bytes, n), "%s %s", c.ftype, ti.Name)
				compared += len(x)
			}
			require.Greater(t, compared, 0, "no tensor was compared")
			t.Logf("%s: %d values, ggml's bytes exactly", c.ftype, compared)
		})
	}
}

// cacheEncoder encodes a row of n values (a multiple of 32) as one head of the cache type.
func cacheEncoder(ct quant.CacheType) func(dst []byte, src []float32) {
	return func(dst []byte, src []float32) { ct.Encode(dst, src, 1, len(src)) }
}

// firstBlockDiff describes the first block in which got and want differ.
func firstBlockDiff(got, want []byte, blockBytes, rowLen int) error {
	if len(got) != len(want) {
		return fmt.Errorf("llama-quantize wrote %d bytes, kvref %d", len(got), len(want))
	}
	for b := 0; b*blockBytes < len(got); b++ {
		g, w := got[b*blockBytes:(b+1)*blockBytes], want[b*blockBytes:(b+1)*blockBytes]
		if !bytes.Equal(g, w) {
			perRow := rowLen / 32
			return fmt.Errorf("block %d (row %d, values %d..%d) differs: llama-quantize % x, kvref % x",
				b, b/perRow, b%perRow*32, b%perRow*32+31, g, w)
		}
	}
	return nil
}
