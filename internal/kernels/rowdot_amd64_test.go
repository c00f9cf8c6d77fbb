//go:build amd64 && !purego

package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/cpu"
)

// fastRowSets returns the assembly row dots, called directly (not through the
// dispatcher), or why this CPU cannot run them.
func fastRowSets() ([]rowDotSet, string) {
	if !useRowAVX2 {
		return nil, "this CPU lacks AVX2 or F16C: the assembly row dots cannot run here, and DotF16, DotQ4_0, ... use the portable Go"
	}
	sets := []rowDotSet{avx2RowSet()}
	if useRowAVX512 {
		s := avx2RowSet()
		s.name = "avx512"
		s.rows["q4_0"] = func(out, x []float32, w []byte) {
			rowsAVX2(out, x, w, len(x)/QBlockLen*Q4_0BlockBytes, len(x)/QBlockLen, dotQ4_0x4AVX512, dotQ4_0AVX2)
		}
		sets = append(sets, s)
	}
	return sets, ""
}

// avx2RowSet is the AVX2 row dots, called without the dispatcher.
func avx2RowSet() rowDotSet {
	return rowDotSet{
		name: "avx2",
		dot: map[string]func(x []float32, row []byte) float32{
			"f16": dotF16AVX2, "bf16": dotBF16AVX2, "q4_0": dotQ4_0AVX2,
		},
		rows: map[string]func(out, x []float32, w []byte){
			"f16": func(out, x []float32, w []byte) {
				n4 := 0
				if len(x)%8 == 0 {
					n4 = len(x)
				}
				rowsAVX2(out, x, w, 2*len(x), n4, dotF16x4AVX2, dotF16AVX2)
			},
			"bf16": func(out, x []float32, w []byte) {
				n4 := 0
				if len(x)%8 == 0 {
					n4 = len(x)
				}
				rowsAVX2(out, x, w, 2*len(x), n4, dotBF16x4AVX2, dotBF16AVX2)
			},
			"q4_0": func(out, x []float32, w []byte) {
				rowsAVX2(out, x, w, len(x)/QBlockLen*Q4_0BlockBytes, len(x)/QBlockLen, dotQ4_0x4AVX2, dotQ4_0AVX2)
			},
		},
		raw: true,
	}
}

// TestRowFastPathRuns says whether the row dot tests exercised assembly, and checks that
// the dispatcher picked what the CPU offers.
func TestRowFastPathRuns(t *testing.T) {
	want := cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasF16C
	assert.Equal(t, want, useRowAVX2)
	assert.Equal(t, want && cpu.X86.HasAVX512F, useRowAVX512)
	switch {
	case useRowAVX512:
		assert.Equal(t, "avx512", RowDotImplementation())
	case want:
		assert.Equal(t, "avx2", RowDotImplementation())
	default:
		assert.Equal(t, "generic", RowDotImplementation())
	}
	sets, reason := fastRowSets()
	if reason != "" {
		t.Skip(reason)
	}
	for _, s := range sets {
		t.Logf("assembly row dots tested against the portable ones: %s", s.name)
	}
	if !useRowAVX512 {
		t.Log("this CPU has no AVX-512F: the AVX-512 four-row kernels are not tested here")
	}
}
