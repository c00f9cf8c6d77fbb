//go:build !amd64 || purego

package kernels

// fastRowSets returns no assembly row dots: this build has none.
func fastRowSets() ([]rowDotSet, string) {
	return nil, "built with -tags purego or for a GOARCH other than amd64: there are no assembly row dots, only the portable Go"
}
