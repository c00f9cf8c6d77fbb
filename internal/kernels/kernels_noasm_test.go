//go:build !amd64 || purego

package kernels

// fastKernelSets returns no assembly kernels: this build has none.
func fastKernelSets() ([]kernelSet, string) {
	return nil, "built with -tags purego or for a GOARCH other than amd64: there are no assembly kernels, only the portable Go"
}

// extraMatMulRowsBenchmarks returns nothing: this build has only the portable path.
func extraMatMulRowsBenchmarks() map[string]func(out, w, x []float32, rows, cols, batch, start, end int) {
	return nil
}

// gemmQ8ChunkBlocksTest is the amd64 build's gemmQ8ChunkBlocks, so that both builds test
// the same shapes.
const gemmQ8ChunkBlocksTest = 96
