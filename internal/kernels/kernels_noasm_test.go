//go:build !amd64 || purego

package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// fastKernelSets returns no assembly kernels: this build has none.
func fastKernelSets() ([]kernelSet, string) {
	return nil, "built with -tags purego or for a GOARCH other than amd64: there are no assembly kernels, only the portable Go"
}

// TestFastPathRuns says that the fast-vs-portable tests only compared the portable path
// with itself in this build.
func TestFastPathRuns(t *testing.T) {
	assert.Equal(t, "generic", Implementation())
	_, reason := fastKernelSets()
	t.Skip(reason)
}

// extraMatMulRowsBenchmarks returns nothing: this build has only the portable path.
func extraMatMulRowsBenchmarks() map[string]func(out, w, x []float32, rows, cols, batch, start, end int) {
	return nil
}
