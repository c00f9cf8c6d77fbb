//go:build !amd64 || purego

package kernels

// RowDotImplementation names the code path of the row dots (DotF16, DotQ4_0, ...): in this
// build always "generic", the portable Go.
func RowDotImplementation() string { return "generic" }

func dotF16(x []float32, row []byte) float32  { return dotF16Generic(x, row) }
func dotBF16(x []float32, row []byte) float32 { return dotBF16Generic(x, row) }
func dotQ4_0(x []float32, row []byte) float32 { return dotQ4_0Generic(x, row) }

func dotF16Rows(out, x []float32, w []byte, rb int)  { rowsGeneric(out, x, w, rb, dotF16Generic) }
func dotBF16Rows(out, x []float32, w []byte, rb int) { rowsGeneric(out, x, w, rb, dotBF16Generic) }
func dotQ4_0Rows(out, x []float32, w []byte, rb int) { rowsGeneric(out, x, w, rb, dotQ4_0Generic) }

func decodeF16(dst []float32, src []byte) { decodeF16Generic(dst, src) }

func dotQ8_0Q8Rows(out []float32, x *Q8Input, w []byte, rb int) { q8RowsGeneric(out, x, w, rb) }

func quantizeBlocks(v *Q8Input, x []float32) { quantizeBlocksGeneric(v, x) }
