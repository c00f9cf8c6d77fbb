//go:build !amd64 || purego

package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// fastRowSets returns no assembly row dots: this build has none.
func fastRowSets() ([]rowDotSet, string) {
	return nil, "built with -tags purego or for a GOARCH other than amd64: there are no assembly row dots, only the portable Go"
}

// TestRowFastPathRuns says that the row dot tests only compared the portable path with
// itself in this build.
func TestRowFastPathRuns(t *testing.T) {
	assert.Equal(t, "generic", RowDotImplementation())
	_, reason := fastRowSets()
	t.Skip(reason)
}
