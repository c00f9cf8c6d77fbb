//go:build amd64 && !purego

package kernels

// fastRowSets returns the assembly row dots, called directly (not through the
// dispatcher), or why this CPU cannot run them.
func fastRowSets() ([]rowDotSet, string) {
	if !implF16AVX2.testable() {
		return nil, "this CPU lacks AVX2 or F16C (or KVREF_KERNELS excludes them): the assembly row dots cannot run here, and DotF16, DotBF16, ... use the portable Go"
	}
	sets := []rowDotSet{avx2RowSet()}
	return sets, ""
}

// avx2RowSet is the AVX2 row dots, called without the dispatcher.
func avx2RowSet() rowDotSet {
	return rowDotSet{
		name: "raw avx2",
		dot: map[string]func(x []float32, row []byte) float32{
			"f16": dotF16AVX2, "bf16": dotBF16AVX2,
		},
		rows: map[string]func(out, x []float32, w []byte){
			"f16": func(out, x []float32, w []byte) {
				n4 := 0
				if len(x)%8 == 0 {
					n4 = len(x)
				}
				rowsAVX2(out, x, w, 2*len(x), n4, func(o *float32, w *byte, x *float32, n int) { dotF16x4AVX2(o, w, x, n, 2*n) }, dotF16AVX2)
			},
			"bf16": func(out, x []float32, w []byte) {
				n4 := 0
				if len(x)%8 == 0 {
					n4 = len(x)
				}
				rowsAVX2(out, x, w, 2*len(x), n4, func(o *float32, w *byte, x *float32, n int) { dotBF16x4AVX2(o, w, x, n, 2*n) }, dotBF16AVX2)
			},
		},
		raw: true,
	}
}
