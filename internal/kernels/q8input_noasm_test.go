//go:build !amd64 || purego

package kernels

// q8Paths lists the code paths of DotQ8_0Q8Rows: in this build only the portable Go.
func q8Paths() []q8Path {
	return []q8Path{{"dispatched", func() func() { return func() {} }}}
}
