package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// floatsFrom reads little-endian float32 bit patterns from b (any bits: NaNs, infinities,
// subnormals).
func floatsFrom(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// FuzzKernelsMatchGeneric feeds arbitrary bit patterns to every kernel set and requires the
// portable result (NaN bits excepted when the inputs hold NaNs other than the default one).
// The first input is split into x (the first half) and y or w; shape picks the matrix shape.
func FuzzKernelsMatchGeneric(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, uint8(1), uint8(1))
	f.Add(make([]byte, 4*40), uint8(3), uint8(5))
	f.Add(slices.Repeat([]byte{0xff, 0xff, 0x7f, 0x7f}, 34), uint8(2), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, rowsIn, batchIn uint8) {
		all := floatsFrom(data)
		n := len(all) / 2
		x, y := all[:n], all[n:2*n]
		strict := onlyDefaultNaN(all)
		for _, set := range allSets() {
			want, got := dotGeneric(x, y), set.dot(x, y)
			if !sameResult(want, got, strict) { // tested before require: this runs in a hot loop
				require.FailNow(t, fmt.Sprintf("%s: Dot n=%d: portable %#08x, fast %#08x", set.name, n, math.Float32bits(want), math.Float32bits(got)))
			}
			a := float32(0.5)
			if n > 0 {
				a = x[0]
			}
			wantA, gotA := slices.Clone(y), slices.Clone(y)
			axpyGeneric(wantA, a, x)
			set.axpy(gotA, a, x)
			requireSameResults(t, wantA, gotA, strict, set.name+": Axpy")

			rows, batch := int(rowsIn%9)+1, int(batchIn%9)+1
			cols := len(all) / (rows + batch)
			if cols == 0 {
				continue
			}
			w, in := all[:rows*cols], all[rows*cols:(rows+batch)*cols]
			wantM := make([]float32, rows*batch)
			gotM := make([]float32, rows*batch)
			matMulRowsGeneric(wantM, w, in, rows, cols, batch, 0, rows)
			set.matMulRows(gotM, w, in, rows, cols, batch, 0, rows)
			requireSameResults(t, wantM, gotM, strict, set.name+": MatMulRows")
		}
	})
}
