package model_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// quantizeTestShape has rows of 256 and 512 values, so every block type applies to every
// matrix.
var quantizeTestShape = synth.Shape{Name: "quantize-vs-llama", Dim: 256, Layers: 2, Heads: 4, KVHeads: 2, Hidden: 512,
	Context: 128, RopeBase: 10000, Seed: 41, Vocab: 512}

// hardRows overwrites rows of the F32 matrices of a synthetic model with values that probe
// the quantizers' corners, one kind per matrix row r%len(kinds): tiny and large magnitudes
// (subnormal fp16 scales, and scales near the fp16 limit), constant blocks and super-blocks, exact
// integers and halves (rounding ties), one-signed rows, zero blocks and outliers.
func hardRows(t *testing.T, src string) string {
	t.Helper()
	f, err := gguf.Open(src)
	require.NoError(t, err)
	defer f.Close()
	r := rand.New(rand.NewPCG(99, 0))
	normal := func() float32 { return float32(r.NormFloat64()) }
	kinds := []func(i int) float32{
		func(i int) float32 { return normal() * 0x1p-20 },
		func(i int) float32 { return normal() * 0x1p13 },
		func(i int) float32 { return float32(i/32%17-8) * 0.25 },
		func(i int) float32 { return float32(i/256%9-4) * 1.5 },
		func(i int) float32 { return float32(r.IntN(33)-16) / 2 },
		func(i int) float32 { return float32(math.Abs(r.NormFloat64())) + 0.5 },
		func(i int) float32 { return -float32(math.Abs(r.NormFloat64())) },
		func(i int) float32 {
			if i/32%3 == 0 {
				return 0
			}
			return normal()
		},
		func(i int) float32 {
			if i%97 == 7 {
				return normal() * 50
			}
			return normal() * 0.02
		},
		func(i int) float32 { return normal() * 1e-30 },
	}
	w := gguf.NewWriter()
	for _, kv := range f.Metadata {
		w.Add(kv.Key, kv.Value)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		data, err := f.TensorData(ti)
		require.NoError(t, err)
		data = bytes.Clone(data)
		if len(ti.Dims) == 2 && ti.Type == gguf.F32 {
			cols := int(ti.Dims[0])
			for row := 0; row < int(ti.Dims[1]); row += 3 {
				gen := kinds[row/3%len(kinds)]
				for c := range cols {
					binary.LittleEndian.PutUint32(data[4*(row*cols+c):], math.Float32bits(gen(c)))
				}
			}
		}
		require.NoError(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, data))
	}
	out := filepath.Join(t.TempDir(), "hard.gguf")
	require.NoError(t, w.WriteFile(out))
	return out
}

// TestQuantizeGGUFMatchesLlamaQuantize quantizes the same models with kvref
// (model.QuantizeGGUF, what kvref quantize runs) and with llama.cpp's llama-quantize
// --pure, for every block type, and requires the same bytes in every tensor: an f16
// synthetic model (rows from normally distributed weights) and an f32 one whose rows hold
// the quantizers' corner cases (see hardRows).
func TestQuantizeGGUFMatchesLlamaQuantize(t *testing.T) {
	t.Parallel()

	tool := testutil.Shared(t, "bin/llama-quantize")
	dir := t.TempDir()
	s := quantizeTestShape
	f16 := filepath.Join(dir, "f16.gguf")
	w, err := s.Writer()
	require.NoError(t, err)
	require.NoError(t, w.WriteFile(filepath.Join(dir, "f32.gguf")))
	f32, err := gguf.Open(filepath.Join(dir, "f32.gguf"))
	require.NoError(t, err)
	wf16, _, err := model.QuantizeGGUF(f32, gguf.F16)
	require.NoError(t, err)
	require.NoError(t, wf16.WriteFile(f16)) // before Close: the writer holds the file's vectors
	f32.Close()
	sources := map[string]string{"f16": f16, "hard-f32": hardRows(t, filepath.Join(dir, "f32.gguf"))}

	for _, wt := range quant.WeightTypes() {
		typ := gguf.TensorType(wt.GGMLType())
		for name, src := range sources {
			t.Run(fmt.Sprintf("%s/%s", typ, name), func(t *testing.T) {
				ref := filepath.Join(t.TempDir(), "llama.gguf")
				out, err := exec.Command(tool, "--pure", src, ref, typ.String(), "2").CombinedOutput()
				require.NoError(t, err, "llama-quantize: %s", out)
				in, err := gguf.Open(src)
				require.NoError(t, err)
				defer in.Close()
				mine, _, err := model.QuantizeGGUF(in, typ)
				require.NoError(t, err)
				var buf bytes.Buffer
				_, err = mine.WriteTo(&buf)
				require.NoError(t, err)
				got, err := gguf.Parse("kvref", buf.Bytes())
				require.NoError(t, err)
				want, err := gguf.Open(ref)
				require.NoError(t, err)
				defer want.Close()
				tensors, blocks := 0, 0
				for i := range want.Tensors {
					wi := &want.Tensors[i]
					gi, ok := got.Tensor(wi.Name)
					require.True(t, ok, wi.Name)
					require.Equal(t, wi.Type, gi.Type, wi.Name)
					require.Equal(t, wi.Dims, gi.Dims, wi.Name)
					wb, err := want.TensorData(wi)
					require.NoError(t, err)
					gb, err := got.TensorData(gi)
					require.NoError(t, err)
					if wi.Type != typ {
						require.Equal(t, wb, gb, wi.Name)
						continue
					}
					bb := wt.BlockBytes()
					for b := 0; b < len(wb)/bb; b++ {
						require.Truef(t, bytes.Equal(wb[b*bb:(b+1)*bb], gb[b*bb:(b+1)*bb]), "%s block %d: llama-quantize %x, kvref %x", wi.Name, b, wb[b*bb:(b+1)*bb], gb[b*bb:(b+1)*bb])
					}
					tensors++
					blocks += len(wb) / bb
				}
				t.Logf("%s from %s: %d tensors, %d blocks, the same bytes", typ, name, tensors, blocks)
			})
		}
	}
}

// TestDequantizeMatchesLlamaQuantize writes, for every block type, a model whose matrices
// are random blocks (any bytes, the fp16 scales made finite), has llama-quantize
// --allow-requantize convert it to F32 (ggml's dequantize_row_* for each type) and
// requires the same float32 bits from quant.WeightType.DequantizeRow.
func TestDequantizeMatchesLlamaQuantize(t *testing.T) {
	t.Parallel()

	tool := testutil.Shared(t, "bin/llama-quantize")
	w, err := quantizeTestShape.Writer()
	require.NoError(t, err)
	src := filepath.Join(t.TempDir(), "f32.gguf")
	require.NoError(t, w.WriteFile(src))
	base, err := gguf.Open(src)
	require.NoError(t, err)
	defer base.Close()
	r := rand.New(rand.NewPCG(5, 5))
	for _, wt := range quant.WeightTypes() {
		typ := gguf.TensorType(wt.GGMLType())
		t.Run(typ.String(), func(t *testing.T) {
			dir := t.TempDir()
			qw := gguf.NewWriter()
			for _, kv := range base.Metadata {
				qw.Add(kv.Key, kv.Value)
			}
			blocks := map[string][]byte{}
			for i := range base.Tensors {
				ti := &base.Tensors[i]
				data, err := base.TensorData(ti)
				require.NoError(t, err)
				if len(ti.Dims) == 2 {
					n := int(ti.Dims[0] * ti.Dims[1])
					data = randomBlocks(r, wt, n/wt.BlockSize())
					blocks[ti.Name] = data
					require.NoError(t, qw.AddTensor(ti.Name, typ, ti.Dims, data))
					continue
				}
				require.NoError(t, qw.AddTensor(ti.Name, ti.Type, ti.Dims, data))
			}
			in, ref := filepath.Join(dir, "q.gguf"), filepath.Join(dir, "f32.gguf")
			require.NoError(t, qw.WriteFile(in))
			out, err := exec.Command(tool, "--allow-requantize", "--pure", in, ref, "F32", "2").CombinedOutput()
			require.NoError(t, err, "llama-quantize: %s", out)
			f, err := gguf.Open(ref)
			require.NoError(t, err)
			defer f.Close()
			values := 0
			for name, q := range blocks {
				ti, ok := f.Tensor(name)
				require.True(t, ok, name)
				require.Equal(t, gguf.F32, ti.Type, name)
				data, err := f.TensorData(ti)
				require.NoError(t, err)
				got := make([]float32, len(data)/4)
				wt.DequantizeRow(got, q)
				for i, v := range got {
					want := binary.LittleEndian.Uint32(data[4*i:])
					require.Falsef(t, math.Float32bits(v) != want, "%s value %d: llama-quantize %#08x (%g), kvref %#08x (%g)", name, i, want, math.Float32frombits(want), math.Float32bits(v), v)
				}
				values += len(got)
			}
			t.Logf("%s: %d values of random blocks, the same float32 bits", typ, values)
		})
	}
}

// randomBlocks returns nblocks blocks of wt of random bytes whose fp16 fields (scales and
// mins) are finite: an all-ones exponent loses its top bit.
func randomBlocks(r *rand.Rand, wt quant.WeightType, nblocks int) []byte {
	bb := wt.BlockBytes()
	b := make([]byte, nblocks*bb)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for blk := range nblocks {
		for _, off := range wt.HalfOffsets() {
			p := b[blk*bb+off:]
			if h := binary.LittleEndian.Uint16(p); h&0x7c00 == 0x7c00 {
				binary.LittleEndian.PutUint16(p, h&^0x4000)
			}
		}
	}
	return b
}
