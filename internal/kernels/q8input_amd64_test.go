//go:build amd64 && !purego

package kernels

// q8Paths lists the code paths of DotQ8_0Q8Rows this CPU can run: the one dispatched, and
// on CPUs with AVX-512 VNNI also the AVX2 kernel (forced by switching VNNI off), so that
// both assembly kernels are held to the portable Go here.
func q8Paths() []q8Path {
	paths := []q8Path{{"dispatched", func() func() { return func() {} }}}
	if useQ8VNNI && useRowAVX2 {
		paths = append(paths, q8Path{"avx2", func() func() {
			useQ8VNNI = false
			return func() { useQ8VNNI = startQ8VNNI }
		}})
	}
	return paths
}
