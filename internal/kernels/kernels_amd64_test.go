//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// fastKernelSets returns the assembly kernels this CPU can run, called directly (not
// through the dispatcher), or why there are none.
func fastKernelSets() ([]kernelSet, string) {
	if !implDotAVX.testable() {
		return nil, "this CPU has no AVX (or KVREF_KERNELS=generic): the assembly kernels cannot run here, and Dot, MatMulRows and Axpy use the portable Go"
	}
	sets := []kernelSet{avxSet("avx", false)}
	if implMatMulAVX512.testable() {
		sets = append(sets, avxSet("avx512", true), otherZMMWidth(avxSet("avx512", true)))
	}
	return sets, ""
}

// otherZMMWidth is set run as if this CPU's ZMM arithmetic had the other width
// (zmmFullWidth flipped for each call): the micro-kernels that Zen 4 and Zen 5 choose for
// the same batch both run on either.
func otherZMMWidth(set kernelSet) kernelSet {
	mm := set.matMulRows
	set.name += fmt.Sprintf(" (zmmFullWidth %v)", !zmmFullWidth)
	set.matMulRows = func(out, w, x []float32, rows, cols, batch, start, end int) {
		zmmFullWidth = !zmmFullWidth
		defer func() { zmmFullWidth = !zmmFullWidth }()
		mm(out, w, x, rows, cols, batch, start, end)
	}
	return set
}

// avxSet is the assembly kernels called without the dispatcher; wide selects the AVX-512
// MatMulRows block.
func avxSet(name string, wide bool) kernelSet {
	return kernelSet{
		name: "raw " + name,
		dot:  dotAVX,
		matMulRows: func(out, w, x []float32, rows, cols, batch, start, end int) {
			if !matMulRowsFastOK(out, w, x, rows, cols, batch, start, end) {
				panic("test bug: the dispatcher never sends these arguments to matMulRowsAVX")
			}
			if batch == 1 && cols%8 == 0 {
				matVecAVX(out, w, x, cols, start, end)
				return
			}
			if cols%8 == 0 {
				gemmAVX(out, w, x, rows, cols, batch, start, end, nil, wide)
				return
			}
			matMulRowsAVX(out, w, x, rows, cols, batch, start, end, wide)
		},
		axpy: axpyAVX,
		raw:  true,
	}
}

// TestCPUFeatures: the registry sees what golang.org/x/sys/cpu reports.
func TestCPUFeatures(t *testing.T) {
	for _, c := range []struct {
		has bool
		f   feature
	}{
		{cpu.X86.HasAVX, featAVX}, {cpu.X86.HasAVX2, featAVX2}, {cpu.X86.HasFMA, featFMA},
		{cpu.X86.HasF16C, featF16C}, {cpu.X86.HasAVX512F, featAVX512F},
		{cpu.X86.HasAVX512VNNI, featAVX512VNNI},
	} {
		require.Equal(t, c.has, cpuFeatures&c.f != 0, c.f.String())
	}
}

// extraMatMulRowsBenchmarks are MatMulRows paths that "fast" does not show on this CPU:
// the 256-bit blocked kernel ("avx", what an AVX2-only CPU runs) and the four-row kernels
// without blocking ("rows4", what cols not a multiple of 8 runs).
func extraMatMulRowsBenchmarks() map[string]func(out, w, x []float32, rows, cols, batch, start, end int) {
	if !implMatMulAVX.supported() {
		return nil
	}
	m := map[string]func(out, w, x []float32, rows, cols, batch, start, end int){
		"rows4": func(out, w, x []float32, rows, cols, batch, start, end int) {
			matMulRowsAVX(out, w, x, rows, cols, batch, start, end, false)
		},
	}
	if implMatMulAVX512.supported() {
		m["avx"] = func(out, w, x []float32, rows, cols, batch, start, end int) {
			gemmAVX(out, w, x, rows, cols, batch, start, end, nil, false)
		}
	}
	return m
}

// gemmQ8ChunkBlocksTest is how many blocks the AVX2 batched Q8_0 kernel takes at a time,
// for the tests that make rows go in chunks.
const gemmQ8ChunkBlocksTest = gemmQ8ChunkBlocks

// TestZMMWidthInReport: where the AVX-512 float32 products run, the report says which
// micro-kernel the CPU's ZMM width chose for them, and says the other when the width is
// the other; with them off, nothing.
func TestZMMWidthInReport(t *testing.T) {
	const name = "MatMulRows, MatMulRowsDecoded, batch ≥ 2 (prefill)"
	detail := func() string {
		for _, c := range Implementations() {
			if c.Kernel == name {
				return c.Detail
			}
		}
		t.Fatalf("no kernel %q in the report", name)
		return ""
	}
	if !implMatMulAVX512.supported() {
		require.Empty(t, detail(), "without AVX-512 the detail of its kernels is not shown")
		return
	}
	defer atLevel("avx512")()
	defer func(w bool) { zmmFullWidth = w }(zmmFullWidth)
	zmmFullWidth = true
	require.Contains(t, detail(), "full width: float32 batches of 8 or more in gemm4x8AVX512")
	require.Contains(t, detail(), fmt.Sprintf("prefill inputs of %d columns or more packed once and broadcast (gemm8x6BAVX512)", wideOnceMinCols))
	require.True(t, wideInputsOnce(wideOnceMinCols))
	require.False(t, wideInputsOnce(wideOnceMinCols-8))
	zmmFullWidth = false
	require.Contains(t, detail(), "prefill inputs packed twice (gemm8x6AVX512)")
	require.False(t, wideInputsOnce(wideOnceMinCols))
	require.Contains(t, detail(), "in 256-bit halves (AMD family 25): float32 batches of 10 to 47 in gemm4x6AVX512")
	found := false
	for _, l := range ReportLines(Implementations()) {
		if strings.HasPrefix(l, name) {
			require.True(t, strings.HasSuffix(l, "; "+detail()), l)
			found = true
		}
	}
	require.True(t, found)
	restore := atLevel("avx2")
	require.Empty(t, detail(), "at the avx2 level the AVX-512 products do not run")
	restore()
}

// TestTiledVectorsOtherWidth: TestTiledVectors's rule as the other ZMM width has it (seven
// or eight vectors past the whole tiles are tiled where ZMM is full width, not elsewhere).
func TestTiledVectorsOtherWidth(t *testing.T) {
	if !implKBatchVNNI.on {
		t.Skip("needs the VNNI kernels: TestTiledVectors covers the rule without them")
	}
	defer func(w bool) { zmmFullWidth = w }(zmmFullWidth)
	for _, full := range []bool{true, false} {
		zmmFullWidth = full
		reported := false
		for _, c := range Implementations() {
			if strings.HasPrefix(c.Kernel, "DotQ2_KBatch ... DotQ6_KBatch") {
				require.Equal(t, fmt.Sprintf("vectors past the whole tiles of 16 fill a tile from %d on", map[bool]int{true: 7, false: 9}[full]), c.Detail)
				reported = true
			}
		}
		require.True(t, reported, "the report has the batched k-quant products")
		want := map[int]int{6: 0, 7: 0, 8: 0, 22: 16, 23: 16}
		if full {
			want = map[int]int{6: 0, 7: 7, 8: 8, 22: 16, 23: 23}
		}
		for count, tiled := range want {
			require.Equal(t, tiled, tiledVectors(count), "%d vectors, zmmFullWidth %v", count, full)
		}
	}
}

// TestDotKRowsOtherZMMWidth is TestDotKRowsMatchGeneric's check at the avx512 level as the
// other ZMM width runs it, so both Q4_K row kernels (dotQ4_Kx4AVX512, 256-bit, and
// dotQ4_Kx4ZAVX512, 512-bit) run on either CPU.
func TestDotKRowsOtherZMMWidth(t *testing.T) {
	if !implKRowsVNNI.supported() {
		t.Skip("needs AVX-512 VNNI: without it neither Q4_K row kernel in question runs")
	}
	defer atLevel("avx512")()
	defer func(w bool) { zmmFullWidth = w }(zmmFullWidth)
	zmmFullWidth = !zmmFullWidth
	checkDotKRows(t)
}

// TestDotKBatchOtherZMMWidth runs the batched k-quant products at the AVX-512 level with
// zmmFullWidth flipped, so that what Zen 4 and Zen 5 each choose for a batch (the tile
// threshold, dotQ4_Kx2x2ZAVX512 for pairs of vectors past the tiles and quads) runs on
// either CPU.
func TestDotKBatchOtherZMMWidth(t *testing.T) {
	if !implKRowsVNNI.supported() {
		t.Skip("needs AVX-512 VNNI: without it neither choice in question runs")
	}
	w0 := zmmFullWidth
	defer atLevel("avx512")()
	defer func(w bool) { zmmFullWidth = w }(zmmFullWidth)
	for _, full := range []bool{true, false} {
		zmmFullWidth = full
		require.Equal(t, full, kPairKernel(&kQ4_K) != nil, "Q4_K pairs where ZMM is full width")
		require.Equal(t, full, kPairKernel(&kQ5_K) != nil, "Q5_K pairs where ZMM is full width")
		require.Nil(t, kPairKernel(&kQ6_K), "no pair kernel for Q6_K")
		require.Equal(t, full, strings.Contains(kRowsDetail(), "dotQ4_Kx2x2ZAVX512"), "the report names the pair kernel where it runs")
	}
	zmmFullWidth = !w0
	checkDotKBatch(t)
}
