//go:build amd64 && !purego

package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// fastKernelSets returns the assembly kernels this CPU can run, called directly (not
// through the dispatcher), or why there are none.
func fastKernelSets() ([]kernelSet, string) {
	if !useAVX {
		return nil, "this CPU has no AVX (cpu.X86.HasAVX is false): the assembly kernels cannot run here, and Dot, MatMulRows and Axpy use the portable Go"
	}
	sets := []kernelSet{avxSet("avx", false)}
	if useAVX512 {
		sets = append(sets, avxSet("avx512", true))
	}
	return sets, ""
}

// avxSet is the assembly kernels called without the dispatcher; wide selects the AVX-512
// MatMulRows block.
func avxSet(name string, wide bool) kernelSet {
	return kernelSet{
		name: name,
		dot:  dotAVX,
		matMulRows: func(out, w, x []float32, rows, cols, batch, start, end int) {
			if !matMulRowsFastOK(out, w, x, rows, cols, batch, start, end) {
				panic("test bug: the dispatcher never sends these arguments to matMulRowsAVX")
			}
			matMulRowsAVX(out, w, x, rows, cols, batch, start, end, wide)
		},
		axpy: axpyAVX,
		raw:  true,
	}
}

// TestFastPathRuns says whether the tests above exercised assembly, and checks that the
// dispatcher picked what the CPU offers.
func TestFastPathRuns(t *testing.T) {
	assert.Equal(t, cpu.X86.HasAVX, useAVX)
	assert.Equal(t, cpu.X86.HasAVX && cpu.X86.HasAVX512F, useAVX512)
	switch {
	case useAVX512:
		assert.Equal(t, "avx512", Implementation())
	case useAVX:
		assert.Equal(t, "avx", Implementation())
	default:
		assert.Equal(t, "generic", Implementation())
	}
	sets, reason := fastKernelSets()
	if len(sets) == 0 {
		t.Skip(reason)
	}
	for _, s := range sets {
		t.Logf("assembly kernels tested against the portable ones: %s", s.name)
	}
	if !useAVX512 {
		t.Logf("this CPU has no AVX-512F: the AVX-512 MatMulRows block is not tested here")
	}
}

// extraMatMulRowsBenchmarks are MatMulRows paths that "fast" does not show on this CPU:
// with AVX-512, the AVX kernels alone ("avx"), to measure what the AVX-512 block adds.
func extraMatMulRowsBenchmarks() map[string]func(out, w, x []float32, rows, cols, batch, start, end int) {
	if !useAVX512 {
		return nil
	}
	return map[string]func(out, w, x []float32, rows, cols, batch, start, end int){
		"avx": func(out, w, x []float32, rows, cols, batch, start, end int) {
			matMulRowsAVX(out, w, x, rows, cols, batch, start, end, false)
		},
	}
}

// TestSetPortable switches the package to the portable kernels and back: the reported
// implementation follows, and the results are the same bits either way.
func TestSetPortable(t *testing.T) {
	before, beforeRow := Implementation(), RowDotImplementation()
	x, w := randomFloats(8*67, 1), randomFloats(13*67, 2)
	fast := make([]float32, 8*13)
	MatMulRows(fast, w, x, 13, 67, 8, 0, 13)

	SetPortable(true)
	require.Equal(t, "generic", Implementation())
	require.Equal(t, "generic", RowDotImplementation())
	portable := make([]float32, 8*13)
	MatMulRows(portable, w, x, 13, 67, 8, 0, 13)
	SetPortable(false)

	require.Equal(t, before, Implementation())
	require.Equal(t, beforeRow, RowDotImplementation())
	for i := range fast {
		require.Equal(t, math.Float32bits(fast[i]), math.Float32bits(portable[i]), "output %d", i)
	}
}
