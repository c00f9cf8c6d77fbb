//go:build !amd64 || purego

package kernels

func dotKRowsFast(f *kFormat, out []float32, x *Q8KInput, w []byte, rb int) {
	kRowsGeneric(f, out, x, w, rb)
}

func dotLegacyRowsFast(f *legacyFormat, out []float32, x *Q8Input, w []byte, rb int) {
	legacyRowsGeneric(f, out, x, w, rb)
}

func quantizeQ8K(v *Q8KInput, x []float32) { quantizeQ8KGeneric(v, x) }
